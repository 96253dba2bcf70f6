/* Capture through eBPF: loads the programs the probe plan chose (one skeleton, everything else
 * switched off before load), attaches them, and drains the ring buffer into a callback. The plan
 * records per probe whether it attached and why not. */
#ifndef IOMMUTRACE_BPF_CAPTURE_H
#define IOMMUTRACE_BPF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/iommutrace.h"
#include "tracer/probe_plan.h"

struct bpf_capture;

typedef int (*bpf_capture_event_fn)(const struct it_event *e, void *ctx);

/* What the BPF side sends through the ring buffer and what it counts in the aggregate hash
 * (tracer/aggregates.h). */
enum capture_mode {
	CAPTURE_PER_EVENT =
		IT_MODE_PER_EVENT, /* every map/unmap/driver/invalidation call is a record */
	CAPTURE_AGGREGATE = IT_MODE_AGGREGATE, /* those calls are counted, not recorded */
	CAPTURE_THRESHOLD =
		IT_MODE_THRESHOLD, /* calls of >= threshold_bytes recorded, smaller counted */
};

#define CAPTURE_DEFAULT_THRESHOLD (2ull << 20)
/* classes of call counted at most: domains x ops x size classes x page sizes x alignments seen */
#define CAPTURE_DEFAULT_AGGREGATE_ENTRIES 4096u

struct bpf_capture_opts {
	size_t ringbuf_bytes; /* rounded up to a power of two >= one page; 0: 16 MiB */
	enum capture_mode mode;
	uint64_t threshold_bytes; /* CAPTURE_THRESHOLD only; 0: 2 MiB */
	uint32_t aggregate_entries; /* capacity of the aggregate hash; 0: the default */
	bool replay; /* also load replay_map_unmap (benchmarks; bpf/replay.h) */
};

/**
 * bpf_capture_load() - Open and load the skeleton for @plan with @opts.
 * @plan: must outlive the capture
 * @opts: NULL: per-event, 16 MiB ring buffer
 *
 * Return: the capture, or NULL with one line in @err.
 */
struct bpf_capture *bpf_capture_load(struct probe_plan *plan, const struct bpf_capture_opts *opts,
				     char *err, size_t errlen);
/**
 * bpf_capture_attach() - Attach every loaded program, but the IOMMU core calls whose domain the
 * driver calls give (probe_plan_driver_domains(): only when all those driver probes attached).
 *
 * Each probe is marked attached or not (reason).
 *
 * Return: the number of probes attached.
 */
int bpf_capture_attach(struct bpf_capture *c);
/* Records one bpf_capture_poll delivers at most: a reader whose handlers produce faster than it
 * takes records still gets back to its loop (commits, signals, deadlines) every so many; the
 * ring buffer then fills and the losses say so. */
#define BPF_CAPTURE_POLL_BUDGET 65536

/**
 * bpf_capture_poll() - Deliver the records waiting in the ring buffer, at most
 * BPF_CAPTURE_POLL_BUDGET.
 * @timeout_ms: how long to wait first (0: no wait) for the handlers' wakeup, which comes only
 *              when a sixteenth of the ring buffer waits: fewer records are delivered when the
 *              wait times out, so a reader polls at an interval it can accept as their delay
 * @fn: a negative return stops delivery and is returned; that record counts as consumed
 *
 * Return: the number delivered, or a negative errno (-EINTR on a signal).
 */
int bpf_capture_poll(struct bpf_capture *c, int timeout_ms, bpf_capture_event_fn fn, void *ctx);
/**
 * bpf_capture_epoll_fd() - The epoll fd bpf_capture_poll() waits on (readable when the handlers
 * woke it).
 *
 * Return: the fd, or a negative errno.
 */
int bpf_capture_epoll_fd(struct bpf_capture *c);
/**
 * bpf_capture_detach() - Detach every program (no more records are produced); the ring buffer can
 * still be drained.
 */
void bpf_capture_detach(struct bpf_capture *c);
/**
 * bpf_capture_release_held() - Count the driver calls the threshold mode still holds on each CPU
 * until their map or unmap event (architecture.md, "Capture modes").
 * @uncounted: how many calls stay uncounted
 *
 * That event will not come once the programs are detached. A CPU taken offline during the capture
 * is let go from this one where bpf_map_lookup_percpu_elem (5.19) could be loaded; elsewhere what
 * it holds stays uncounted. Nothing to do in the other modes.
 *
 * Context: call after bpf_capture_detach(), before the last read of the counts.
 * Return: 0 or a negative errno.
 */
int bpf_capture_release_held(struct bpf_capture *c, uint64_t *uncounted);
/**
 * bpf_capture_held_calls() - The driver calls the threshold mode holds on @cpu (any possible CPU,
 * online or not) into *@held.
 *
 * Return: 0 or a negative errno.
 */
int bpf_capture_held_calls(struct bpf_capture *c, int cpu, uint64_t *held);
/**
 * bpf_capture_losses() - Call @fn for each (cpu, event kind) whose records were lost because the
 * ring buffer was full.
 *
 * Return: 0, a negative errno when the counts cannot be read, or @fn's non-zero return.
 */
int bpf_capture_losses(struct bpf_capture *c,
		       int (*fn)(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx), void *ctx);
/**
 * bpf_capture_aggregate_losses() - Call @fn for each (cpu, event kind) whose calls were not
 * counted because the aggregates hash was full (aggregate and threshold modes).
 *
 * Return: as bpf_capture_losses().
 */
int bpf_capture_aggregate_losses(struct bpf_capture *c,
				 int (*fn)(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx),
				 void *ctx);
/* The maps the counting modes count in (tracer/aggregates.h reads them; bpf/iommutrace.h says
 * how the slots front the hash). */
struct agg_maps {
	int hash_fd; /* aggregates: the per-CPU hash of classes */
	int slot_keys_fd; /* agg_slot_keys: the class of each slot, user space's */
	int slot_counts_fd; /* agg_slot_counts: per CPU, the programs' */
};
struct agg_maps bpf_capture_agg_maps(struct bpf_capture *c);
/**
 * bpf_capture_prog_fd() - The fd of a loaded program by name (tests drive raw_tp programs with
 * BPF_PROG_TEST_RUN).
 *
 * Return: the fd, or -1.
 */
int bpf_capture_prog_fd(struct bpf_capture *c, const char *prog_name);
/**
 * bpf_capture_map_fd() - The fd of a map by name (tests seed domain_by_call).
 *
 * Return: the fd, or -1.
 */
int bpf_capture_map_fd(struct bpf_capture *c, const char *map_name);
void bpf_capture_close(struct bpf_capture *c);

#endif
