/* The iommufd mapper: an IOAS in /dev/iommu, the devices' VFIO cdevs (/dev/vfio/devices/vfioN)
 * bound to it and attached to the IOAS, IOMMU_IOAS_MAP of user memory, IOMMU_IOAS_MAP_FILE of a
 * memfd or of a BAR window exported by vfio-pci as a dma-buf, IOMMU_IOAS_UNMAP. Needs a kernel
 * with CONFIG_IOMMUFD and CONFIG_VFIO_DEVICE_CDEV; where either is missing it says so in one line.
 * Devices must already be bound to vfio-pci (device_binding.h). Functions log one line on failure
 * and return -1. */
#ifndef IOMMUTRACE_IOMMUFD_H
#define IOMMUTRACE_IOMMUFD_H

#include <stdint.h>

#define IOMMUFD_MAX_DEVICES 4

struct iommufd_mapper {
	int iommufd;
	uint32_t ioas_id;
	int device_fds[IOMMUFD_MAX_DEVICES];
	char device_bdfs[IOMMUFD_MAX_DEVICES][13];
	int ndevices;
	int bar_dmabuf; /* the BAR window's dma-buf, exported at its first map; -1 */
	const char *sysfs_root; /* where the devices' cdevs are looked up: NULL, the live system */
};

/* A closed mapper: iommufd_close() on it does nothing. */
#define IOMMUFD_MAPPER_INIT \
	{ \
		.iommufd = -1, .bar_dmabuf = -1 \
	}

/**
 * iommufd_available() - Whether /dev/iommu exists.
 *
 * Return: 0 when it does; otherwise one line saying the kernel lacks iommufd, and -1.
 */
int iommufd_available(void);
/**
 * iommufd_open() - Open /dev/iommu and allocate an IOAS.
 * @sysfs_root: where the devices' VFIO cdevs are then looked up (as for sysfs_path(): NULL for
 *              the live system)
 */
int iommufd_open(struct iommufd_mapper *m, const char *sysfs_root);
/**
 * iommufd_add_device() - Open the device's VFIO cdev, bind it to the iommufd and attach it to the
 * IOAS (once per device).
 */
int iommufd_add_device(struct iommufd_mapper *m, const char *bdf);
/**
 * iommufd_device_fd() - A new fd of an added device (for its BAR mmap); the caller closes it.
 */
int iommufd_device_fd(struct iommufd_mapper *m, const char *bdf);
/**
 * iommufd_map() - IOMMU_IOAS_MAP (read and write) of user memory at a fixed IOVA.
 */
int iommufd_map(struct iommufd_mapper *m, void *vaddr, uint64_t iova, uint64_t size);
/**
 * iommufd_map_file() - IOMMU_IOAS_MAP_FILE of [@offset, @offset + @size) of a memfd at a fixed
 * IOVA.
 */
int iommufd_map_file(struct iommufd_mapper *m, int fd, uint64_t offset, uint64_t iova,
		     uint64_t size);
/**
 * iommufd_map_bar() - Map [@offset, @offset + @size) of @region (a BAR) of the device behind
 * @device_fd.
 *
 * The region is exported once as a dma-buf (VFIO_DEVICE_FEATURE_DMA_BUF), then mapped by
 * IOMMU_IOAS_MAP_FILE of it.
 */
int iommufd_map_bar(struct iommufd_mapper *m, int device_fd, unsigned region, uint64_t offset,
		    uint64_t iova, uint64_t size);
int iommufd_unmap(struct iommufd_mapper *m, uint64_t iova, uint64_t size);
/**
 * iommufd_close() - Close the devices (which detaches them) and the iommufd (which drops the
 * IOAS).
 */
void iommufd_close(struct iommufd_mapper *m);

#endif
