/* The hash table (common/hash_table.h): insert and find, growth, removal inside and across the
 * end of a run of taken slots, collisions of whole hashes, keys added several times kept in
 * order, the bound on entries, entries that never move in a table made at its bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "common/hash_table.h"

struct item {
	uint64_t key;
	uint64_t value;
};

typedef uint64_t hash_fn(uint64_t key);

static uint64_t mixed(uint64_t key)
{
	return hash_table_hash_u64(key);
}

/* Every key the same hash: only equality tells them apart. */
static uint64_t same(uint64_t key)
{
	(void)key;
	return 0x1234567800000000ull;
}

/* The key's high 32 bits are its tag, so a test places it: in a table of 8 slots, tag >> 29 is
 * its home slot. */
static uint64_t placed(uint64_t key)
{
	return key & 0xffffffff00000000ull;
}

/* A key of home slot home (of 8) and number n */
static uint64_t at_home(uint32_t home, uint32_t n)
{
	return (uint64_t)(home << 29 | (n + 1)) << 32 | n;
}

static struct item *put(struct hash_table *t, hash_fn *hash, uint64_t key, uint64_t value)
{
	void *e = NULL;

	assert_int_equal(hash_table_insert(t, hash(key), &key, &e), HASH_TABLE_ADDED);
	((struct item *)e)->value = value;
	return e;
}

static struct item *find(const struct hash_table *t, hash_fn *hash, uint64_t key)
{
	return hash_table_find(t, hash(key), &key);
}

static uint64_t value_of(const struct hash_table *t, hash_fn *hash, uint64_t key)
{
	const struct item *e = find(t, hash, key);

	return e ? e->value : UINT64_MAX;
}

static void insert_find_update(void **state)
{
	struct hash_table t;
	struct item *e;
	void *again;
	uint64_t key;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL,
					 HASH_TABLE_MAX_ENTRIES, 0),
			 0);
	/* key 0 hashes to 0, which is no tag: it still has a slot of its own */
	for (uint64_t k = 0; k < 1000; k++)
		put(&t, mixed, k * 4096, k + 7);
	assert_int_equal(hash_table_count(&t), 1000);
	for (uint64_t k = 0; k < 1000; k++)
		assert_int_equal(value_of(&t, mixed, k * 4096), k + 7);
	assert_int_equal(value_of(&t, mixed, 4095), UINT64_MAX);
	/* a key that is there is found, not added: its entry as it was */
	key = 4096;
	e = find(&t, mixed, key);
	assert_int_equal(hash_table_insert(&t, mixed(key), &key, &again), HASH_TABLE_FOUND);
	assert_ptr_equal(again, e);
	assert_int_equal(e->value, 8);
	/* an added entry is zeroed beyond its key */
	key = 1;
	assert_int_equal(hash_table_insert(&t, mixed(key), &key, &again), HASH_TABLE_ADDED);
	assert_int_equal(((struct item *)again)->key, 1);
	assert_int_equal(((struct item *)again)->value, 0);
	assert_int_equal(hash_table_count(&t), 1001);
	hash_table_free(&t);
}

/* From 8 slots to 2048: each growth keeps every entry and its value. */
static void growth_keeps_entries(void **state)
{
	struct hash_table t;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 5000, 6),
			 0);
	assert_int_equal(t.slots, 8);
	for (uint64_t k = 1; k <= 1500; k++) {
		put(&t, mixed, k, k * 3);
		if (k % 100 == 0)
			for (uint64_t j = 1; j <= k; j++)
				assert_int_equal(value_of(&t, mixed, j), j * 3);
	}
	/* three quarters full at most */
	assert_int_equal(t.slots, 2048);
	assert_int_equal(hash_table_count(&t), 1500);
	hash_table_free(&t);
}

/* Keys whose whole hashes are equal: each found by equality, removals in the middle of the run
 * leave the rest found. */
static void equal_hashes(void **state)
{
	struct hash_table t;
	void *e;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 100, 0),
			 0);
	for (uint64_t k = 0; k < 50; k++)
		put(&t, same, k, 100 + k);
	for (uint64_t k = 0; k < 50; k += 3)
		hash_table_remove(&t, find(&t, same, k));
	for (uint64_t k = 0; k < 50; k++)
		assert_int_equal(value_of(&t, same, k), k % 3 ? 100 + k : UINT64_MAX);
	assert_int_equal(hash_table_count(&t), 33);
	/* a new entry in a slot another entry left: zeroed beyond its key all the same */
	assert_int_equal(hash_table_insert(&t, same(1000), &(uint64_t){ 1000 }, &e),
			 HASH_TABLE_ADDED);
	assert_int_equal(((struct item *)e)->value, 0);
	hash_table_free(&t);
}

/* A run of taken slots across the end of the array (homes 6 and 7 in 8 slots): removing from
 * it moves back only the entries that may sit in the hole, across the end too. */
static void removal_across_the_end(void **state)
{
	uint64_t a = at_home(6, 0), b = at_home(6, 1), c = at_home(7, 2), d = at_home(1, 3);
	struct hash_table t;
	struct item *e;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 6, 6), 0);
	put(&t, placed, a, 1); /* slot 6 */
	put(&t, placed, b, 2); /* slot 7 */
	put(&t, placed, c, 3); /* slot 0 */
	put(&t, placed, d, 4); /* slot 1, its home */
	assert_ptr_equal(find(&t, placed, c), t.entries);
	/* b out: c moves back to 7 across the end; d stays at its home */
	hash_table_remove(&t, find(&t, placed, b));
	e = find(&t, placed, c);
	assert_ptr_equal(e, t.entries + 7 * sizeof(struct item));
	assert_ptr_equal(find(&t, placed, d), t.entries + 1 * sizeof(struct item));
	assert_int_equal(value_of(&t, placed, a), 1);
	assert_int_equal(value_of(&t, placed, b), UINT64_MAX);
	assert_int_equal(value_of(&t, placed, c), 3);
	assert_int_equal(value_of(&t, placed, d), 4);
	/* a out: c (home 7) may not move to 6 */
	hash_table_remove(&t, find(&t, placed, a));
	assert_ptr_equal(find(&t, placed, c), e);
	assert_int_equal(hash_table_count(&t), 2);
	hash_table_free(&t);
}

/* The entry of the key whose value is value, found among all. */
static struct item *with_value(const struct hash_table *t, uint64_t value)
{
	struct item *e;
	size_t pos = 0;

	while ((e = hash_table_next(t, &pos)) && e->value != value)
		;
	return e;
}

/* The values of key's entries, the last added first, each taken out, into out; how many. */
static size_t take_from_last(struct hash_table *t, uint64_t key, uint64_t *out, size_t max)
{
	struct item *e;
	size_t n = 0;

	while (n < max && (e = hash_table_find_last(t, placed(key), &key))) {
		out[n++] = e->value;
		hash_table_remove(t, e);
	}
	return n;
}

/* One key added five times, its run across the end of the array: the first and the last added
 * found, the order kept after a removal in the middle and after the table grew. */
static void added_keys_keep_their_order(void **state)
{
	uint64_t key = at_home(6, 0), v[8];
	struct hash_table t;
	void *e;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 100, 6),
			 0);
	for (uint64_t i = 0; i < 5; i++) {
		assert_int_equal(hash_table_add(&t, placed(key), &key, &e), HASH_TABLE_ADDED);
		((struct item *)e)->value = i;
	}
	assert_int_equal(find(&t, placed, key)->value, 0);
	assert_int_equal(((struct item *)hash_table_find_last(&t, placed(key), &key))->value, 4);
	assert_null(hash_table_find_last(&t, placed(at_home(6, 1)), &(uint64_t){ at_home(6, 1) }));
	/* the middle one out, then the 7th entry grows the table to 16 slots */
	hash_table_remove(&t, with_value(&t, 2));
	put(&t, placed, at_home(3, 9), 9);
	put(&t, placed, at_home(3, 10), 10);
	assert_int_equal(t.slots, 8);
	put(&t, placed, at_home(3, 11), 11);
	assert_int_equal(t.slots, 16);
	/* insert finds the first of them */
	assert_int_equal(hash_table_insert(&t, placed(key), &key, &e), HASH_TABLE_FOUND);
	assert_int_equal(((struct item *)e)->value, 0);
	assert_int_equal(take_from_last(&t, key, v, 8), 4);
	assert_int_equal(v[0], 4);
	assert_int_equal(v[1], 3);
	assert_int_equal(v[2], 1);
	assert_int_equal(v[3], 0);
	assert_int_equal(hash_table_count(&t), 3);
	hash_table_free(&t);
}

/* No more than max_entries: a new key is refused, one that is there still found; a removal makes
 * room. A table made at its bound never grows, so its entries never move. */
static void bound(void **state)
{
	uint64_t absent = 500, present = 5;
	struct hash_table t;
	struct item *first;
	void *e = &t;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 192, 192),
			 0);
	assert_int_equal(t.slots, 256);
	first = put(&t, mixed, 0, 42);
	for (uint64_t k = 1; k < 192; k++)
		put(&t, mixed, k, k);
	assert_int_equal(t.slots, 256);
	assert_ptr_equal(find(&t, mixed, 0), first);
	assert_int_equal(first->value, 42);
	assert_int_equal(hash_table_insert(&t, mixed(absent), &absent, &e), HASH_TABLE_FULL);
	assert_null(e);
	assert_int_equal(hash_table_add(&t, mixed(present), &present, &e), HASH_TABLE_FULL);
	assert_int_equal(hash_table_insert(&t, mixed(present), &present, &e), HASH_TABLE_FOUND);
	assert_int_equal(hash_table_count(&t), 192);
	hash_table_remove(&t, e);
	assert_int_equal(hash_table_insert(&t, mixed(absent), &absent, &e), HASH_TABLE_ADDED);
	hash_table_free(&t);
	/* a bound below the initial size: made for the bound */
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 7, 1000),
			 0);
	assert_int_equal(t.slots, 16);
	hash_table_free(&t);
}

/* Every entry visited once; cleared, nothing is found and the table fills again. */
static void visit_and_clear(void **state)
{
	struct hash_table t;
	struct item *e;
	uint64_t sum = 0, n = 0;
	size_t pos = 0;

	(void)state;
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), NULL, 1000, 0),
			 0);
	for (uint64_t k = 1; k <= 100; k++)
		put(&t, mixed, k, k);
	while ((e = hash_table_next(&t, &pos))) {
		sum += e->value;
		n++;
	}
	assert_int_equal(n, 100);
	assert_int_equal(sum, 5050);
	hash_table_clear(&t);
	assert_int_equal(hash_table_count(&t), 0);
	assert_null(find(&t, mixed, 50));
	pos = 0;
	assert_null(hash_table_next(&t, &pos));
	put(&t, mixed, 50, 5);
	assert_int_equal(value_of(&t, mixed, 50), 5);
	hash_table_free(&t);
}

/* Equal when the keys' low bytes are: the user's equality is the one asked. */
static bool low_byte_equal(const void *entry, const void *key)
{
	return (((const struct item *)entry)->key & 0xff) == (*(const uint64_t *)key & 0xff);
}

/* Sizes out of range are refused; keys of three words, of two (compared inline) and the user's
 * equality, which replaces the comparison of bytes. */
static void init_and_equality(void **state)
{
	struct wide {
		uint64_t key[3];
		uint64_t value;
	} * w;
	uint64_t key[3] = { 1, 2, 3 }, other[3] = { 1, 2, 4 };
	struct hash_table t;
	void *e;

	(void)state;
	assert_int_equal(hash_table_init(&t, 8, 8, NULL, 0, 0), -1);
	assert_int_equal(hash_table_init(&t, 8, 8, NULL, HASH_TABLE_MAX_ENTRIES + 1, 0), -1);
	assert_int_equal(hash_table_init(&t, 4, 8, NULL, 10, 0), -1);
	assert_int_equal(hash_table_init(&t, 8, 0, NULL, 10, 0), -1);
	hash_table_free(&t);
	assert_int_equal(hash_table_init(&t, sizeof(struct wide), sizeof(key), NULL, 10, 0), 0);
	assert_int_equal(hash_table_insert(&t, same(0), key, &e), HASH_TABLE_ADDED);
	w = e;
	w->value = 9;
	assert_int_equal(hash_table_insert(&t, same(0), other, &e), HASH_TABLE_ADDED);
	assert_ptr_equal(hash_table_find(&t, same(0), key), w);
	assert_int_equal(hash_table_count(&t), 2);
	hash_table_free(&t);
	/* a key of two words: both compared */
	assert_int_equal(hash_table_init(&t, sizeof(struct wide), 2 * sizeof(uint64_t), NULL, 10,
					 0),
			 0);
	assert_int_equal(hash_table_insert(&t, same(0), key, &e), HASH_TABLE_ADDED);
	assert_int_equal(hash_table_insert(&t, same(0), (uint64_t[2]){ 1, 5 }, &e),
			 HASH_TABLE_ADDED);
	assert_int_equal(hash_table_insert(&t, same(0), (uint64_t[2]){ 7, 2 }, &e),
			 HASH_TABLE_ADDED);
	assert_int_equal(hash_table_insert(&t, same(0), (uint64_t[2]){ 1, 2 }, &e),
			 HASH_TABLE_FOUND);
	assert_ptr_equal(hash_table_find(&t, same(0), key), e);
	assert_int_equal(hash_table_count(&t), 3);
	hash_table_free(&t);
	assert_int_equal(hash_table_init(&t, sizeof(struct item), sizeof(uint64_t), low_byte_equal,
					 10, 0),
			 0);
	put(&t, same, 0x103, 30);
	assert_int_equal(value_of(&t, same, 0x203), 30);
	assert_int_equal(value_of(&t, same, 0x104), UINT64_MAX);
	hash_table_free(&t);
	/* hashes of bytes: equal bytes, equal hashes; one bit apart, other top bits */
	assert_true(hash_table_hash_bytes("abcd", 4) == hash_table_hash_bytes("abcd", 4));
	assert_true(hash_table_hash_bytes("abcd", 4) >> 32 !=
		    hash_table_hash_bytes("abce", 4) >> 32);
	assert_true(hash_table_hash_u64(1) >> 32 != hash_table_hash_u64(2) >> 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(insert_find_update),
		cmocka_unit_test(growth_keeps_entries),
		cmocka_unit_test(equal_hashes),
		cmocka_unit_test(removal_across_the_end),
		cmocka_unit_test(added_keys_keep_their_order),
		cmocka_unit_test(bound),
		cmocka_unit_test(visit_and_clear),
		cmocka_unit_test(init_and_equality),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
