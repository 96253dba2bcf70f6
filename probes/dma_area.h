/* DMA memory for a driver's own structures (queues, PRP lists, identify data): one buffer of
 * hugetlb 2 MiB pages, or anonymous memory when none is reserved, mapped through the mapper at a
 * fixed IOVA and handed out in zeroed, page-aligned pieces. Without a mapper (IOMMU off) it is one
 * hugetlb 2 MiB page, and its DMA addresses are physical ones. Functions log one line on failure
 * and return -1. */
#ifndef IOMMUTRACE_DMA_AREA_H
#define IOMMUTRACE_DMA_AREA_H

#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/mapper.h"

struct dma_area {
	struct buffer buf;
	struct mapper *mapper;
	uint64_t iova;
	uint64_t used;
	bool mapped;
};

#define DMA_AREA_INIT \
	{ \
		.buf = BUFFER_INIT \
	}

/**
 * dma_area_create() - Make the area: @size bytes mapped through @m at @iova.
 * @m: NULL: no IOMMU; size 2 MiB, @iova ignored
 * @size: a multiple of 2 MiB
 */
int dma_area_create(struct dma_area *a, struct mapper *m, uint64_t size, uint64_t iova);
/**
 * dma_area_alloc() - The next @size bytes (rounded up to 4 KiB), zeroed, and their DMA address.
 */
int dma_area_alloc(struct dma_area *a, uint64_t size, void **vaddr, uint64_t *iova);
/**
 * dma_area_destroy() - Unmap and free; safe on an area never created.
 */
void dma_area_destroy(struct dma_area *a);

#endif
