/* A region (BAR) of a VFIO device mapped into this process, through a device fd from either
 * mapper: a group's VFIO_GROUP_GET_DEVICE_FD or a bound device cdev. */
#ifndef IOMMUTRACE_VFIO_REGION_H
#define IOMMUTRACE_VFIO_REGION_H

#include <stdint.h>

/* mmap()s [offset, offset + size) of the device's region index; *region_size gets the region's
 * size. Returns the mapping, or NULL (logged). */
void *vfio_region_mmap(int device_fd, unsigned index, uint64_t offset, uint64_t size,
		       uint64_t *region_size);

#endif
