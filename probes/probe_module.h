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

#define PROBE_MODULE_INIT { .fd = -1 }

/* Opens the module's device; a missing one is one line saying how to build and load it. */
int probe_module_open(struct probe_module *m);
/* dma_map_resource of size bytes at offset into BAR bar_index of peer, for importer: what a GPU
 * driver's dma-buf exporter does for a peer importer, and BaM's path. Gives the range's CPU
 * physical address, its DMA address (an IOVA in the importer's domain) and a handle. */
int probe_module_map_resource(struct probe_module *m, const char *importer, const char *peer,
			      unsigned bar_index, uint64_t offset, uint64_t size, uint64_t *phys,
			      uint64_t *dma, uint32_t *handle);
/* Undoes one mapping now. */
int probe_module_release(struct probe_module *m, uint32_t handle);
/* Closes the device, which undoes every mapping still made. */
void probe_module_close(struct probe_module *m);

#endif
