/* The dma-bufs `map --import-as` has the kernel import on behalf of a device: a CUDA allocation
 * (probes/cuda_export.h), a udmabuf over a memfd (4 KiB or hugetlb pages), a vgem GEM object, and
 * a window of a PCI BAR exported by vfio-pci (whose device is bound to vfio-pci for it, and put
 * back on close). Each says in one line why this machine cannot make it (no /dev/udmabuf, no
 * vgem, no NVIDIA driver, a vfio-pci without VFIO_DEVICE_FEATURE_DMA_BUF). Functions log one line
 * on failure and return -1. */
#ifndef IOMMUTRACE_DMABUF_EXPORT_H
#define IOMMUTRACE_DMABUF_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/cuda_export.h"
#include "probes/device_binding.h"
#include "probes/mapper.h"

struct dmabuf_export {
	int fd; /* the dma-buf; -1 */
	struct buffer_spec spec;
	uint64_t size;
	void *vaddr; /* udmabuf: the memfd's pages mapped here (their physical runs can
				 * be read); else NULL */
	uint64_t bar_start; /* dmabuf-bar: the BAR's CPU physical address */
	uint64_t bar_offset; /* dmabuf-bar: the window's offset into it */
	char gpu_bdf[13]; /* gpu: the GPU's PCI address */
	/* what keeps it alive */
	int memfd, drm_fd, device_fd; /* device_fd: the BAR's VFIO device */
	uint32_t gem_handle; /* vgem; 0: none */
	struct device_binding bar_dev;
	struct mapper mapper;
	struct cuda_export cuda;
};

#define DMABUF_EXPORT_INIT \
	{ \
		.fd = -1, .memfd = -1, .drm_fd = -1, .device_fd = -1, .mapper = MAPPER_INIT, \
		.cuda = CUDA_EXPORT_INIT \
	}

/**
 * dmabuf_export_create() - Make a dma-buf of @size bytes of the spec's kind (a dma-buf kind).
 * @offset: into the BAR (dmabuf-bar only)
 * @force: bind a BAR's device whose block devices are in use
 */
int dmabuf_export_create(struct dmabuf_export *e, const struct buffer_spec *spec, uint64_t size,
			 uint64_t offset, bool force);
/**
 * dmabuf_export_close() - Close the dma-buf and free what it needed, putting a BAR's device back
 * on its driver.
 *
 * Safe after a failed or partial create, and twice.
 *
 * Return: 0, or -1 when putting the device back failed.
 */
int dmabuf_export_close(struct dmabuf_export *e);

#endif
