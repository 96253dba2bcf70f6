/* The ftrace IOMMU event table and the conversion of libtraceevent records into it_events (see
 * tep_events.h). Field names and types follow include/trace/events/iommu.h and
 * drivers/iommu/intel/trace.h, unchanged from 6.1 to 7.x. */
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "tracer/tep_events.h"

const struct ftrace_iommu_event ftrace_iommu_events[] = {
	{ "iommu", "map", IT_EV_MAP, false },
	{ "iommu", "unmap", IT_EV_UNMAP, false },
	{ "iommu", "attach_device_to_domain", IT_EV_ATTACH, false },
	{ "iommu", "add_device_to_group", IT_EV_GROUP_ADD, false },
	{ "iommu", "remove_device_from_group", IT_EV_GROUP_REMOVE, false },
	{ "iommu", "io_page_fault", IT_EV_FAULT, false },
	{ "intel_iommu", "qi_submit", IT_EV_QI_SUBMIT, false },
	{ "intel_iommu", "cache_tag_flush_range", IT_EV_CACHE_TAG_FLUSH, false },
	{ "intel_iommu", "cache_tag_flush_range_np", IT_EV_CACHE_TAG_FLUSH, true },
};

#define EVENT_COUNT (sizeof(ftrace_iommu_events) / sizeof(ftrace_iommu_events[0]))

const size_t ftrace_iommu_event_count = EVENT_COUNT;

/* The fields read per kind, in the order convert_fields() uses them. */
#define MAX_FIELDS 7

static const char *const *fields_of(uint32_t kind)
{
	static const char *const map[] = { "iova", "paddr", "size", NULL };
	static const char *const unmap[] = { "iova", "size", "unmapped_size", NULL };
	static const char *const attach[] = { "device", NULL };
	static const char *const group[] = { "gid", "device", NULL };
	static const char *const fault[] = { "device", "iova", "flags", NULL };
	static const char *const qi[] = { "qw0", "qw1", "qw2", "qw3", NULL };
	static const char *const flush[] = { "dev",  "domain_id", "start", "end",
					     "addr", "pages",	  "mask",  NULL };

	switch (kind) {
	case IT_EV_MAP:
		return map;
	case IT_EV_UNMAP:
		return unmap;
	case IT_EV_ATTACH:
		return attach;
	case IT_EV_GROUP_ADD:
	case IT_EV_GROUP_REMOVE:
		return group;
	case IT_EV_FAULT:
		return fault;
	case IT_EV_QI_SUBMIT:
		return qi;
	default:
		return flush;
	}
}

/* Fields a kernel may lack: 7.x dropped cache_tag_flush_range's pages (it flushes 2^mask) */
static bool field_optional(const char *name)
{
	return !strcmp(name, "pages");
}

struct known_event {
	int id;
	const struct ftrace_iommu_event *def;
	bool complete; /* every field of fields_of(kind) was found */
	struct tep_format_field *field[MAX_FIELDS];
};

struct tep_events {
	struct tep_handle *tep;
	struct known_event known[EVENT_COUNT];
	size_t count;
};

const struct ftrace_iommu_event *ftrace_iommu_event_find(const char *system, const char *name,
							 size_t namelen)
{
	for (size_t i = 0; i < EVENT_COUNT; i++) {
		const struct ftrace_iommu_event *ev = &ftrace_iommu_events[i];

		if (system && strcmp(system, ev->system))
			continue;
		if (strlen(ev->name) == namelen && !memcmp(ev->name, name, namelen))
			return ev;
	}
	return NULL;
}

uint64_t ftrace_stats_total(const struct ftrace_stats *st)
{
	uint64_t total = 0;

	for (int k = 0; k < IT_EV_KIND_MAX; k++)
		total += st->events[k];
	return total;
}

void ftrace_copy_name(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct tep_events *tep_events_new(struct tep_handle *tep)
{
	struct tep_events *te = calloc(1, sizeof(*te));

	if (!te)
		return NULL;
	te->tep = tep;
	for (size_t i = 0; i < EVENT_COUNT; i++) {
		const struct ftrace_iommu_event *def = &ftrace_iommu_events[i];
		struct tep_event *event = tep_find_event_by_name(tep, def->system, def->name);
		struct known_event *k = &te->known[te->count];
		const char *const *names = fields_of(def->kind);

		if (!event)
			continue;
		k->id = event->id;
		k->def = def;
		k->complete = true;
		for (int f = 0; names[f]; f++) {
			k->field[f] = tep_find_field(event, names[f]);
			if (!k->field[f] && !field_optional(names[f])) {
				log_warn("%s:%s has no field '%s' here: its records will count as "
					 "malformed",
					 def->system, def->name, names[f]);
				k->complete = false;
			}
		}
		te->count++;
	}
	return te;
}

size_t tep_events_known(const struct tep_events *te)
{
	return te->count;
}

void tep_events_free(struct tep_events *te)
{
	free(te);
}

/* A fixed-size field, bounds-checked against the record (a corrupt file must not make us read
 * past it). */
static int read_number(const struct tep_format_field *f, const struct tep_record *rec,
		       uint64_t *out)
{
	unsigned long long v;

	if (f->offset < 0 || f->size <= 0 || f->offset > rec->size ||
	    f->size > rec->size - f->offset)
		return -1;
	if (tep_read_number_field((struct tep_format_field *)f, rec->data, &v))
		return -1;
	*out = v;
	return 0;
}

/* A __string field: a __data_loc (or __rel_loc) word giving offset and length in the record. */
static int read_string(const struct tep_format_field *f, const struct tep_record *rec, char *out,
		       size_t outlen)
{
	uint64_t loc, off, len;

	if (!(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 || read_number(f, rec, &loc))
		return -1;
	off = loc & 0xffff;
	len = loc >> 16;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += (uint64_t)f->offset + (uint64_t)f->size;
	if (off > (uint64_t)rec->size || len > (uint64_t)rec->size - off)
		return -1;
	ftrace_copy_name(out, outlen, (const char *)rec->data + off, len);
	return 0;
}

static const struct known_event *find_known(const struct tep_events *te, int id)
{
	for (size_t i = 0; i < te->count; i++)
		if (te->known[i].id == id)
			return &te->known[i];
	return NULL;
}

/* Reads the numeric fields of k (all but the first, for kinds whose first is a string); an
 * optional field the kernel lacks reads as 0. */
static int read_numbers(const struct known_event *k, const struct tep_record *rec, int first,
			uint64_t v[MAX_FIELDS])
{
	const char *const *names = fields_of(k->def->kind);

	for (int i = first; i < MAX_FIELDS && names[i]; i++)
		if (k->field[i] && read_number(k->field[i], rec, &v[i]))
			return -1;
	return 0;
}

/* Fills e's payload from k's fields, in fields_of(kind)'s order. */
static int convert_fields(const struct known_event *k, const struct tep_record *rec,
			  struct it_event *e)
{
	struct tep_format_field *const *f = k->field;
	uint64_t v[MAX_FIELDS] = { 0 };

	switch (k->def->kind) {
	case IT_EV_MAP:
		if (read_numbers(k, rec, 0, v))
			return -1;
		e->map.iova = v[0];
		e->map.paddr = v[1];
		e->map.size = v[2];
		return 0;
	case IT_EV_UNMAP:
		if (read_numbers(k, rec, 0, v))
			return -1;
		e->unmap.iova = v[0];
		e->unmap.size = v[1];
		e->unmap.unmapped_size = v[2];
		return 0;
	case IT_EV_ATTACH:
		e->device.group_id = -1;
		return read_string(f[0], rec, e->device.dev_name, sizeof(e->device.dev_name));
	case IT_EV_GROUP_ADD:
	case IT_EV_GROUP_REMOVE:
		if (read_number(f[0], rec, &v[0]) ||
		    read_string(f[1], rec, e->device.dev_name, sizeof(e->device.dev_name)))
			return -1;
		e->device.group_id = (int32_t)(uint32_t)v[0];
		return 0;
	case IT_EV_FAULT:
		if (read_string(f[0], rec, e->fault.dev_name, sizeof(e->fault.dev_name)) ||
		    read_numbers(k, rec, 1, v))
			return -1;
		e->fault.iova = v[1];
		e->fault.flags = (int32_t)(uint32_t)v[2];
		return 0;
	case IT_EV_QI_SUBMIT:
		if (read_numbers(k, rec, 0, v))
			return -1;
		for (int i = 0; i < 4; i++)
			e->qi.qw[i] = v[i];
		return 0;
	default:
		if (read_string(f[0], rec, e->flush.dev_name, sizeof(e->flush.dev_name)) ||
		    read_numbers(k, rec, 1, v))
			return -1;
		e->flush.domain_id = (uint32_t)v[1];
		e->flush.start = v[2];
		e->flush.end = v[3];
		e->flush.addr = v[4];
		e->flush.pages = v[5];
		e->flush.mask = v[6];
		e->flush.np = k->def->np;
		return 0;
	}
}

int tep_events_convert(const struct tep_events *te, struct tep_record *rec, struct it_event *out)
{
	const struct known_event *k;
	int tid;

	/* the common header (type, flags, preempt count, pid) is 8 bytes on every kernel */
	if (rec->size < 8)
		return -1;
	k = find_known(te, tep_data_type(te->tep, rec));
	if (!k)
		return 0;
	if (!k->complete)
		return -1;
	memset(out, 0, sizeof(*out));
	tid = tep_data_pid(te->tep, rec);
	out->h.ts_ns = rec->ts;
	out->h.kind = k->def->kind;
	out->h.cpu = (uint32_t)rec->cpu;
	out->h.tid = (uint32_t)tid;
	out->h.pid = (uint32_t)tid;
	ftrace_copy_name(out->h.comm, sizeof(out->h.comm), tep_data_comm_from_pid(te->tep, tid),
			 IT_COMM_LEN);
	return convert_fields(k, rec, out) ? -1 : 1;
}
