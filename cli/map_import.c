/* `map --import-as BDF`: the kernel maps the buffer into BDF's DMA domain while BDF stays on its
 * own driver, through iommutrace's probe module: a dma-buf is made (probes/dmabuf_export.h) and
 * imported as BDF, or a BAR window of another device goes through dma_map_resource. Each of the
 * --repeat rounds maps and releases once; the report keeps every round's DMA segments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/log.h"
#include "common/stop_signal.h"
#include "probes/dmabuf_export.h"
#include "probes/probe_module.h"
#include "cli/map_run.h"

#define SEGMENTS_PRINTED 4

static int add_segments(struct map_report *r, uint32_t repetition, const struct probe_segment *segs,
			uint32_t n)
{
	struct map_segment *more = realloc(r->segs, (r->nsegs + n) * sizeof(*more));
	uint64_t offset = 0;

	if (!more) {
		log_error("out of memory for %u DMA segments", n);
		return -1;
	}
	r->segs = more;
	for (uint32_t i = 0; i < n; i++) {
		r->segs[r->nsegs++] = (struct map_segment){ .repetition = repetition,
							    .offset = offset,
							    .dma_addr = segs[i].dma_addr,
							    .length = segs[i].length };
		offset += segs[i].length;
	}
	return 0;
}

/* The buffer's physical runs where user space sees them: a BAR window is one run; a udmabuf's
 * memfd pages are read from pagemap now that the import holds them. Others stay unmeasured, and
 * the recorder takes their runs from the recorded maps. */
static int measure(struct map_report *r, const struct dmabuf_export *e, uint64_t bar_paddr)
{
	if (!bar_paddr && (!e || !e->vaddr))
		return 0;
	r->vaddr = (uintptr_t)(e ? e->vaddr : NULL);
	return map_report_measure(r, e ? e->vaddr : NULL, r->size, bar_paddr);
}

static void print_import(const struct map_opts *o, const struct map_report *r,
			 const struct probe_import *imp)
{
	char s[HUMAN_SIZE_LEN];

	printf("imported iova=%#llx size=%#llx (%s) for device=%s buffer=%s exporter=%s "
	       "segments=%u",
	       (unsigned long long)r->iova, (unsigned long long)imp->dmabuf_size,
	       human_size(imp->dmabuf_size, s), o->device, o->buffer_arg, imp->exporter,
	       imp->nsegments);
	if (r->exporter_device[0])
		printf(" exporter_device=%s", r->exporter_device);
	if (r->bar_device[0])
		printf(" bar_start=%#llx bar_offset=%#llx paddr=%#llx",
		       (unsigned long long)r->bar_start, (unsigned long long)r->bar_offset,
		       (unsigned long long)(r->bar_start + r->bar_offset));
	else if (r->nruns)
		printf(" thp=%#llx hugetlb=%#llx phys_runs=%llu", (unsigned long long)r->thp_bytes,
		       (unsigned long long)r->hugetlb_bytes, (unsigned long long)r->nruns);
	printf("\n");
	for (uint32_t i = 0; i < imp->nsegments && i < SEGMENTS_PRINTED; i++)
		printf("  segment %u dma=%#llx length=%#llx\n", i,
		       (unsigned long long)imp->segments[i].dma_addr,
		       (unsigned long long)imp->segments[i].length);
	if (imp->nsegments > SEGMENTS_PRINTED)
		printf("  ... %u more segments (map -o stores them all)\n",
		       imp->nsegments - SEGMENTS_PRINTED);
	fflush(stdout);
}

static void print_resource(const struct map_opts *o, const struct map_report *r)
{
	char s[HUMAN_SIZE_LEN];

	printf("mapped iova=%#llx size=%#llx (%s) for device=%s by dma_map_resource buffer=%s "
	       "bar_start=%#llx bar_offset=%#llx paddr=%#llx\n",
	       (unsigned long long)r->iova, (unsigned long long)o->size, human_size(o->size, s),
	       o->device, o->buffer_arg, (unsigned long long)r->bar_start,
	       (unsigned long long)o->offset, (unsigned long long)(r->bar_start + o->offset));
	fflush(stdout);
}

/* One round: map (import the dma-buf, or dma_map_resource the BAR window), note its segments,
 * measure and print the first, hold, release. */
static int one_round(const struct map_opts *o, struct probe_module *pm, struct dmabuf_export *e,
		     struct run_report *rep, uint32_t round)
{
	struct map_report *r = &rep->r;
	struct probe_import imp = { 0 };
	struct probe_segment seg;
	uint64_t phys = 0;
	int ret = -1;

	if (e) {
		if (probe_module_import_dmabuf(pm, o->device, e->fd,
					       o->buffer.kind == BUF_DMABUF_BAR, &imp))
			return -1;
	} else {
		if (probe_module_map_resource(pm, o->device, o->buffer.bar_bdf, o->buffer.bar_index,
					      o->offset, o->size, &phys, &seg.dma_addr,
					      &imp.handle))
			return -1;
		seg.length = o->size;
		imp.segments = &seg;
		imp.nsegments = 1;
		imp.dmabuf_size = o->size;
	}
	r->maps_done++;
	if (add_segments(r, round, imp.segments, imp.nsegments))
		goto release;
	if (round == 0) {
		r->iova = imp.nsegments ? imp.segments[0].dma_addr : 0;
		snprintf(r->exporter, sizeof(r->exporter), "%s", e ? imp.exporter : "");
		if (!e)
			r->bar_start = phys - o->offset;
		if (measure(r, e, e ? (e->bar_start ? e->bar_start + o->offset : 0) : phys))
			goto release;
		if (e)
			print_import(o, r, &imp);
		else
			print_resource(o, r);
	}
	if (o->hold)
		wait_for_stop_signal();
	ret = 0;
release:
	if (probe_module_release(pm, imp.handle))
		ret = -1;
	if (e)
		free(imp.segments);
	return ret;
}

int map_import_run(struct map_opts *o, int report_fd)
{
	bool dmabuf = buffer_is_dmabuf(o->buffer.kind);
	struct dmabuf_export e = DMABUF_EXPORT_INIT;
	struct probe_module pm = PROBE_MODULE_INIT;
	struct run_report rep;
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	map_report_init(&rep, o, dmabuf ? "dma_buf" : "dma_map_resource", report_fd);
	rep.r.iova = 0;
	if (map_report_update(&rep))
		goto cleanup;
	/* the dma-buf first: on a machine without the module this still says what it can make */
	if (dmabuf) {
		if (dmabuf_export_create(&e, &o->buffer, o->size, o->offset, o->force))
			goto cleanup;
		rep.r.bar_start = e.bar_start;
		snprintf(rep.r.exporter_device, sizeof(rep.r.exporter_device), "%s",
			 o->buffer.kind == BUF_GPU	  ? e.gpu_bdf :
			 o->buffer.kind == BUF_DMABUF_BAR ? o->buffer.bar_bdf :
							    "");
	}
	if (probe_module_open(&pm))
		goto cleanup;
	for (uint64_t i = 0; i < o->repeat && !stop_signal; i++)
		if (one_round(o, &pm, dmabuf ? &e : NULL, &rep, (uint32_t)i))
			goto cleanup;
	/* with --hold a signal is how the run ends; otherwise it cut the run short */
	if (!stop_signal || o->hold)
		ret = IT_EXIT_OK;
cleanup:
	probe_module_close(&pm);
	if (dmabuf_export_close(&e))
		ret = IT_EXIT_FAILURE;
	if (map_report_update(&rep))
		ret = IT_EXIT_FAILURE;
	map_report_free(&rep.r);
	if (stop_signal)
		log_info("stopped by signal %d; everything mapped was released", (int)stop_signal);
	return ret;
}
