/* Aggregated calls (the aggregate and threshold capture modes): the BPF side counts calls per
 * class (bpf/iommutrace.h, struct it_agg_key) in a per-CPU hash of cumulative counters it never
 * deletes. This reads the whole hash, sums the CPUs, and stores what grew since the previous read
 * as map_aggregates rows (one per class that changed, stamped with the read's time), through its
 * own prepared statement on the recorder's connection. */
#ifndef IOMMUTRACE_AGGREGATES_H
#define IOMMUTRACE_AGGREGATES_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "bpf_capture.h"

struct agg_class {
	struct it_agg_key key;
	struct it_agg_value value;	/* summed over the CPUs */
};

/* One read of the hash, sorted by key (memcmp order). */
struct agg_snapshot {
	struct agg_class *classes;
	size_t count;
};

/* Reads the aggregates hash map_fd into snap (replacing its contents). 0 or a negative errno. */
int agg_snapshot_read(int map_fd, struct agg_snapshot *snap);
/* Sorts snap's classes by key; agg_snapshot_read does it, tests building snapshots by hand too. */
void agg_snapshot_sort(struct agg_snapshot *snap);
/* Calls fn with the growth of each class from prev to cur (both sorted; a class prev lacks grew
 * from zero), for the classes whose count, bytes or pages grew. Returns 0, or fn's nonzero. */
int agg_snapshot_delta(const struct agg_snapshot *prev, const struct agg_snapshot *cur,
		       int (*fn)(const struct agg_class *growth, void *ctx), void *ctx);
void agg_snapshot_free(struct agg_snapshot *snap);

/* "per-event", "aggregate", "threshold" */
const char *capture_mode_name(enum capture_mode mode);

struct aggregates;

/* Stores how session sid was captured (its capture_settings row): mode, threshold (threshold
 * mode only), flush interval and hash size (modes that aggregate only). 0 or -1 (logged). */
int capture_settings_store(sqlite3 *db, int64_t sid, const struct bpf_capture_opts *opts,
			   uint64_t flush_interval_ns);

/* Prepares the flushes of the aggregates hash map_fd into session sid. NULL on failure
 * (logged). */
struct aggregates *aggregates_new(sqlite3 *db, int64_t sid, int map_fd);
/* Reads the hash and stores what grew since the last flush, stamped flush_ns (CLOCK_MONOTONIC).
 * Returns the number of rows stored, or -1 (logged). */
long aggregates_flush(struct aggregates *a, uint64_t flush_ns);
/* The calls counted up to the last flush, over all classes. */
uint64_t aggregates_calls(const struct aggregates *a);
void aggregates_free(struct aggregates *a);

#endif
