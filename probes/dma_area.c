/* The driver's DMA area (see dma_area.h). */
#include <limits.h>
#include <string.h>
#include "common/leaf.h"
#include "common/log.h"
#include "common/sysfs_file.h"
#include "probes/backing.h"
#include "probes/dma_area.h"

/* hugetlb when enough 2 MiB pages are free: then one IOTLB entry covers each 2 MiB */
static enum buffer_kind backing_kind(uint64_t size)
{
	long free_pages;

	if (sysfs_read_long("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", 0, LONG_MAX,
			    &free_pages) == 0 &&
	    (uint64_t)free_pages >= size / LEAF_2M)
		return BUF_HUGETLB2M;
	return BUF_ANON;
}

/* Without an IOMMU: one hugetlb page, physically contiguous, addressed physically. */
static int create_physical(struct dma_area *a, uint64_t size)
{
	struct buffer_spec spec = { .kind = BUF_HUGETLB2M };
	struct backing back;

	if (size != LEAF_2M || backing_kind(size) != BUF_HUGETLB2M) {
		log_error(
			"without an IOMMU the driver needs a free 2 MiB huge page for its queues: "
			"reserve one in /proc/sys/vm/nr_hugepages");
		return -1;
	}
	if (buffer_create(&a->buf, &spec, size, 0, -1) || backing_read(a->buf.vaddr, size, &back))
		return -1;
	a->iova = back.runs[0].paddr;
	backing_free(&back);
	log_debug("driver DMA area: 2 MiB hugetlb page at physical %#llx",
		  (unsigned long long)a->iova);
	return 0;
}

int dma_area_create(struct dma_area *a, struct mapper *m, uint64_t size, uint64_t iova)
{
	struct buffer_spec spec = { .kind = backing_kind(size) };

	a->mapper = m;
	a->iova = iova;
	a->used = 0;
	a->mapped = false;
	if (!m)
		return create_physical(a, size);
	if (buffer_create(&a->buf, &spec, size, 0, -1))
		return -1;
	if (mapper_map(m, &a->buf, iova)) {
		buffer_destroy(&a->buf);
		return -1;
	}
	a->mapped = true;
	log_debug("driver DMA area: %#llx bytes of %s at IOVA %#llx", (unsigned long long)size,
		  buffer_kind_name(spec.kind), (unsigned long long)iova);
	return 0;
}

int dma_area_alloc(struct dma_area *a, uint64_t size, void **vaddr, uint64_t *iova)
{
	size = (size + LEAF_4K - 1) & ~(LEAF_4K - 1);
	if (size > a->buf.size - a->used) {
		log_error("the driver's DMA area of %#llx bytes is full",
			  (unsigned long long)a->buf.size);
		return -1;
	}
	*vaddr = (char *)a->buf.vaddr + a->used;
	*iova = a->iova + a->used;
	memset(*vaddr, 0, size);
	a->used += size;
	return 0;
}

void dma_area_destroy(struct dma_area *a)
{
	if (a->mapped)
		mapper_unmap(a->mapper, a->iova, a->buf.size);
	a->mapped = false;
	buffer_destroy(&a->buf);
}
