/* Live capture of the IOMMU tracepoints through tracefs, for `record` when BPF cannot be used: a
 * private ftrace instance ("iommutrace-PID") with trace_clock "mono" (timestamps are
 * CLOCK_MONOTONIC, as on the BPF path), the iommu:* events and those intel_iommu:* events this
 * kernel has enabled in it, drained from its per-CPU raw buffers.
 *
 * Records carry tid = common_pid, and pid (thread group) and comm read from /proc/TID/status
 * once per thread, when the thread still exists at drain time (else pid = tid and comm "<...>",
 * "<idle>" for 0); probe_id 0; domains 0 (ftrace does not see them).
 *
 * The instance is removed by tracefs_capture_stop and on every failure of
 * tracefs_capture_start; an instance left behind by a killed process (whose PID no longer runs)
 * is removed by the next tracefs_capture_start. tracefs is mounted if it is not. Needs root (or
 * write access to tracefs). Not thread-safe. */
#ifndef IOMMUTRACE_TRACEFS_CAPTURE_H
#define IOMMUTRACE_TRACEFS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/iommutrace.h"

struct tracefs_capture;
struct probe_plan;

/**
 * tracefs_capture_start() - Create the instance and enable the events.
 *
 * Return: the capture, or NULL with one line in @err, leaving no instance behind.
 */
struct tracefs_capture *tracefs_capture_start(char *err, size_t errlen);
/**
 * tracefs_capture_poll() - Deliver the records waiting in the buffers, oldest first; when there
 * were none, wait up to @timeout_ms for some and deliver those.
 *
 * Return: the number delivered, a non-zero return of @cb (delivery stops there), or a negative
 * errno (-EINTR when a signal interrupted the wait).
 */
int tracefs_capture_poll(struct tracefs_capture *c, int timeout_ms,
			 int (*cb)(const struct it_event *e, void *ctx), void *ctx);
/**
 * tracefs_capture_losses() - Call @cb for each CPU whose buffer lost events (overrun + dropped
 * events of per_cpu/cpuN/stats).
 *
 * Return: 0, -1 when a stats file cannot be read, or @cb's non-zero return.
 */
int tracefs_capture_losses(struct tracefs_capture *c,
			   int (*cb)(uint32_t cpu, uint64_t lost, void *ctx), void *ctx);
/**
 * tracefs_capture_disable() - Disable the events: nothing more is recorded, what is buffered can
 * still be polled.
 */
void tracefs_capture_disable(struct tracefs_capture *c);
/**
 * tracefs_capture_stop() - Disable the events and remove the instance, always; free @c.
 * @c: NULL is accepted
 */
void tracefs_capture_stop(struct tracefs_capture *c);

/**
 * tracefs_capture_instance_name() - The instance's name ("iommutrace-PID").
 */
const char *tracefs_capture_instance_name(const struct tracefs_capture *c);
/**
 * tracefs_capture_has_event() - Whether @target, system:name ("iommu:map"), was enabled.
 */
bool tracefs_capture_has_event(const struct tracefs_capture *c, const char *target);
/**
 * tracefs_capture_skipped() - Records read from the buffers that were not IOMMU events, since the
 * start.
 */
uint64_t tracefs_capture_skipped(const struct tracefs_capture *c);
/**
 * tracefs_capture_malformed() - IOMMU records read from the buffers that could not be decoded,
 * since the start.
 */
uint64_t tracefs_capture_malformed(const struct tracefs_capture *c);
/**
 * tracefs_capture_mark_plan() - Mark each tracepoint probe of @plan attached when its event was
 * enabled, or not attached with the reason.
 */
void tracefs_capture_mark_plan(const struct tracefs_capture *c, struct probe_plan *plan);

#endif
