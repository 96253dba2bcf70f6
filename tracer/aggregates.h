/* Aggregated calls (the aggregate and threshold capture modes): the BPF side counts calls per
 * class (bpf/iommutrace.h, struct it_agg_key) in cumulative counters it never resets: per CPU in
 * the slot that user space published for the class, else in a per-CPU hash. This reads the hash
 * and the slots, sums the CPUs and both places, and stores what grew since the previous read as
 * map_aggregates rows (one per class that changed, stamped with the read's time), through its
 * own prepared statement on the recorder's connection; then it publishes the classes it read
 * into their free slots, so that from then on the programs count them there. */
#ifndef IOMMUTRACE_AGGREGATES_H
#define IOMMUTRACE_AGGREGATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "tracer/bpf_capture.h"

struct agg_class {
	struct it_agg_key key;
	struct it_agg_value value; /* summed over the CPUs */
};

/* One read of the hash, sorted by key (memcmp order). */
struct agg_snapshot {
	struct agg_class *classes;
	size_t count;
};

/**
 * agg_snapshot_read() - Read the hash and the published slots of @maps into @snap (replacing its
 * contents).
 * @published: the slots to read, IT_AGG_SLOTS of them (agg_slots_publish()'s taken); NULL: every
 *             slot whose key is ready (IT_AGG_SLOTS key reads)
 *
 * Return: 0 or a negative errno.
 */
int agg_snapshot_read(const struct agg_maps *maps, const bool *published,
		      struct agg_snapshot *snap);
/**
 * agg_snapshot_sort() - Sort @snap's classes by key and make one of those with equal keys, their
 * values summed (a class counted in the hash before it had a slot, and in the slot since).
 *
 * agg_snapshot_read() does it, tests building snapshots by hand too.
 */
void agg_snapshot_sort(struct agg_snapshot *snap);
/**
 * agg_slots_publish() - Publish each class of @snap whose slot (it_agg_slot_of) is free into it,
 * in the slot-keys map of @maps.
 * @taken: IT_AGG_SLOTS flags saying which slots this capture has published (the caller's, all
 *         false at load); updated
 *
 * Return: the number published, or a negative errno.
 */
int agg_slots_publish(const struct agg_maps *maps, const struct agg_snapshot *snap, bool *taken);
/**
 * agg_snapshot_delta() - Call @fn with the growth of each class from @prev to @cur, for the
 * classes whose count, bytes or pages grew.
 * @prev: sorted; a class it lacks grew from zero
 * @cur: sorted
 *
 * Return: 0, or @fn's nonzero.
 */
int agg_snapshot_delta(const struct agg_snapshot *prev, const struct agg_snapshot *cur,
		       int (*fn)(const struct agg_class *growth, void *ctx), void *ctx);
void agg_snapshot_free(struct agg_snapshot *snap);

/**
 * capture_mode_name() - The name of @mode: "per-event", "aggregate", "threshold".
 */
const char *capture_mode_name(enum capture_mode mode);

struct aggregates;

/**
 * capture_settings_store() - Store how session @sid was captured (its capture_settings row): mode,
 * threshold (threshold mode only), flush interval and hash size (modes that aggregate only).
 *
 * Return: 0 or -1 (logged).
 */
int capture_settings_store(sqlite3 *db, int64_t sid, const struct bpf_capture_opts *opts,
			   uint64_t flush_interval_ns);

/**
 * aggregates_new() - Prepare the flushes of the counting maps into session @sid.
 *
 * Return: the aggregates, or NULL on failure (logged).
 */
struct aggregates *aggregates_new(sqlite3 *db, int64_t sid, const struct agg_maps *maps);
/**
 * aggregates_flush() - Read the counts, store what grew since the last flush, and publish the
 * new classes' slots.
 * @flush_ns: the rows' stamp (CLOCK_MONOTONIC)
 *
 * A failure to publish is logged once and leaves the classes counted in the hash.
 *
 * Return: the number of rows stored, or -1 (logged).
 */
long aggregates_flush(struct aggregates *a, uint64_t flush_ns);
/**
 * aggregates_calls() - The calls counted up to the last flush, over all classes.
 */
uint64_t aggregates_calls(const struct aggregates *a);
void aggregates_free(struct aggregates *a);

#endif
