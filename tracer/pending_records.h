/* Driver records waiting for the iommu:map/unmap event of their call (tracer/event_writer.c):
 * oldest first, and by thread, so that an event finds its thread's records without looking at
 * the others'. A thread is its tid, or for tid 0 (the idle tasks of every CPU) its CPU.
 *
 * At most `limit` records are held (the caller stores the oldest before pushing more); they sit
 * in a ring of twice that many slots, where a record taken out of the middle leaves a gap that
 * the ring closes up when it is full: every operation is O(1) or O(the thread's records),
 * amortized. Memory, allocated at start: about 2 x limit x (sizeof(struct it_event) + 16) bytes,
 * and the threads' chains, 28 bytes a slot of a hash table of 2 x limit slots (up to 4 x limit
 * where limit is no power of two).
 *
 * Slots are numbered; a slot number stays valid until that record is taken out or the next push. */
#ifndef IOMMUTRACE_PENDING_RECORDS_H
#define IOMMUTRACE_PENDING_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/iommutrace.h"

#define PENDING_NONE UINT32_MAX

struct pending_records;

/* NULL when out of memory; limit is at least 1 and below 2^30 */
struct pending_records *pending_records_new(uint32_t limit);
void pending_records_free(struct pending_records *q);
size_t pending_records_count(const struct pending_records *q);
/* Whether another push needs the oldest taken out first */
int pending_records_full(const struct pending_records *q);
/* Appends a copy of e (not full); its slot */
uint32_t pending_records_push(struct pending_records *q, const struct it_event *e);
/* The oldest record's slot, or PENDING_NONE */
uint32_t pending_records_oldest(const struct pending_records *q);
/* The record of h's thread after slot (one of that thread's; PENDING_NONE: its oldest), or
 * PENDING_NONE */
uint32_t pending_records_next_of_thread(struct pending_records *q, const struct it_event_header *h,
					uint32_t slot);
/* The records held of h's thread, in O(1) */
uint32_t pending_records_thread_count(struct pending_records *q, const struct it_event_header *h);
const struct it_event *pending_records_at(const struct pending_records *q, uint32_t slot);
/* Takes the record in slot out */
void pending_records_remove(struct pending_records *q, uint32_t slot);

#endif
