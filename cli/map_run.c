/* The report a map run writes for map -o's recorder (see map_run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "probes/backing.h"
#include "cli/map_run.h"

void map_report_init(struct run_report *rep, const struct map_opts *o, const char *mapper,
		     int report_fd)
{
	struct map_report *r = &rep->r;

	memset(rep, 0, sizeof(*rep));
	rep->fd = report_fd;
	snprintf(r->mapper, sizeof(r->mapper), "%s", mapper);
	snprintf(r->device, sizeof(r->device), "%s", o->device);
	snprintf(r->buffer, sizeof(r->buffer), "%s", o->buffer_arg);
	snprintf(r->buffer_kind, sizeof(r->buffer_kind), "%s", buffer_kind_name(o->buffer.kind));
	if (o->buffer.kind == BUF_BAR || o->buffer.kind == BUF_DMABUF_BAR) {
		snprintf(r->bar_device, sizeof(r->bar_device), "%s", o->buffer.bar_bdf);
		r->bar_index = (int32_t)o->buffer.bar_index;
		r->bar_offset = o->offset;
	}
	r->size = o->size;
	r->iova = o->iova;
	r->iova_given = o->iova_given;
	r->hold = o->hold;
	r->repeat = o->repeat;
}

int map_report_measure(struct map_report *r, const void *vaddr, uint64_t size, uint64_t bar_paddr)
{
	struct backing back = { 0 };

	if (bar_paddr) {
		back.runs = calloc(1, sizeof(*back.runs));
		if (!back.runs) {
			log_error("out of memory");
			return -1;
		}
		back.runs[0] = (struct backing_run){ .paddr = bar_paddr, .size = size };
		back.nruns = 1;
	} else if (backing_read(vaddr, size, &back)) {
		return -1;
	}
	free(r->runs);
	r->runs = back.runs;
	r->nruns = back.nruns;
	r->thp_bytes = back.thp_bytes;
	r->hugetlb_bytes = back.hugetlb_bytes;
	return 0;
}

int map_report_update(struct run_report *rep)
{
	return rep->fd < 0 ? 0 : map_report_write(rep->fd, &rep->r);
}
