/* Driver records waiting for their event (see pending_records.h): records in slots
 * [first, end) of an array of 2 x limit, oldest first, with gaps where records were taken out;
 * each thread's records chained in that order, the chain found by thread in a hash table
 * (common/hash_table.h) and by record in chain_of. When a push finds no slot at the end, the
 * records move down to the start of the array, closing the gaps.
 *
 * A thread stays in the table when its last record is taken out (taking it out would cost each
 * record a removal and an insertion), until the table is full: it is then made again from the
 * records held, of at most limit - 1 threads, so that it fills again only after limit / 2 new
 * threads. The table never grows, so a chain stays where it is until the table is made again. */
#include <stdlib.h>
#include "common/hash_table.h"
#include "tracer/pending_records.h"

/* A thread's chain: its oldest and newest record and how many it has. */
struct chain {
	uint64_t thread;
	uint32_t head, tail, count;
};

struct pending_records {
	struct it_event *ev;
	uint32_t *next, *prev; /* the thread's chain, by slot */
	struct chain **chain_of; /* by slot; NULL: no record there */
	struct hash_table chains; /* struct chain by thread */
	struct chain *last; /* the chain find_chain found last, or NULL */
	uint32_t cap, limit, max_threads, first, end;
	size_t count;
};

static uint64_t thread_key(const struct it_event_header *h)
{
	return h->tid ? h->tid : 1ull << 32 | h->cpu;
}

/* The chain of thread, or NULL when the thread had no records since the table was made. Not
 * inline: in find_chain, its registers would be saved for every lookup, found last or not. */
static __attribute__((noinline)) struct chain *lookup_chain(struct pending_records *q,
							    uint64_t thread)
{
	q->last = hash_table_find(&q->chains, hash_table_hash_u64(thread), &thread);
	return q->last;
}

/* The chain of h's thread, or NULL. The one found last is kept: the lookups of an event are of
 * its own thread. */
static struct chain *find_chain(struct pending_records *q, const struct it_event_header *h)
{
	uint64_t thread = thread_key(h);

	return q->last && q->last->thread == thread ? q->last : lookup_chain(q, thread);
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
	q->max_threads = limit + limit / 2;
	q->ev = calloc(q->cap, sizeof(*q->ev));
	q->next = calloc(q->cap, sizeof(*q->next));
	q->prev = calloc(q->cap, sizeof(*q->prev));
	q->chain_of = calloc(q->cap, sizeof(*q->chain_of));
	if (!q->ev || !q->next || !q->prev || !q->chain_of ||
	    hash_table_init(&q->chains, sizeof(struct chain), sizeof(uint64_t), NULL,
			    q->max_threads, q->max_threads)) {
		pending_records_free(q);
		return NULL;
	}
	return q;
}

void pending_records_free(struct pending_records *q)
{
	if (!q)
		return;
	free(q->ev);
	free(q->next);
	free(q->prev);
	free(q->chain_of);
	hash_table_free(&q->chains);
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

/* Appends slot to its thread's chain (the table has room for its thread). */
static void chain_append(struct pending_records *q, uint32_t slot)
{
	uint64_t thread = thread_key(&q->ev[slot].h);
	struct chain *c = find_chain(q, &q->ev[slot].h);

	if (!c) {
		hash_table_insert(&q->chains, hash_table_hash_u64(thread), &thread, (void **)&c);
		q->last = c;
	}
	q->next[slot] = PENDING_NONE;
	q->prev[slot] = c->count ? c->tail : PENDING_NONE;
	if (c->count)
		q->next[c->tail] = slot;
	else
		c->head = slot;
	c->tail = slot;
	c->count++;
	q->chain_of[slot] = c;
}

/* Makes the table again from the records held, moved to slots [0, count) in order when
 * close_gaps. */
static void chain_again(struct pending_records *q, int close_gaps)
{
	uint32_t to = 0;

	hash_table_clear(&q->chains);
	q->last = NULL;
	for (uint32_t from = q->first; from < q->end; from++) {
		uint32_t slot = close_gaps ? to : from;

		if (!q->chain_of[from])
			continue;
		if (slot != from) {
			q->ev[slot] = q->ev[from];
			q->chain_of[from] = NULL;
		}
		chain_append(q, slot);
		to++;
	}
	if (close_gaps) {
		q->first = 0;
		q->end = to;
	}
}

uint32_t pending_records_push(struct pending_records *q, const struct it_event *e)
{
	uint32_t slot;

	if (q->end == q->cap)
		chain_again(q, 1);
	if (hash_table_count(&q->chains) == q->max_threads && !find_chain(q, &e->h))
		chain_again(q, 0);
	slot = q->end++;
	q->ev[slot] = *e;
	q->count++;
	chain_append(q, slot);
	return slot;
}

uint32_t pending_records_oldest(const struct pending_records *q)
{
	return q->count ? q->first : PENDING_NONE;
}

uint32_t pending_records_next_of_thread(struct pending_records *q, const struct it_event_header *h,
					uint32_t slot)
{
	const struct chain *c;

	if (slot != PENDING_NONE)
		return q->next[slot];
	c = find_chain(q, h);
	return c ? c->head : PENDING_NONE;
}

uint32_t pending_records_thread_count(struct pending_records *q, const struct it_event_header *h)
{
	const struct chain *c = find_chain(q, h);

	return c ? c->count : 0;
}

const struct it_event *pending_records_at(const struct pending_records *q, uint32_t slot)
{
	return &q->ev[slot];
}

void pending_records_remove(struct pending_records *q, uint32_t slot)
{
	struct chain *c = q->chain_of[slot];

	if (q->prev[slot] == PENDING_NONE)
		c->head = q->next[slot];
	else
		q->next[q->prev[slot]] = q->next[slot];
	if (q->next[slot] == PENDING_NONE)
		c->tail = q->prev[slot];
	else
		q->prev[q->next[slot]] = q->prev[slot];
	c->count--;
	q->chain_of[slot] = NULL;
	q->count--;
	while (q->first < q->end && !q->chain_of[q->first])
		q->first++;
	if (!q->count)
		q->first = q->end = 0;
}
