/* The VFIO type1 mapper: one container with the type1v2 IOMMU, the groups of the devices whose
 * domain receives mappings, VFIO_IOMMU_MAP_DMA / UNMAP_DMA, and device fds (for the BAR mmap of
 * vfio_region.h). Every device must already be bound to vfio-pci (device_binding.h).
 * Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_VFIO_TYPE1_H
#define IOMMUTRACE_VFIO_TYPE1_H

#include <stdint.h>

#define VFIO_TYPE1_MAX_GROUPS 4

struct vfio_type1 {
	int container_fd;
	int group_fds[VFIO_TYPE1_MAX_GROUPS];
	int group_ids[VFIO_TYPE1_MAX_GROUPS];
	int ngroups;
	int iommu_set;
	const char *sysfs_root; /* where the groups are read: NULL, the live system */
};

/* A closed container: vfio_type1_close() on it does nothing. */
#define VFIO_TYPE1_INIT \
	{ \
		.container_fd = -1 \
	}

/**
 * vfio_type1_open() - Open /dev/vfio/vfio and check the API version and type1v2 support.
 * @sysfs_root: where the devices' IOMMU groups are then read (as for sysfs_path(): NULL for the
 *              live system)
 */
int vfio_type1_open(struct vfio_type1 *v, const char *sysfs_root);
/**
 * vfio_type1_add_device_group() - Add the IOMMU group of the device (bound to vfio-pci) to the
 * container, once per group.
 *
 * The first group also sets the container's IOMMU to type1v2, which gives it its own domain.
 */
int vfio_type1_add_device_group(struct vfio_type1 *v, const char *bdf);
/**
 * vfio_type1_device_fd() - A device fd of a device whose group was added; the caller closes it.
 */
int vfio_type1_device_fd(struct vfio_type1 *v, const char *bdf);
/**
 * vfio_type1_pgsizes() - The page sizes the container's domains take (VFIO_IOMMU_GET_INFO
 * iova_pgsizes).
 *
 * Return: 0, or -1 with a warning: the caller goes on without them.
 */
int vfio_type1_pgsizes(struct vfio_type1 *v, uint64_t *pgsize_bitmap);
/**
 * vfio_type1_map() - VFIO_IOMMU_MAP_DMA (read and write) of [@iova, @iova + @size).
 */
int vfio_type1_map(struct vfio_type1 *v, void *vaddr, uint64_t iova, uint64_t size);
/**
 * vfio_type1_unmap() - VFIO_IOMMU_UNMAP_DMA of [@iova, @iova + @size).
 */
int vfio_type1_unmap(struct vfio_type1 *v, uint64_t iova, uint64_t size);
/**
 * vfio_type1_close() - Close the groups and the container: the kernel drops whatever is still
 * mapped.
 */
void vfio_type1_close(struct vfio_type1 *v);

#endif
