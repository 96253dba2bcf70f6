/* The physical memory behind a buffer, read from /proc/self/pagemap and /proc/kpageflags: its
 * physically contiguous runs (each is what VFIO pins and maps as one piece) and how much of it is
 * transparent huge pages or hugetlb pages. Root only: pagemap hides frame numbers without
 * CAP_SYS_ADMIN. Every page must be present (touch the buffer first). Functions log one line on
 * failure and return -1. */
#ifndef IOMMUTRACE_BACKING_H
#define IOMMUTRACE_BACKING_H

#include <stddef.h>
#include <stdint.h>

/* [offset, offset + size) of the buffer is at [paddr, paddr + size), contiguous. */
struct backing_run {
	uint64_t offset;
	uint64_t paddr;
	uint64_t size;
};

struct backing {
	struct backing_run *runs; /* by offset; consecutive runs are not contiguous */
	size_t nruns;
	uint64_t thp_bytes; /* bytes in transparent huge pages (KPF_THP) */
	uint64_t hugetlb_bytes; /* bytes in hugetlb pages (KPF_HUGE) */
};

/**
 * backing_read() - Read the backing of [@vaddr, @vaddr + @size).
 * @vaddr: page-aligned
 * @size: page-aligned
 */
int backing_read(const void *vaddr, uint64_t size, struct backing *out);
void backing_free(struct backing *b);

#endif
