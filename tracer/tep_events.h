/* The ftrace IOMMU events (iommu:*, intel_iommu:*) and their conversion, from a libtraceevent
 * record, into struct it_event: shared by the trace.dat import, the ftrace text import (the event
 * table) and the tracefs live capture.
 *
 * Header of a converted record: ts_ns = the record's timestamp in the source's trace clock, cpu,
 * tid = common_pid, pid = tid (ftrace records carry no thread group id; callers that know it
 * overwrite it), comm from the handle's saved cmdlines ("<...>" when unknown), probe_id = 0,
 * flags = 0. Domain pointers are unknown to ftrace: 0. Attach events have group_id -1. Fields the
 * it_event has no room for are dropped: io_page_fault's driver, qi_submit's IOMMU name,
 * cache_tag_flush's IOMMU name, cache tag type and PASID. */
#ifndef IOMMUTRACE_TEP_EVENTS_H
#define IOMMUTRACE_TEP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <event-parse.h>
#include "bpf/iommutrace.h"

struct ftrace_iommu_event {
	const char *system;
	const char *name;
	uint32_t kind; /* enum it_event_kind */
	bool np; /* cache_tag_flush_range_np */
};

/* Every ftrace event we convert, in the order of enum it_tracepoint (bpf/probe_slots.h). */
extern const struct ftrace_iommu_event ftrace_iommu_events[];
extern const size_t ftrace_iommu_event_count;

/**
 * ftrace_iommu_event_find() - The table entry of @system:@name.
 * @system: NULL: any system, as ftrace text names events without theirs
 * @name: need not be NUL-terminated: @namelen bytes are compared
 *
 * Return: the entry, or NULL.
 */
const struct ftrace_iommu_event *ftrace_iommu_event_find(const char *system, const char *name,
							 size_t namelen);

/* What an import or capture saw. */
struct ftrace_stats {
	uint64_t events[IT_EV_KIND_MAX]; /* converted, per enum it_event_kind */
	uint64_t skipped; /* well-formed events that are not IOMMU ones */
	uint64_t malformed; /* lines or records that could not be decoded */
	uint64_t lost; /* events the source says were lost */
};

uint64_t ftrace_stats_total(const struct ftrace_stats *st);

/**
 * struct ftrace_sink - Where the importers deliver.
 * @event: a non-zero return stops the import, which then fails
 * @loss: as @event; @reason names the counter the loss came from (losses.reason)
 * @ctx: passed to both
 */
struct ftrace_sink {
	int (*event)(const struct it_event *e, void *ctx);
	int (*loss)(uint32_t cpu, uint64_t lost, const char *reason, void *ctx);
	void *ctx;
};

/**
 * ftrace_copy_name() - Copy at most @srclen bytes of @src, stopping at a NUL, into @dst as a
 * NUL-terminated string truncated to @dstlen - 1 bytes.
 */
void ftrace_copy_name(char *dst, size_t dstlen, const char *src, size_t srclen);

/* The IOMMU events one tep handle knows, looked up once. */
struct tep_events;

/**
 * tep_events_new() - Look up the IOMMU events @tep knows.
 *
 * An IOMMU event present in the handle but lacking a field we read is kept: its records convert
 * as malformed (and a warning says which field).
 *
 * Return: the events, or NULL only when out of memory.
 */
struct tep_events *tep_events_new(struct tep_handle *tep);
/**
 * tep_events_convert() - Convert @rec into *@out.
 *
 * Return: 1: *@out holds the record; 0: the record is not an IOMMU event; -1: it is one, but its
 * fields lie outside the record or are missing (malformed).
 */
int tep_events_convert(const struct tep_events *te, struct tep_record *rec, struct it_event *out);
/**
 * tep_events_known() - How many of the table's events the handle has.
 */
size_t tep_events_known(const struct tep_events *te);
void tep_events_free(struct tep_events *te);

#endif
