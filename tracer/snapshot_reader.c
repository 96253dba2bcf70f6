/* Page-table snapshots: the user side of bpf/snapshot.bpf.c (see snapshot_reader.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "common/sysfs_file.h"
#include "tracer/snapshot_reader.h"
#include "snapshot.skel.h"

/* Table entries one read of the type file looks at: at most as many runs, which must fit the
 * program's 4 MiB ring buffer (a run is 48 bytes there) */
#define SLICE_ENTRIES 65536
#define ATTEMPTS 3

struct snapshot_reader {
	struct snapshot_bpf *skel;
	struct ring_buffer *rb;
	/* what counts the changes a read is redone for: the walked domain's driver calls, or the
	 * tracepoints, which do not name a domain */
	struct bpf_link *changes[4];
	bool changes_by_domain;
	/* the attempt's runs so far */
	struct it_snap_run *runs;
	size_t nruns, cap;
	bool out_of_memory;
};

/* libbpf's messages as debug lines, one per line (a verifier log holds many) */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL, *line, *save = NULL;

	if ((level == LIBBPF_DEBUG && log_verbose < 2) || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	for (line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_debug("%s", line);
	free(msg);
	return 0;
}

static int on_run(void *ctx, void *data, size_t size)
{
	struct snapshot_reader *r = ctx;
	struct it_snap_run *grown;

	if (size < sizeof(struct it_snap_run))
		return 0;
	if (r->nruns == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;

		grown = realloc(r->runs, cap * sizeof(*grown));
		if (!grown) {
			r->out_of_memory = true;
			return -ENOMEM;
		}
		r->runs = grown;
		r->cap = cap;
	}
	memcpy(&r->runs[r->nruns++], data, sizeof(struct it_snap_run));
	return 0;
}

const char *snapshot_kind_name(enum it_snap_domain_kind kind)
{
	switch (kind) {
	case IT_SNAP_TRANSLATED:
		return "translated";
	case IT_SNAP_IDENTITY:
		return "identity";
	case IT_SNAP_BLOCKED:
		return "blocked";
	case IT_SNAP_UNREADABLE:
		return "unreadable";
	case IT_SNAP_NO_DOMAIN:
		break;
	}
	return "none";
}

/* The VT-d driver's map_pages and unmap_pages, which name the domain, where the walk reads VT-d
 * tables and the kernel has them; else the iommu:map and iommu:unmap tracepoints. 0 or -1 said */
static int attach_change_counters(struct snapshot_reader *r, bool vtd)
{
	struct bpf_program *driver[] = { r->skel->progs.snap_driver_map,
					 r->skel->progs.snap_driver_map_ret,
					 r->skel->progs.snap_driver_unmap,
					 r->skel->progs.snap_driver_unmap_ret };
	struct bpf_program *tracepoint[] = { r->skel->progs.snap_map, r->skel->progs.snap_unmap };

	for (int by_domain = vtd; by_domain >= 0; by_domain--) {
		struct bpf_program **progs = by_domain ? driver : tracepoint;
		size_t n = by_domain ? 4 : 2, i;

		for (i = 0; i < n; i++) {
			r->changes[i] = bpf_program__attach(progs[i]);
			if (!r->changes[i])
				break;
		}
		if (i == n) {
			r->changes_by_domain = by_domain;
			log_debug("snapshot: a read is redone for maps and unmaps %s",
				  by_domain ?
					  "in its domain (the VT-d driver's map_pages, unmap_pages)" :
					  "in any domain (iommu:map, iommu:unmap)");
			return 0;
		}
		for (; i > 0; i--) {
			bpf_link__destroy(r->changes[i - 1]);
			r->changes[i - 1] = NULL;
		}
	}
	log_error("snapshot: cannot attach to the iommu:map and iommu:unmap tracepoints (%s), "
		  "without which a table changing while read would go unnoticed",
		  strerror(errno));
	return -1;
}

const char *snapshot_format_name(enum it_snap_format format)
{
	return format == IT_SNAP_FORMAT_VTD_PT ? "vtd-pt" : "vtd";
}

struct snapshot_reader *snapshot_reader_open(bool vtd)
{
	struct snapshot_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		log_error("snapshot: out of memory");
		return NULL;
	}
	libbpf_set_print(libbpf_quiet);
	r->skel = snapshot_bpf__open();
	if (!r->skel) {
		log_error("snapshot: cannot open its BPF programs: %s", strerror(errno));
		goto fail;
	}
	r->skel->rodata->target_tgid = (__u32)getpid();
	r->skel->rodata->vtd_tables = vtd;
	bpf_program__set_autoattach(r->skel->progs.snap_driver_map, false);
	bpf_program__set_autoattach(r->skel->progs.snap_driver_unmap, false);
	bpf_program__set_autoattach(r->skel->progs.snap_driver_map_ret, false);
	bpf_program__set_autoattach(r->skel->progs.snap_driver_unmap_ret, false);
	bpf_program__set_autoattach(r->skel->progs.snap_map, false);
	bpf_program__set_autoattach(r->skel->progs.snap_unmap, false);
	err = snapshot_bpf__load(r->skel);
	if (err) {
		log_error("snapshot: the kernel refused its BPF programs (%s): it needs BTF "
			  "(CONFIG_DEBUG_INFO_BTF) and bpf_loop (5.17); -v says more",
			  strerror(-err));
		goto fail;
	}
	err = snapshot_bpf__attach(r->skel);
	if (err) {
		log_error("snapshot: cannot attach a kprobe to iommu_group_show_type (%s): the walk "
			  "needs kprobes (CONFIG_KPROBES) and that function in /proc/kallsyms",
			  strerror(-err));
		goto fail;
	}
	if (attach_change_counters(r, vtd))
		goto fail;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.runs), on_run, r, NULL);
	if (!r->rb) {
		log_error("snapshot: cannot read its ring buffer: %s", strerror(errno));
		goto fail;
	}
	return r;
fail:
	snapshot_reader_close(r);
	return NULL;
}

void snapshot_reader_close(struct snapshot_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < 4; i++)
		bpf_link__destroy(r->changes[i]);
	ring_buffer__free(r->rb);
	snapshot_bpf__destroy(r->skel);
	free(r->runs);
	free(r);
}

static int get_walk(struct snapshot_reader *r, struct it_snap_walk *w)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.walk), &zero, w)) {
		log_error("snapshot: reading the walk's state: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The change counters now */
static void read_seqs(struct snapshot_reader *r, uint64_t seq[3])
{
	for (__u32 k = 0; k < 3; k++) {
		__u64 v = 0;

		bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.map_seq), &k, &v);
		seq[k] = v;
	}
}

/* Whether nothing changed the walked table while it was read: counted in its domain, no driver
 * call into it was writing when the walk began, none began or ended since, and none went
 * uncounted; counted on the tracepoints, none in any domain. */
static bool unchanged(struct snapshot_reader *r, const struct it_snap_walk *w)
{
	uint64_t now[3];

	read_seqs(r, now);
	if (!r->changes_by_domain)
		return now[IT_SNAP_SEQ_ENDED] == w->seq_ended;
	return !w->in_flight_at_start && now[IT_SNAP_SEQ_STARTED] == w->seq_started &&
	       now[IT_SNAP_SEQ_ENDED] == w->seq_ended && now[IT_SNAP_SEQ_LOST] == w->seq_lost;
}

/* One read of the type file: the walk's next slice */
static int trigger(int fd, const char *path)
{
	char buf[64];

	if (pread(fd, buf, sizeof(buf), 0) < 0) {
		log_error("snapshot: reading %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static const char *walk_error(enum it_snap_error e)
{
	switch (e) {
	case IT_SNAP_READ_FAILED:
		return "a table entry could not be read";
	case IT_SNAP_DOMAIN_CHANGED:
		return "the group's domain was replaced during the read";
	case IT_SNAP_BAD_LEVELS:
		return "the domain's address width gives a table depth the walker does not know";
	case IT_SNAP_OK:
		break;
	}
	return "no error";
}

/* One attempt: the whole walk, slice after slice; *w holds its end state. 1: the group's domain
 * was replaced during it, to try again. */
static int attempt(struct snapshot_reader *r, int fd, const char *path, int group_id,
		   struct it_snap_walk *w)
{
	__u32 zero = 0;
	uint64_t seen = 0;

	memset(w, 0, sizeof(*w));
	w->command = IT_SNAP_START;
	w->budget = SLICE_ENTRIES;
	r->nruns = 0;
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.walk), &zero, w, BPF_ANY)) {
		log_error("snapshot: starting the walk: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (trigger(fd, path) || get_walk(r, w))
			return -1;
		if (w->command == IT_SNAP_START) {
			log_error("snapshot: the kprobe on iommu_group_show_type did not run when %s "
				  "was read",
				  path);
			return -1;
		}
		if (ring_buffer__consume(r->rb) < 0 || r->out_of_memory) {
			log_error("snapshot: group %d: %s", group_id,
				  r->out_of_memory ? "out of memory for its leaves" :
						     "reading its ring buffer failed");
			return -1;
		}
		if (w->error == IT_SNAP_DOMAIN_CHANGED)
			return 1;
		if (w->error) {
			log_error("snapshot: group %d: %s (at level %u); nothing stored", group_id,
				  walk_error(w->error), w->level);
			return -1;
		}
		if (w->dropped) {
			log_error("snapshot: group %d: %llu runs found no room in the ring buffer; "
				  "nothing stored",
				  group_id, (unsigned long long)w->dropped);
			return -1;
		}
		if (w->done)
			return 0;
		if (w->entries == seen) {
			log_error("snapshot: group %d: the walk made no progress", group_id);
			return -1;
		}
		seen = w->entries;
	}
}

int snapshot_reader_read(struct snapshot_reader *r, const char *root, int group_id,
			 struct snapshot_domain *d)
{
	char path[PATH_MAX];
	struct it_snap_walk w;
	int fd, rc = -1;

	memset(d, 0, sizeof(*d));
	if (sysfs_path(path, sizeof(path), root, "/sys/kernel/iommu_groups/%d/type", group_id)) {
		log_error("snapshot: the path of group %d's type file is too long", group_id);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_error("snapshot: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (d->attempts < ATTEMPTS) {
		int got;

		d->attempts++;
		got = attempt(r, fd, path, group_id, &w);
		if (got < 0)
			goto out;
		if (got > 0) {
			if (d->attempts < ATTEMPTS)
				continue;
			log_error("snapshot: group %d: %s, in each of %d reads; nothing stored",
				  group_id, walk_error(IT_SNAP_DOMAIN_CHANGED), ATTEMPTS);
			goto out;
		}
		/* a domain without a table cannot change while read */
		d->consistent = w.kind != IT_SNAP_TRANSLATED || unchanged(r, &w);
		d->changes_by_domain = r->changes_by_domain;
		if (d->consistent)
			break;
		log_debug("snapshot: group %d: maps or unmaps ran during the read (attempt %u)",
			  group_id, d->attempts);
	}
	d->domain = w.domain;
	d->kind = w.kind;
	d->format = w.format;
	d->domain_type = w.domain_type;
	d->pgsize_bitmap = w.pgsize_bitmap;
	d->levels = w.top;
	d->entries = w.entries;
	d->leaves = w.leaves;
	d->tables = w.tables;
	if (r->nruns) {
		d->runs = r->runs;
		d->nruns = r->nruns;
		r->runs = NULL;
		r->nruns = r->cap = 0;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
