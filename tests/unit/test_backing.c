/* The physical layout of a buffer from pagemap and kpageflags, on this machine's own memory:
 * runs cover the buffer exactly, in order, and are maximal; a page not in memory and unaligned
 * buffers are refused. Frame numbers need root: without it the test skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/leaf.h"
#include "probes/backing.h"

#define SIZE (8 * LEAF_2M)

static void *touched(uint64_t size, int advice)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	madvise(p, size, advice);
	memset(p, 1, size);
	return p;
}

static void runs_cover_the_buffer(void **state)
{
	void *p = touched(SIZE, MADV_NOHUGEPAGE);
	struct backing b;
	uint64_t next = 0;

	assert_int_equal(backing_read(p, SIZE, &b), 0);
	assert_true(b.nruns >= 1);
	for (size_t i = 0; i < b.nruns; i++) {
		assert_int_equal(b.runs[i].offset, next);
		assert_true(b.runs[i].size > 0 && b.runs[i].size % LEAF_4K == 0);
		assert_true(b.runs[i].paddr % LEAF_4K == 0);
		/* maximal: the next run does not continue this one physically */
		if (i + 1 < b.nruns)
			assert_true(b.runs[i].paddr + b.runs[i].size != b.runs[i + 1].paddr);
		next += b.runs[i].size;
	}
	assert_int_equal(next, SIZE);
	assert_int_equal(b.thp_bytes, 0); /* huge pages refused */
	assert_int_equal(b.hugetlb_bytes, 0);
	backing_free(&b);
	munmap(p, SIZE);
}

/* Whatever THP the kernel gave is whole 2 MiB pages, each physically contiguous and aligned. */
static void thp_bytes_are_whole_huge_pages(void **state)
{
	void *raw = mmap(NULL, SIZE + LEAF_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	void *p = (void *)(((uintptr_t)raw + LEAF_2M - 1) & ~(uintptr_t)(LEAF_2M - 1));
	struct backing b;
	uint64_t aligned = 0;

	assert_true(raw != MAP_FAILED);
	madvise(p, SIZE, MADV_HUGEPAGE);
	memset(p, 1, SIZE);
	assert_int_equal(backing_read(p, SIZE, &b), 0);
	assert_int_equal(b.thp_bytes % LEAF_2M, 0);
	assert_true(b.thp_bytes <= SIZE);
	for (size_t i = 0; i < b.nruns; i++)
		if (b.runs[i].paddr % LEAF_2M == 0 && b.runs[i].offset % LEAF_2M == 0)
			aligned += b.runs[i].size / LEAF_2M * LEAF_2M;
	assert_true(aligned >= b.thp_bytes);
	print_message("THP: %llu of %llu bytes in %zu runs\n", (unsigned long long)b.thp_bytes,
		      (unsigned long long)SIZE, b.nruns);
	backing_free(&b);
	munmap(raw, SIZE + LEAF_2M);
}

static void refuses_missing_and_unaligned(void **state)
{
	char *p = touched(4 * LEAF_4K, MADV_NOHUGEPAGE);
	struct backing b;

	assert_int_equal(madvise(p + 2 * LEAF_4K, LEAF_4K, MADV_DONTNEED), 0);
	assert_int_equal(backing_read(p, 4 * LEAF_4K, &b), -1);
	assert_null(b.runs);
	assert_int_equal(backing_read(p + 1, LEAF_4K, &b), -1);
	assert_int_equal(backing_read(p, 100, &b), -1);
	assert_int_equal(backing_read(p, 2 * LEAF_4K, &b), 0); /* the pages still there */
	backing_free(&b);
	munmap(p, 4 * LEAF_4K);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_cover_the_buffer),
		cmocka_unit_test(thp_bytes_are_whole_huge_pages),
		cmocka_unit_test(refuses_missing_and_unaligned),
	};

	if (geteuid() != 0) {
		print_message("SKIP: reading frame numbers from /proc/self/pagemap needs root\n");
		return 77;
	}
	return cmocka_run_group_tests_name("buffer backing", tests, NULL, NULL);
}
