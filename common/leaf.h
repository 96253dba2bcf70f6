/* The leaf rule: how a page table writes a mapping [iova, iova+size) -> paddr as pages. At each
 * step the largest page size in the domain's set to which both the current iova and paddr are
 * aligned and which fits in what remains. Used for 'derived' page sizes (never passed off as
 * observed) and by the audits. */
#ifndef IOMMUTRACE_LEAF_H
#define IOMMUTRACE_LEAF_H

#include <stddef.h>
#include <stdint.h>

#define LEAF_4K (1ull << 12)
#define LEAF_2M (1ull << 21)
#define LEAF_1G (1ull << 30)

/* A run of consecutive pages of one size, starting at iova -> paddr. */
struct leaf_run {
	uint64_t iova;
	uint64_t paddr;
	uint64_t pgsize;
	uint64_t pgcount;
};

/**
 * leaf_pages() - Split the mapping into runs (consecutive runs always differ in page size).
 * @runs: at most @max runs are written
 *
 * Return: how many runs the mapping has, which may exceed @max; -1 when the kernel would refuse
 * the mapping: size 0, an empty bitmap, @iova, @paddr or @size not aligned to the smallest page
 * size, or @iova + @size wrapping around.
 */
long leaf_pages(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t pgsize_bitmap,
		struct leaf_run *runs, size_t max);

/**
 * leaf_largest_page() - Largest page size of the bitmap that the alignment of @iova and @paddr and
 * the length allow for the first page.
 *
 * Return: that page size; 0 when none does.
 */
uint64_t leaf_largest_page(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t pgsize_bitmap);

#endif
