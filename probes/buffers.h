/* The buffers the harness maps into a device's domain: anonymous memory (huge pages refused),
 * THP, hugetlb 2 MiB / 1 GiB, memfd, and a window of a device's BAR mmap()ed through its vfio
 * device fd (the stand-in for GPU BAR1 and any peer-to-peer target). The dma-buf kinds (a CUDA
 * allocation, udmabuf, vgem, a vfio-pci BAR window) are only parsed here: the kernel imports them
 * (probes/dmabuf_export.h). Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_BUFFERS_H
#define IOMMUTRACE_BUFFERS_H

#include <stdint.h>

enum buffer_kind {
	BUF_ANON,
	BUF_THP,
	BUF_HUGETLB2M,
	BUF_HUGETLB1G,
	BUF_MEMFD,
	BUF_BAR,
	/* dma-bufs, for --import-as */
	BUF_GPU, /* CUDA device memory (cuMemAlloc, or cuMemCreate + cuMemMap: vmm) */
	BUF_UDMABUF, /* a memfd's pages, 4 KiB or hugetlb (page_size) */
	BUF_VGEM, /* a vgem GEM object (shmem pages) */
	BUF_DMABUF_BAR, /* a BAR window exported by vfio-pci (VFIO_DEVICE_FEATURE_DMA_BUF) */
};

struct buffer_spec {
	enum buffer_kind kind;
	char bar_bdf[13]; /* BUF_BAR, BUF_DMABUF_BAR: the device whose BAR it is */
	unsigned bar_index; /* BUF_BAR, BUF_DMABUF_BAR: 0 to 5 */
	int gpu_ordinal; /* BUF_GPU: CUDA device index */
	int gpu_vmm; /* BUF_GPU: allocate with cuMemCreate + cuMemMap */
	uint64_t page_size; /* BUF_UDMABUF: the memfd's pages: 4 KiB, 2 MiB or 1 GiB (hugetlb) */
};

struct buffer {
	struct buffer_spec spec;
	void *vaddr;
	uint64_t size;
	uint64_t align; /* largest page size (4K, 2M, 1G) the backing's alignment allows */
	uint64_t bar_start; /* BUF_BAR: CPU physical address of the BAR */
	uint64_t bar_offset; /* BUF_BAR: the window's offset into it */
	void *map_base; /* what to munmap */
	uint64_t map_len;
	int fd; /* memfd or VFIO device fd; -1 */
	/* BUF_BAR: where buffer_create reads the BAR's address (as for sysfs_path: NULL, the live
	 * system); set by the caller before it */
	const char *sysfs_root;
};

#define BUFFER_INIT \
	{ \
		.fd = -1 \
	}

/**
 * buffer_parse() - Parse a buffer: "anon", "thp", "hugetlb2m", "hugetlb1g", "memfd",
 * "bar:BDF/BARINDEX"; the dma-bufs "gpu[:N]", "gpu-vmm[:N]", "udmabuf", "udmabuf:hugetlb2m",
 * "udmabuf:hugetlb1g", "vgem", "dmabuf-bar:BDF/BARINDEX".
 *
 * Return: 0, or -1 for anything else (the caller says why).
 */
int buffer_parse(const char *s, struct buffer_spec *out);
/**
 * buffer_granule() - The page size a buffer of this kind is made of, which its size must be a
 * multiple of.
 */
uint64_t buffer_granule(const struct buffer_spec *spec);
/**
 * buffer_kind_name() - The name of the kind: "bar" for a BAR window, "dmabuf-bar", "gpu", ...
 */
const char *buffer_kind_name(enum buffer_kind kind);
/**
 * buffer_is_dmabuf() - Whether the kind is a dma-buf, which only the kernel maps (--import-as).
 */
int buffer_is_dmabuf(enum buffer_kind kind);
/**
 * buffer_bar_start() - The CPU physical address of BAR @index of the device @bdf, from its
 * resource file under ROOT/sys.
 * @root: as for sysfs_path(): NULL for the live system
 */
int buffer_bar_start(const char *root, const char *bdf, unsigned index, uint64_t *start);
/**
 * buffer_create() - Allocate and touch the buffer, or map the BAR window at @offset through
 * @bar_device_fd.
 * @bar_device_fd: a VFIO device fd of the BAR's device (BUF_BAR only, else -1), which the buffer
 *                 then owns
 */
int buffer_create(struct buffer *b, const struct buffer_spec *spec, uint64_t size, uint64_t offset,
		  int bar_device_fd);
void buffer_destroy(struct buffer *b);
/**
 * buffer_view() - A part of @b (@size bytes at @offset) that owns nothing: destroying it does
 * nothing, and it lives no longer than @b.
 */
void buffer_view(const struct buffer *b, uint64_t offset, uint64_t size, struct buffer *view);

#endif
