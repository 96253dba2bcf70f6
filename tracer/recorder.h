/* `record`: trace until a duration ends, the command exits, or SIGINT/SIGTERM, and leave a
 * complete database every time. Captures through eBPF, or through tracefs when BPF cannot be used
 * (no privilege, no BTF, or asked for). */
#ifndef IOMMUTRACE_RECORDER_H
#define IOMMUTRACE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "common/db.h"
#include "tracer/bpf_capture.h"

/* How often the counting modes' counts are stored unless recorder_opts.flush_interval_ns says */
#define RECORDER_FLUSH_EVERY_NS (1000 * 1000 * 1000ull)

struct recorder_opts {
	const char *db_path;
	const struct itdb_schema *schema; /* the parts the database is created with */
	bool force; /* replace an existing database */
	bool append; /* add the session to an existing database (or a new one) */
	const char *force_option; /* the option that sets force, for messages; NULL: --force */
	uint64_t duration_ns; /* 0: until the command exits or a signal */
	char **command; /* NULL-terminated argv, or NULL */
	size_t ringbuf_bytes; /* 0: default */
	enum capture_mode mode; /* what the BPF side records and what it counts */
	uint64_t threshold_bytes; /* CAPTURE_THRESHOLD: 0 means 2 MiB */
	uint64_t flush_interval_ns; /* how often aggregates are stored; 0: 1 s */
	bool use_tracefs; /* skip BPF, capture the tracepoints through tracefs */
	/* eBPF on the iommu:* tracepoints alone: no vendor tracepoints (invalidations), no
	 * domain-call or driver probes (no domains, no driver page sizes), the lightest capture,
	 * like trace-cmd -e iommu */
	bool tracepoints_only;
	const char *sysfs_root; /* where the inventory is read ("/" normally) */
	int *command_status; /* if not NULL: the command's exit code, -1 if unknown */
	/* if not NULL: called once the command has ended and its events are written, to store
	 * more of the session (map -o: its parameters and measurements); returns 0 or -1 */
	int (*store_extra)(sqlite3 *db, int64_t session_id, void *ctx);
	void *store_extra_ctx;
	/* if not NULL: run once the session is complete and indexed (the analyzer's finishing
	 * step, analysis_session_finish); returns 0 or -1 */
	int (*finish)(sqlite3 *db, int64_t session_id);
};

/**
 * recorder_run() - Record.
 *
 * Return: an enum it_exit.
 */
int recorder_run(const struct recorder_opts *opts);
/**
 * recorder_list_probes() - Probe the kernel, load and attach what the plan chose, print what
 * attached and why not, detach.
 *
 * Return: an enum it_exit.
 */
int recorder_list_probes(const struct recorder_opts *opts);

#endif
