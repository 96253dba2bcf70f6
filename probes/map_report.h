/* What one `map` run did and measured, handed from the mapping process to the recorder that
 * stores it with the session (map -o): its parameters, the IOVA, the buffer's address and
 * physical runs, its THP and hugetlb bytes, the page sizes the mapper reported, how many
 * mappings were made, and for a dma-buf import its exporter and the DMA segments each import
 * gave. The mapping process writes it to the report file of common/child_report.h
 * (both ends are this same binary, so the layout is private to it); the recorder reads it once
 * the command has ended and stores map_runs, map_backing, map_dma_segments and
 * map_expected_pages, the pages the leaf rule expects. */
#ifndef IOMMUTRACE_MAP_REPORT_H
#define IOMMUTRACE_MAP_REPORT_H

#include <stdint.h>
#include <sqlite3.h>
#include "probes/backing.h"

/* One DMA segment of an import: [offset, offset + length) of the dma-buf is at dma_addr. */
struct map_segment {
	uint32_t repetition; /* which import of --repeat, from 0 */
	uint32_t pad;
	uint64_t offset, dma_addr, length;
};

struct map_report {
	char mapper[24]; /* type1, iommufd; --import-as: dma_map_resource, dma_buf */
	char device[16];
	char buffer[48]; /* as given: anon, thp, ..., bar:BDF/INDEX */
	char buffer_kind[16];
	char bar_device[16]; /* "" unless a BAR window */
	int32_t bar_index;
	uint64_t bar_start, bar_offset;
	uint64_t size, iova, vaddr;
	uint32_t iova_given, hold;
	uint64_t repeat, maps_done;
	uint64_t mapper_pgsize_bitmap; /* 0: the mapper did not tell */
	uint64_t thp_bytes, hugetlb_bytes;
	char exporter[32]; /* dma_buf: the exporter as the kernel names it */
	char exporter_device[16]; /* dma_buf: the GPU, or the BAR's device; "" */
	uint64_t nruns; /* physical runs; 0 until measured (or, for an import,
					 * when user space cannot see them) */
	uint64_t nsegs; /* --import-as: DMA segments of all repetitions */
	struct backing_run *runs;
	struct map_segment *segs;
};

/**
 * map_report_write() - Write the report over what @fd held (runs after the fixed part).
 *
 * Return: 0, or -1 (logged).
 */
int map_report_write(int fd, const struct map_report *r);
/**
 * map_report_read() - Read a report from the start of @fd.
 *
 * Return: 0; 1 when nothing was written; -1 (logged) when it is truncated or malformed.
 */
int map_report_read(int fd, struct map_report *r);
void map_report_free(struct map_report *r);
/**
 * map_report_store() - Store the report with the session, and the pages the leaf rule expects for
 * each physical run.
 *
 * The pages are those of the run at its IOVA (for an import, its offset's place in the first
 * import's DMA segments), with the mapper's page sizes, or else those of the domain the recorded
 * maps at that IOVA went to. An import whose physical runs user space could not see takes them
 * from the maps recorded in its first DMA segments (map_runs.phys_source 'recorded').
 *
 * Return: 0, or -1 (logged).
 */
int map_report_store(sqlite3 *db, int64_t session_id, struct map_report *r);

#endif
