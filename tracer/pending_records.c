/* Driver records waiting for their event (see pending_records.h): records in slots
 * [first, end) of an array of 2 x limit, oldest first, with gaps where records were taken out;
 * each thread's records chained in that order from a hash bucket. When a push finds no slot at
 * the end, the records move down to the start of the array, closing the gaps. */
#include <stdlib.h>
#include "tracer/pending_records.h"

#define BUCKET_BITS 10
#define BUCKETS (1u << BUCKET_BITS)

struct pending_records {
	struct it_event *ev;
	uint32_t *next, *prev;		/* the thread's chain, by slot */
	uint8_t *used;
	uint32_t head[BUCKETS], tail[BUCKETS], in_bucket[BUCKETS];
	uint32_t cap, limit, first, end;
	size_t count;
};

static uint64_t thread_key(const struct it_event_header *h)
{
	return h->tid ? h->tid : 1ull << 32 | h->cpu;
}

static uint32_t bucket_of(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - BUCKET_BITS));
}

struct pending_records *pending_records_new(uint32_t limit)
{
	struct pending_records *q;

	if (!limit || limit >= 1u << 30)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->limit = limit;
	q->cap = 2 * limit;
	q->ev = calloc(q->cap, sizeof(*q->ev));
	q->next = calloc(q->cap, sizeof(*q->next));
	q->prev = calloc(q->cap, sizeof(*q->prev));
	q->used = calloc(q->cap, 1);
	if (!q->ev || !q->next || !q->prev || !q->used) {
		pending_records_free(q);
		return NULL;
	}
	for (uint32_t b = 0; b < BUCKETS; b++)
		q->head[b] = q->tail[b] = PENDING_NONE;
	return q;
}

void pending_records_free(struct pending_records *q)
{
	if (!q)
		return;
	free(q->ev);
	free(q->next);
	free(q->prev);
	free(q->used);
	free(q);
}

size_t pending_records_count(const struct pending_records *q)
{
	return q->count;
}

int pending_records_full(const struct pending_records *q)
{
	return q->count >= q->limit;
}

static void chain_append(struct pending_records *q, uint32_t slot)
{
	uint32_t b = bucket_of(thread_key(&q->ev[slot].h));

	q->next[slot] = PENDING_NONE;
	q->prev[slot] = q->tail[b];
	if (q->tail[b] == PENDING_NONE)
		q->head[b] = slot;
	else
		q->next[q->tail[b]] = slot;
	q->tail[b] = slot;
	q->in_bucket[b]++;
}

/* Moves the records to slots [0, count), in order, and chains them again. */
static void close_gaps(struct pending_records *q)
{
	uint32_t to = 0;

	for (uint32_t b = 0; b < BUCKETS; b++) {
		q->head[b] = q->tail[b] = PENDING_NONE;
		q->in_bucket[b] = 0;
	}
	for (uint32_t from = q->first; from < q->end; from++) {
		if (!q->used[from])
			continue;
		if (to != from) {
			q->ev[to] = q->ev[from];
			q->used[to] = 1;
			q->used[from] = 0;
		}
		chain_append(q, to++);
	}
	q->first = 0;
	q->end = to;
}

uint32_t pending_records_push(struct pending_records *q, const struct it_event *e)
{
	uint32_t slot;

	if (q->end == q->cap)
		close_gaps(q);
	slot = q->end++;
	q->ev[slot] = *e;
	q->used[slot] = 1;
	q->count++;
	chain_append(q, slot);
	return slot;
}

uint32_t pending_records_oldest(const struct pending_records *q)
{
	return q->count ? q->first : PENDING_NONE;
}

uint32_t pending_records_next_of_thread(const struct pending_records *q,
					const struct it_event_header *h, uint32_t slot)
{
	uint64_t key = thread_key(h);

	slot = slot == PENDING_NONE ? q->head[bucket_of(key)] : q->next[slot];
	while (slot != PENDING_NONE && thread_key(&q->ev[slot].h) != key)
		slot = q->next[slot];
	return slot;
}

uint32_t pending_records_bucket_count(const struct pending_records *q,
				      const struct it_event_header *h)
{
	return q->in_bucket[bucket_of(thread_key(h))];
}

const struct it_event *pending_records_at(const struct pending_records *q, uint32_t slot)
{
	return &q->ev[slot];
}

void pending_records_remove(struct pending_records *q, uint32_t slot)
{
	uint32_t b = bucket_of(thread_key(&q->ev[slot].h));

	if (q->prev[slot] == PENDING_NONE)
		q->head[b] = q->next[slot];
	else
		q->next[q->prev[slot]] = q->next[slot];
	if (q->next[slot] == PENDING_NONE)
		q->tail[b] = q->prev[slot];
	else
		q->prev[q->next[slot]] = q->prev[slot];
	q->in_bucket[b]--;
	q->used[slot] = 0;
	q->count--;
	while (q->first < q->end && !q->used[q->first])
		q->first++;
	if (!q->count)
		q->first = q->end = 0;
}
