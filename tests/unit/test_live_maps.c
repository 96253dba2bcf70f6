/* The live mappings of a trace (tracer/live_maps.h): an unmap takes whole mappings and the front
 * of the last, from its IOVA up through mappings that follow each other; two mappings at one
 * IOVA of one domain (a lost unmap, or domains unknown) are both kept and the newest goes first;
 * beyond the bound new mappings are not tracked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "tracer/live_maps.h"

struct pieces {
	struct live_map p[8];
	int n;
};

static int keep(const struct live_map *piece, void *ctx)
{
	struct pieces *ps = ctx;

	ps->p[ps->n++] = *piece;
	return 0;
}

static void assert_piece(const struct live_map *p, uint64_t iova, uint64_t paddr, uint64_t size)
{
	assert_int_equal(p->iova, iova);
	assert_int_equal(p->paddr, paddr);
	assert_int_equal(p->size, size);
}

/* Three mappings in a row: an unmap over the first two and half the third takes them and the
 * third's front; its back stays, and a later unmap takes it. */
static void pieces_in_a_row(void **state)
{
	struct live_maps *lm = live_maps_new(16);
	struct pieces ps = { .n = 0 };

	(void)state;
	for (uint64_t i = 0; i < 3; i++)
		assert_int_equal(live_maps_add(lm, &(struct live_map){ 0xd0, 0x10000 + i * 0x2000,
								       0x900000 + i * 0x10000,
								       0x2000 }),
				 0);
	assert_int_equal(live_maps_remove(lm, 0xd0, 0x10000, 0x5000, keep, &ps), 0x5000);
	assert_int_equal(ps.n, 3);
	assert_piece(&ps.p[0], 0x10000, 0x900000, 0x2000);
	assert_piece(&ps.p[1], 0x12000, 0x910000, 0x2000);
	assert_piece(&ps.p[2], 0x14000, 0x920000, 0x1000);
	assert_int_equal(live_maps_count(lm), 1);
	/* another domain's IOVA, and a gap, give nothing */
	assert_int_equal(live_maps_remove(lm, 0xd1, 0x15000, 0x1000, keep, &ps), 0);
	assert_int_equal(live_maps_remove(lm, 0xd0, 0x16000, 0x1000, keep, &ps), 0);
	assert_int_equal(live_maps_remove(lm, 0xd0, 0x15000, 0x3000, keep, &ps), 0x1000);
	assert_int_equal(ps.n, 4);
	assert_piece(&ps.p[3], 0x15000, 0x921000, 0x1000);
	assert_int_equal(live_maps_count(lm), 0);
	live_maps_free(lm);
}

/* Two mappings at one IOVA of domain 0 (the tracefs capture sees no domains): each unmap takes
 * one, the newest first, also after the index grew past many others. */
static void one_iova_twice(void **state)
{
	struct live_maps *lm = live_maps_new(4096);
	struct pieces ps = { .n = 0 };

	(void)state;
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 0, 0x10000, 0xa00000, 0x1000 }), 0);
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 0, 0x10000, 0xb00000, 0x1000 }), 0);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(live_maps_add(lm, &(struct live_map){ 0, 0x100000 + i * 0x1000,
								       i * 0x1000, 0x1000 }),
				 0);
	assert_int_equal(live_maps_remove(lm, 0, 0x10000, 0x1000, keep, &ps), 0x1000);
	assert_int_equal(live_maps_remove(lm, 0, 0x10000, 0x1000, keep, &ps), 0x1000);
	assert_int_equal(live_maps_remove(lm, 0, 0x10000, 0x1000, keep, &ps), 0);
	assert_int_equal(ps.n, 2);
	assert_int_equal(ps.p[0].paddr, 0xb00000);
	assert_int_equal(ps.p[1].paddr, 0xa00000);
	assert_int_equal(live_maps_count(lm), 1000);
	live_maps_free(lm);
}

/* At the bound a new mapping is not tracked (counted); one taken out makes room. */
static void bound(void **state)
{
	struct live_maps *lm = live_maps_new(2);
	struct pieces ps = { .n = 0 };

	(void)state;
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 1, 0x1000, 0x1000, 0x1000 }), 0);
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 1, 0x2000, 0x2000, 0x1000 }), 0);
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 1, 0x3000, 0x3000, 0x1000 }), 1);
	assert_int_equal(live_maps_untracked(lm), 1);
	assert_int_equal(live_maps_remove(lm, 1, 0x1000, 0x3000, keep, &ps), 0x2000);
	assert_int_equal(live_maps_add(lm, &(struct live_map){ 1, 0x3000, 0x3000, 0x1000 }), 0);
	assert_int_equal(live_maps_count(lm), 1);
	live_maps_free(lm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_in_a_row),
		cmocka_unit_test(one_iova_twice),
		cmocka_unit_test(bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
