/* The one hash table of the user-space code: fixed-size entries in one array, open addressing with
 * linear probing, the key and its hash and equality given by the user.
 *
 * A key's hash is given to each call that looks the key up, the same for equal keys every time:
 * computed where it is used, it costs no call through a pointer. Its top 32 bits pick the key's
 * slot and tell keys apart before equality is asked, so they must depend on every bit of the
 * key: hash_table_hash_u64() and hash_table_hash_bytes() give such hashes. */
#ifndef IOMMUTRACE_HASH_TABLE_H
#define IOMMUTRACE_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The most entries a table can be asked to hold. */
#define HASH_TABLE_MAX_ENTRIES (1u << 30)

/* Whether entry (which starts with its key) holds key. */
typedef bool hash_table_equal_fn(const void *entry, const void *key);

/**
 * struct hash_table - entries of entry_size bytes, each starting with its key (key_size bytes)
 *
 * Embedded in its user's structure; its fields are read and written through the functions below
 * only. Entries sit in one array of a power-of-two number of slots, at most three quarters full,
 * beside an array of 4-byte tags (the hash's top bits) that probing reads, so that a lookup
 * touches a few bytes of tags and the one entry it finds.
 *
 * Entries move when the table grows (an insert or add beyond three quarters of the slots) and
 * when an entry is removed or the table cleared: a pointer to an entry is good until the next
 * insert, add, remove or clear. A table made with @initial >= @max_entries never grows, so
 * where nothing is removed its entries never move.
 *
 * Memory: (entry_size + 4) bytes a slot, and a table never has more slots than the smallest
 * power of two that holds max_entries at three quarters: fewer than 2.7 x max_entries (and 8 at
 * least).
 */
struct hash_table {
	hash_table_equal_fn *equal;
	unsigned char *entries;
	uint32_t *tags; /* 0: the slot is free */
	size_t entry_size, key_size;
	uint32_t slots, count, max_entries;
	unsigned shift; /* 32 - log2(slots): a tag's home slot is tag >> shift */
};

/* What hash_table_insert and hash_table_add did. */
enum hash_table_put {
	HASH_TABLE_NOMEM = -1, /* out of memory: nothing changed */
	HASH_TABLE_FOUND = 0, /* the key was there: its entry */
	HASH_TABLE_ADDED = 1, /* a new entry: its key copied in, the rest zeroed */
	HASH_TABLE_FULL = 2, /* max_entries held already: nothing added */
};

/**
 * hash_table_init() - Make @t an empty table.
 * @entry_size:  bytes of an entry, at least key_size
 * @key_size:    bytes of the key at the start of each entry
 * @equal:       whether an entry holds a key; NULL compares the key_size bytes, for keys with no
 *               padding or with their padding zeroed
 * @max_entries: the most entries it will hold (1 to HASH_TABLE_MAX_ENTRIES); inserts beyond are
 *               refused with HASH_TABLE_FULL
 * @initial:     entries it holds before it first grows (it is made for at least 6, and for no
 *               more than max_entries)
 *
 * Return: 0, or -1 when out of memory or the sizes are out of range (t is then empty and
 * hash_table_free() may still be called).
 */
int hash_table_init(struct hash_table *t, size_t entry_size, size_t key_size,
		    hash_table_equal_fn *equal, uint32_t max_entries, uint32_t initial);
/**
 * hash_table_free() - Free what @t holds; @t may then be initialized again.
 */
void hash_table_free(struct hash_table *t);

/* The lookup, inline: the event writer looks keys up several times a record. What follows up to
 * hash_table_find() is the lookup's inside, for it and hash_table.c only. */

/* A hash's tag: its top 32 bits, never 0 (0 marks a free slot). */
static inline uint32_t hash_table_tag(uint64_t hash)
{
	uint32_t tag = (uint32_t)(hash >> 32);

	return tag ? tag : 1;
}

static inline void *hash_table_entry(const struct hash_table *t, uint32_t slot)
{
	return t->entries + (size_t)slot * t->entry_size;
}

static inline bool hash_table_key_equal(const struct hash_table *t, const void *entry,
					const void *key)
{
	const unsigned char *e = entry, *k = key;
	uint64_t e0, k0, e1, k1;
	size_t last = t->key_size - sizeof(e0);

	if (t->equal)
		return t->equal(entry, key);
	if (t->key_size != sizeof(e0) && t->key_size != 2 * sizeof(e0))
		return !memcmp(entry, key, t->key_size);
	/* a key of one or two words compared inline (its first and last word): a call to memcmp
	 * costs more than the rest of the lookup */
	memcpy(&e0, e, sizeof(e0));
	memcpy(&k0, k, sizeof(k0));
	memcpy(&e1, e + last, sizeof(e1));
	memcpy(&k1, k + last, sizeof(k1));
	return e0 == k0 && e1 == k1;
}

/* The first slot from slot on, along the probe sequence of key (of tag tag), that holds key; or
 * the free slot that ends the sequence. */
static inline uint32_t hash_table_probe(const struct hash_table *t, uint32_t tag, const void *key,
					uint32_t slot)
{
	uint32_t mask = t->slots - 1;

	while (t->tags[slot] &&
	       (t->tags[slot] != tag || !hash_table_key_equal(t, hash_table_entry(t, slot), key)))
		slot = (slot + 1) & mask;
	return slot;
}

/**
 * hash_table_find() - The entry of @key, whose hash is @hash.
 *
 * Return: the entry, the one added first where @key was added several times (hash_table_add),
 * or NULL.
 */
static inline void *hash_table_find(const struct hash_table *t, uint64_t hash, const void *key)
{
	uint32_t tag = hash_table_tag(hash), slot = hash_table_probe(t, tag, key, tag >> t->shift);

	return t->tags[slot] ? hash_table_entry(t, slot) : NULL;
}

/**
 * hash_table_find_last() - The entry of @key added last (hash_table_add), or NULL.
 */
void *hash_table_find_last(const struct hash_table *t, uint64_t hash, const void *key);

/**
 * hash_table_insert() - The entry of @key, added when absent.
 * @entry: set to the entry found or added, NULL otherwise
 *
 * Return: HASH_TABLE_FOUND, HASH_TABLE_ADDED, HASH_TABLE_FULL (a key already there is still
 * FOUND) or HASH_TABLE_NOMEM.
 */
enum hash_table_put hash_table_insert(struct hash_table *t, uint64_t hash, const void *key,
				      void **entry);
/**
 * hash_table_add() - A new entry for @key, even when @key is there already.
 *
 * Entries of one key keep the order they were added in, whatever is removed in between and
 * however the table grows: hash_table_find() finds the first, hash_table_find_last() the last.
 *
 * Return: as hash_table_insert(), never HASH_TABLE_FOUND.
 */
enum hash_table_put hash_table_add(struct hash_table *t, uint64_t hash, const void *key,
				   void **entry);
/**
 * hash_table_remove() - Take out @entry (as a lookup or hash_table_next() gave it, since when
 * no entry moved).
 */
void hash_table_remove(struct hash_table *t, void *entry);
/**
 * hash_table_clear() - Take out every entry; the slots stay allocated.
 */
void hash_table_clear(struct hash_table *t);
/**
 * hash_table_count() - The entries @t holds.
 */
uint32_t hash_table_count(const struct hash_table *t);
/**
 * hash_table_next() - Every entry once, in no particular order.
 * @pos: 0 for the first; moved on by each call
 *
 * Return: the next entry, or NULL after the last.
 */
void *hash_table_next(const struct hash_table *t, size_t *pos);

/**
 * hash_table_hash_u64() - A hash of a 64-bit key: Fibonacci hashing, one multiplication, whose
 * top 32 bits together depend on every bit of @x.
 */
static inline uint64_t hash_table_hash_u64(uint64_t x)
{
	return x * 0x9E3779B97F4A7C15ull;
}

/**
 * hash_table_hash_bytes() - A hash of @n bytes: FNV-1a, then multiplied as
 * hash_table_hash_u64() does, so that its top bits depend on every byte.
 */
uint64_t hash_table_hash_bytes(const void *p, size_t n);

#endif
