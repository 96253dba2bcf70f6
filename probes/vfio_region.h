/* What a user-space driver does with a VFIO device fd from either mapper (a group's
 * VFIO_GROUP_GET_DEVICE_FD or a bound device cdev): map a region (BAR) into this process, enable
 * bus mastering, and hear when the kernel wants the device back. */
#ifndef IOMMUTRACE_VFIO_REGION_H
#define IOMMUTRACE_VFIO_REGION_H

#include <stdint.h>

/* mmap()s [offset, offset + size) of the device's region index; *region_size gets the region's
 * size. Returns the mapping, or NULL (logged). */
void *vfio_region_mmap(int device_fd, unsigned index, uint64_t offset, uint64_t size,
		       uint64_t *region_size);

/* [offset, offset + size) of region index exported as a dma-buf by vfio-pci
 * (VFIO_DEVICE_FEATURE_DMA_BUF): its fd, or -1 (logged; where the kernel lacks the feature the
 * line ends with unsupported_hint, which says what to do instead). */
int vfio_region_export_dmabuf(int device_fd, unsigned index, uint64_t offset, uint64_t size,
			      const char *unsupported_hint);

/* An eventfd the kernel signals when it wants the device back (it is being removed or unbound:
 * VFIO's request interrupt), or -1 (logged as debug) where the device has none. */
int vfio_request_eventfd(int device_fd);
/* Sets Memory Space and Bus Master in the device's PCI command register (through the VFIO
 * config region), which a user-space driver must before its device can DMA. */
int vfio_pci_enable_bus_master(int device_fd);
/* Sets Memory Space only: vfio-pci exports a BAR as a dma-buf revoked while the device does not
 * decode memory, and an importer's attach is then refused (ENODEV). */
int vfio_pci_enable_memory(int device_fd);

#endif
