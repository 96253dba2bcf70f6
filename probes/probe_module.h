/* User space of iommutrace's probe module (probes/kmod, /dev/iommutrace-probe): mappings made by
 * the kernel's DMA API on behalf of a device the user names, as a kernel driver would make them,
 * so that they land in that device's DMA domain while it stays on its own driver. Each mapping
 * lasts until probe_module_release() or probe_module_close(). Functions log one line on failure
 * and return -1. */
#ifndef IOMMUTRACE_PROBE_MODULE_H
#define IOMMUTRACE_PROBE_MODULE_H

#include <stdint.h>

struct probe_module {
	int fd;
};

#define PROBE_MODULE_INIT \
	{ \
		.fd = -1 \
	}

/**
 * probe_module_open() - Open the module's device; a missing one is one line saying how to build
 * and load it.
 */
int probe_module_open(struct probe_module *m);
/**
 * probe_module_map_resource() - dma_map_resource of @size bytes at @offset into BAR @bar_index of
 * @peer, for @importer.
 * @phys: the range's CPU physical address
 * @dma: its DMA address (an IOVA in the importer's domain)
 * @handle: the mapping's handle
 *
 * What a GPU driver's dma-buf exporter does for a peer importer, and BaM's path.
 */
int probe_module_map_resource(struct probe_module *m, const char *importer, const char *peer,
			      unsigned bar_index, uint64_t offset, uint64_t size, uint64_t *phys,
			      uint64_t *dma, uint32_t *handle);
/* One DMA segment of an import: what the device puts on the bus to reach that part. */
struct probe_segment {
	uint64_t dma_addr;
	uint64_t length;
};

/* What importing a dma-buf gave. */
struct probe_import {
	uint32_t handle;
	uint64_t dmabuf_size; /* the dma-buf's size */
	char exporter[32]; /* the exporter's name as the kernel has it (exp_name) */
	struct probe_segment *segments; /* in the dma-buf's order; free() them */
	uint32_t nsegments;
};

/**
 * probe_module_import_dmabuf() - dma_buf_dynamic_attach (allow_peer2peer) + dma_buf_map_attachment
 * of the dma-buf @dmabuf_fd on behalf of @importer, as a peer-to-peer capable driver imports one.
 * @bar_exporter: the dma-buf is a BAR window of another device, whose refusal (no P2PDMA path
 *                between the two) is explained in the error line
 *
 * The exporter maps it into the importer's DMA domain.
 */
int probe_module_import_dmabuf(struct probe_module *m, const char *importer, int dmabuf_fd,
			       int bar_exporter, struct probe_import *out);
/**
 * probe_module_release() - Undo one mapping or import now.
 */
int probe_module_release(struct probe_module *m, uint32_t handle);
/**
 * probe_module_close() - Close the device, which undoes every mapping still made.
 */
void probe_module_close(struct probe_module *m);

#endif
