/* The leaf rule (see leaf.h). Runs are computed arithmetically, not page by page, so a 1 GiB
 * mapping in 4 KiB pages costs a handful of steps. */
#include "common/leaf.h"

uint64_t leaf_largest_page(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t pgsize_bitmap)
{
	uint64_t addr_merge = iova | paddr;
	uint64_t candidates = pgsize_bitmap;

	/* page sizes no larger than size: all bits up to its top set bit */
	if (!size)
		return 0;
	candidates &= size >= (1ull << 63) ? ~0ull : ((1ull << (64 - __builtin_clzll(size))) - 1);
	/* page sizes to which the merged address is aligned */
	if (addr_merge)
		candidates &= (addr_merge & -addr_merge) | ((addr_merge & -addr_merge) - 1);
	if (!candidates)
		return 0;
	return 1ull << (63 - __builtin_clzll(candidates));
}

/* Pages of pgsize that can be written before a larger page size could take over: up to the next
 * boundary of the next larger size, when iova and paddr are congruent modulo that size; all the
 * pages that fit otherwise. */
static uint64_t run_length(uint64_t iova, uint64_t paddr, uint64_t remaining, uint64_t pgsize,
			   uint64_t pgsize_bitmap)
{
	uint64_t larger = pgsize_bitmap & ~((pgsize << 1) - 1);
	uint64_t count = remaining / pgsize;

	if (larger) {
		uint64_t next = larger & -larger;

		if (!((iova ^ paddr) & (next - 1))) {
			uint64_t to_boundary = (next - (iova & (next - 1))) / pgsize;

			if (to_boundary < count)
				count = to_boundary;
		}
	}
	return count;
}

long leaf_pages(uint64_t iova, uint64_t paddr, uint64_t size, uint64_t pgsize_bitmap,
		struct leaf_run *runs, size_t max)
{
	uint64_t min_page = pgsize_bitmap & -pgsize_bitmap;
	uint64_t last_pgsize = 0;
	long n = 0;

	if (!size || !pgsize_bitmap || ((iova | paddr | size) & (min_page - 1)) ||
	    iova + size - 1 < iova)
		return -1;
	while (size) {
		uint64_t pgsize = leaf_largest_page(iova, paddr, size, pgsize_bitmap);
		uint64_t count = run_length(iova, paddr, size, pgsize, pgsize_bitmap);
		uint64_t bytes = count * pgsize;

		if (pgsize == last_pgsize) {
			if ((size_t)(n - 1) < max)
				runs[n - 1].pgcount += count;
		} else {
			if ((size_t)n < max)
				runs[n] = (struct leaf_run){ iova, paddr, pgsize, count };
			n++;
			last_pgsize = pgsize;
		}
		iova += bytes;
		paddr += bytes;
		size -= bytes;
	}
	return n;
}
