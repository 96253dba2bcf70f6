/* Allocating the harness's buffers (see buffers.h). */
#include <errno.h>
#include <limits.h>
#include <linux/mman.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/leaf.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/sysfs_file.h"
#include "probes/buffers.h"
#include "probes/vfio_region.h"

static const char *const kind_names[] = {
	[BUF_ANON] = "anon",
	[BUF_THP] = "thp",
	[BUF_HUGETLB2M] = "hugetlb2m",
	[BUF_HUGETLB1G] = "hugetlb1g",
	[BUF_MEMFD] = "memfd",
	[BUF_BAR] = "bar",
	[BUF_GPU] = "gpu",
	[BUF_UDMABUF] = "udmabuf",
	[BUF_VGEM] = "vgem",
	[BUF_DMABUF_BAR] = "dmabuf-bar",
};

const char *buffer_kind_name(enum buffer_kind kind)
{
	return kind_names[kind];
}

int buffer_is_dmabuf(enum buffer_kind kind)
{
	return kind >= BUF_GPU;
}

uint64_t buffer_granule(const struct buffer_spec *spec)
{
	switch (spec->kind) {
	case BUF_HUGETLB2M:
		return LEAF_2M;
	case BUF_HUGETLB1G:
		return LEAF_1G;
	case BUF_UDMABUF:
		return spec->page_size;
	default:
		return LEAF_4K;
	}
}

/* "PREFIX:BDF/INDEX" into bar_bdf and bar_index. */
static int parse_bar(const char *s, size_t prefix_len, struct buffer_spec *out)
{
	const char *slash = strrchr(s, '/');
	char bdf[32];
	uint64_t index;

	if (!slash || slash < s + prefix_len || (size_t)(slash - s - prefix_len) >= sizeof(bdf))
		return -1;
	snprintf(bdf, sizeof(bdf), "%.*s", (int)(slash - s - prefix_len), s + prefix_len);
	if (parse_bdf(bdf, out->bar_bdf) || parse_u64(slash + 1, &index) || index > 5)
		return -1;
	out->bar_index = index;
	return 0;
}

/* "gpu", "gpu:N", "gpu-vmm", "gpu-vmm:N". */
static int parse_gpu(const char *s, struct buffer_spec *out)
{
	size_t n = !strncmp(s, "gpu-vmm", 7) ? 7 : 3;
	uint64_t ordinal = 0;

	if (s[n] && (s[n] != ':' || parse_u64(s + n + 1, &ordinal) || ordinal > 1023))
		return -1;
	out->kind = BUF_GPU;
	out->gpu_vmm = n == 7;
	out->gpu_ordinal = (int)ordinal;
	return 0;
}

int buffer_parse(const char *s, struct buffer_spec *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++) {
		if (k != BUF_BAR && k != BUF_DMABUF_BAR && k != BUF_GPU &&
		    !strcmp(s, kind_names[k])) {
			out->kind = k;
			out->page_size = LEAF_4K;
			return 0;
		}
	}
	if (!strncmp(s, "udmabuf:", 8)) {
		out->kind = BUF_UDMABUF;
		out->page_size = !strcmp(s + 8, "hugetlb2m") ? LEAF_2M :
				 !strcmp(s + 8, "hugetlb1g") ? LEAF_1G :
							       0;
		return out->page_size ? 0 : -1;
	}
	if (!strncmp(s, "gpu", 3))
		return parse_gpu(s, out);
	if (!strncmp(s, "bar:", 4)) {
		out->kind = BUF_BAR;
		return parse_bar(s, 4, out);
	}
	if (!strncmp(s, "dmabuf-bar:", 11)) {
		out->kind = BUF_DMABUF_BAR;
		return parse_bar(s, 11, out);
	}
	return -1;
}

int buffer_bar_start(const char *root, const char *bdf, unsigned index, uint64_t *start)
{
	char path[PATH_MAX], line[128];
	unsigned long long s;
	FILE *f;
	int rc = -1;

	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/resource", bdf)) {
		log_error("%s: its sysfs path under %s is too long", bdf, root);
		return -1;
	}
	f = fopen(path, "re");
	if (!f) {
		log_error("reading %s: %s", path, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; fgets(line, sizeof(line), f); i++) {
		if (i == index && sscanf(line, "%llx", &s) == 1 && s) {
			*start = s;
			rc = 0;
			break;
		}
	}
	fclose(f);
	if (rc)
		log_error("%s has no BAR %u", bdf, index);
	return rc;
}

static uint64_t align_of(uint64_t addr)
{
	uint64_t align = addr ? addr & -addr : LEAF_1G;

	return align >= LEAF_1G ? LEAF_1G : align >= LEAF_2M ? LEAF_2M : LEAF_4K;
}

static int create_bar(struct buffer *b)
{
	uint64_t region_size;

	if (buffer_bar_start(b->sysfs_root, b->spec.bar_bdf, b->spec.bar_index, &b->bar_start))
		return -1;
	b->vaddr = vfio_region_mmap(b->fd, VFIO_PCI_BAR0_REGION_INDEX + b->spec.bar_index,
				    b->bar_offset, b->size, &region_size);
	if (!b->vaddr)
		return -1;
	b->map_base = b->vaddr;
	b->map_len = b->size;
	b->align = align_of(b->bar_start + b->bar_offset);
	return 0;
}

/* Anonymous, THP or hugetlb memory; THP is over-allocated to start on a 2 MiB boundary. */
static int create_anon(struct buffer *b)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t extra = b->spec.kind == BUF_THP ? LEAF_2M : 0;
	uintptr_t start;

	if (b->spec.kind == BUF_HUGETLB2M)
		flags |= MAP_HUGETLB | MAP_HUGE_2MB;
	else if (b->spec.kind == BUF_HUGETLB1G)
		flags |= MAP_HUGETLB | MAP_HUGE_1GB;
	b->map_len = b->size + extra;
	b->map_base = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (b->map_base == MAP_FAILED) {
		b->map_base = NULL;
		if (flags & MAP_HUGETLB)
			log_error("no %s of %#llx bytes: %s (reserve huge pages in /proc/sys/vm/nr_hugepages "
				  "or /sys/kernel/mm/hugepages)",
				  kind_names[b->spec.kind], (unsigned long long)b->size,
				  strerror(errno));
		else
			log_error("mmap of %#llx bytes: %s", (unsigned long long)b->size,
				  strerror(errno));
		return -1;
	}
	start = ((uintptr_t)b->map_base + extra - 1) & ~(uintptr_t)(extra ? extra - 1 : 0);
	b->vaddr = (void *)(extra ? start : (uintptr_t)b->map_base);
	if (b->spec.kind == BUF_ANON || b->spec.kind == BUF_THP)
		madvise(b->vaddr, b->size,
			b->spec.kind == BUF_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	b->align = b->spec.kind == BUF_THP ? LEAF_2M : buffer_granule(&b->spec);
	return 0;
}

static int create_memfd(struct buffer *b)
{
	b->fd = memfd_create("iommutrace-map", MFD_CLOEXEC);
	if (b->fd < 0 || ftruncate(b->fd, b->size)) {
		log_error("memfd of %#llx bytes: %s", (unsigned long long)b->size, strerror(errno));
		return -1;
	}
	b->map_len = b->size;
	b->map_base = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->map_base == MAP_FAILED) {
		b->map_base = NULL;
		log_error("mmap of the memfd: %s", strerror(errno));
		return -1;
	}
	b->vaddr = b->map_base;
	b->align = LEAF_4K;
	return 0;
}

int buffer_create(struct buffer *b, const struct buffer_spec *spec, uint64_t size, uint64_t offset,
		  int bar_device_fd)
{
	int rc;

	b->spec = *spec;
	b->size = size;
	b->bar_offset = offset;
	b->fd = bar_device_fd;
	if (buffer_is_dmabuf(spec->kind)) {
		log_error("a %s buffer is a dma-buf, which only the kernel maps: use map --import-as",
			  kind_names[spec->kind]);
		return -1;
	}
	if (spec->kind == BUF_BAR)
		return create_bar(b);
	rc = spec->kind == BUF_MEMFD ? create_memfd(b) : create_anon(b);
	if (!rc)
		memset(b->vaddr, 0, size); /* back it now, so the mapping pins what it will be */
	return rc;
}

void buffer_destroy(struct buffer *b)
{
	if (b->map_base)
		munmap(b->map_base, b->map_len);
	if (b->fd >= 0)
		close(b->fd);
	b->map_base = NULL;
	b->fd = -1;
}

void buffer_view(const struct buffer *b, uint64_t offset, uint64_t size, struct buffer *view)
{
	uint64_t off_align = align_of(offset);

	*view = *b;
	view->vaddr = (char *)b->vaddr + offset;
	view->size = size;
	view->map_base = NULL;
	view->map_len = 0;
	view->fd = -1;
	if (b->spec.kind == BUF_BAR) {
		view->bar_offset = b->bar_offset + offset;
		view->align = align_of(b->bar_start + view->bar_offset);
	} else if (offset && off_align < b->align) {
		view->align = off_align;
	}
}
