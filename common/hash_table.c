/* The hash table (see hash_table.h): linear probing over tags, removal by shifting the entries
 * after a hole back (no tombstones), growth by doubling. */
#include <stdlib.h>
#include <string.h>
#include "common/hash_table.h"

#define MIN_SLOTS 8u

static uint32_t slot_of(const struct hash_table *t, const void *entry)
{
	return (uint32_t)(((const unsigned char *)entry - t->entries) / t->entry_size);
}

/* Slots to hold n entries at three quarters full at most (n <= HASH_TABLE_MAX_ENTRIES). */
static uint32_t slots_for(uint32_t n)
{
	uint32_t slots = MIN_SLOTS;

	while ((uint64_t)slots * 3 / 4 < n)
		slots *= 2;
	return slots;
}

/* Allocates slots empty slots into t (its entries, if any, left to the caller). */
static int alloc_slots(struct hash_table *t, uint32_t slots)
{
	unsigned char *entries = malloc((size_t)slots * t->entry_size);
	uint32_t *tags = calloc(slots, sizeof(*tags));

	if (!entries || !tags) {
		free(entries);
		free(tags);
		return -1;
	}
	t->entries = entries;
	t->tags = tags;
	t->slots = slots;
	t->shift = 32 - (unsigned)__builtin_ctz(slots);
	return 0;
}

int hash_table_init(struct hash_table *t, size_t entry_size, size_t key_size,
		    hash_table_equal_fn *equal, uint32_t max_entries, uint32_t initial)
{
	memset(t, 0, sizeof(*t));
	if (!key_size || entry_size < key_size || !max_entries ||
	    max_entries > HASH_TABLE_MAX_ENTRIES)
		return -1;
	t->equal = equal;
	t->entry_size = entry_size;
	t->key_size = key_size;
	t->max_entries = max_entries;
	return alloc_slots(t, slots_for(initial < max_entries ? initial : max_entries));
}

void hash_table_free(struct hash_table *t)
{
	free(t->entries);
	free(t->tags);
	t->entries = NULL;
	t->tags = NULL;
	t->slots = t->count = 0;
}

/* Puts a copy of entry, whose tag is tag, into the first free slot of its probe sequence. */
static void place(struct hash_table *t, uint32_t tag, const void *entry)
{
	uint32_t mask = t->slots - 1, slot = tag >> t->shift;

	while (t->tags[slot])
		slot = (slot + 1) & mask;
	t->tags[slot] = tag;
	memcpy(hash_table_entry(t, slot), entry, t->entry_size);
}

/* Doubles the slots. The entries are placed again from the start of a run of taken slots on,
 * so that those of one key keep their order along their probe sequence. */
static int grow(struct hash_table *t)
{
	struct hash_table old = *t;
	uint32_t mask = old.slots - 1, start = 0;

	if (alloc_slots(t, old.slots * 2))
		return -1;
	while (old.tags[start])
		start = (start + 1) & mask; /* at most three quarters are taken: one is free */
	for (uint32_t i = 0; i < old.slots; i++) {
		uint32_t slot = (start + i) & mask;

		if (old.tags[slot])
			place(t, old.tags[slot], hash_table_entry(&old, slot));
	}
	free(old.entries);
	free(old.tags);
	return 0;
}

void *hash_table_find_last(const struct hash_table *t, uint64_t hash, const void *key)
{
	uint32_t tag = hash_table_tag(hash), mask = t->slots - 1;
	uint32_t slot = hash_table_probe(t, tag, key, tag >> t->shift), last = slot;

	while (t->tags[slot]) {
		last = slot;
		slot = hash_table_probe(t, tag, key, (slot + 1) & mask);
	}
	return t->tags[last] ? hash_table_entry(t, last) : NULL;
}

/* Adds key in the free slot that ends its probe sequence (growing first when needed). */
static enum hash_table_put add_at(struct hash_table *t, uint32_t tag, const void *key,
				  uint32_t slot, void **entry)
{
	void *e;

	*entry = NULL;
	if (t->count >= t->max_entries)
		return HASH_TABLE_FULL;
	if ((uint64_t)(t->count + 1) > (uint64_t)t->slots * 3 / 4) {
		if (grow(t))
			return HASH_TABLE_NOMEM;
		slot = tag >> t->shift;
		while (t->tags[slot])
			slot = (slot + 1) & (t->slots - 1);
	}
	e = hash_table_entry(t, slot);
	memcpy(e, key, t->key_size);
	memset((unsigned char *)e + t->key_size, 0, t->entry_size - t->key_size);
	t->tags[slot] = tag;
	t->count++;
	*entry = e;
	return HASH_TABLE_ADDED;
}

enum hash_table_put hash_table_insert(struct hash_table *t, uint64_t hash, const void *key,
				      void **entry)
{
	uint32_t tag = hash_table_tag(hash), slot = hash_table_probe(t, tag, key, tag >> t->shift);

	if (t->tags[slot]) {
		*entry = hash_table_entry(t, slot);
		return HASH_TABLE_FOUND;
	}
	return add_at(t, tag, key, slot, entry);
}

enum hash_table_put hash_table_add(struct hash_table *t, uint64_t hash, const void *key,
				   void **entry)
{
	uint32_t tag = hash_table_tag(hash), mask = t->slots - 1, slot = tag >> t->shift;

	while (t->tags[slot])
		slot = (slot + 1) & mask;
	return add_at(t, tag, key, slot, entry);
}

void hash_table_remove(struct hash_table *t, void *entry)
{
	uint32_t mask = t->slots - 1, hole = slot_of(t, entry), slot = hole;

	/* each entry after the hole that may sit there (its home is not between the hole and it)
	 * moves back into it, and leaves a hole of its own */
	for (slot = (slot + 1) & mask; t->tags[slot]; slot = (slot + 1) & mask) {
		uint32_t home = t->tags[slot] >> t->shift;

		if (((slot - home) & mask) < ((slot - hole) & mask))
			continue;
		t->tags[hole] = t->tags[slot];
		memcpy(hash_table_entry(t, hole), hash_table_entry(t, slot), t->entry_size);
		hole = slot;
	}
	t->tags[hole] = 0;
	t->count--;
}

void hash_table_clear(struct hash_table *t)
{
	memset(t->tags, 0, (size_t)t->slots * sizeof(*t->tags));
	t->count = 0;
}

uint32_t hash_table_count(const struct hash_table *t)
{
	return t->count;
}

void *hash_table_next(const struct hash_table *t, size_t *pos)
{
	while (*pos < t->slots) {
		uint32_t slot = (uint32_t)(*pos)++;

		if (t->tags[slot])
			return hash_table_entry(t, slot);
	}
	return NULL;
}

uint64_t hash_table_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return hash_table_hash_u64(h);
}
