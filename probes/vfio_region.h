/* What a user-space driver does with a VFIO device fd from either mapper (a group's
 * VFIO_GROUP_GET_DEVICE_FD or a bound device cdev): map a region (BAR) into this process, enable
 * bus mastering, and hear when the kernel wants the device back. */
#ifndef IOMMUTRACE_VFIO_REGION_H
#define IOMMUTRACE_VFIO_REGION_H

#include <stdint.h>

/**
 * vfio_region_mmap() - mmap() [@offset, @offset + @size) of the device's region @index.
 * @region_size: set to the region's size
 *
 * Return: the mapping, or NULL (logged).
 */
void *vfio_region_mmap(int device_fd, unsigned index, uint64_t offset, uint64_t size,
		       uint64_t *region_size);

/**
 * vfio_region_export_dmabuf() - [@offset, @offset + @size) of region @index exported as a dma-buf
 * by vfio-pci (VFIO_DEVICE_FEATURE_DMA_BUF).
 * @unsupported_hint: ends the error line where the kernel lacks the feature: what to do instead
 *
 * Return: its fd, or -1 (logged).
 */
int vfio_region_export_dmabuf(int device_fd, unsigned index, uint64_t offset, uint64_t size,
			      const char *unsupported_hint);

/**
 * vfio_request_eventfd() - An eventfd the kernel signals when it wants the device back (it is
 * being removed or unbound: VFIO's request interrupt).
 *
 * Return: the eventfd, or -1 (logged as debug) where the device has none.
 */
int vfio_request_eventfd(int device_fd);
/**
 * vfio_pci_enable_bus_master() - Set Memory Space and Bus Master in the device's PCI command
 * register (through the VFIO config region), which a user-space driver must before its device
 * can DMA.
 */
int vfio_pci_enable_bus_master(int device_fd);
/**
 * vfio_pci_enable_memory() - Set Memory Space only.
 *
 * vfio-pci exports a BAR as a dma-buf revoked while the device does not decode memory, and an
 * importer's attach is then refused (ENODEV).
 */
int vfio_pci_enable_memory(int device_fd);

#endif
