/* The live mappings of a trace: what iommu:map added and iommu:unmap has not yet removed, per
 * domain and IOVA, so that an unmap can be told which physical pages it took away (the driver's
 * unmap function is not always there to say, e.g. on kernels whose page table code has no
 * unmap_pages to probe). Memory is bounded by max_entries: beyond it new mappings are not
 * tracked (counted), and unmaps of them get nothing derived. */
#ifndef IOMMUTRACE_LIVE_MAPS_H
#define IOMMUTRACE_LIVE_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct live_maps;

struct live_map {
	uint64_t domain;
	uint64_t iova;
	uint64_t paddr;
	uint64_t size;
};

struct live_maps *live_maps_new(size_t max_entries);
void live_maps_free(struct live_maps *lm);
/* Tracks a mapping. Returns 0, 1 when it was not tracked (full), or -1 when out of memory
 * (logged). */
int live_maps_add(struct live_maps *lm, const struct live_map *m);
/* Removes what [iova, iova+size) of domain takes away, from iova upward through mappings that
 * start where the previous one ended, calling fn with each piece (a whole mapping or, at the
 * end, the front of one, whose rest stays tracked). Stops at the first IOVA no mapping starts
 * at. Returns the bytes found, or -1 when fn failed or memory ran out. */
int64_t live_maps_remove(struct live_maps *lm, uint64_t domain, uint64_t iova, uint64_t size,
			 int (*fn)(const struct live_map *piece, void *ctx), void *ctx);
size_t live_maps_count(const struct live_maps *lm);
/* Mappings not tracked because the index was full. */
uint64_t live_maps_untracked(const struct live_maps *lm);

#endif
