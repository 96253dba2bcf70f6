/* The iommufd and VFIO device-cdev ioctls the iommufd mapper uses, as the kernel's uapi
 * (include/uapi/linux/iommufd.h and vfio.h, Linux 6.6 and later) defines them: Debian 12's
 * linux-libc-dev (6.1) has neither. Sizes are part of the ABI and checked below. */
#ifndef IOMMUTRACE_IOMMUFD_UAPI_H
#define IOMMUTRACE_IOMMUFD_UAPI_H

#include <assert.h>
#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/vfio.h>

#define IOMMUFD_IOCTL_TYPE ';'

/* iommufd object ids; one IOAS holds the IOVA -> memory mappings of the devices attached to it */
struct it_iommu_ioas_alloc {
	__u32 size;
	__u32 flags;
	__u32 out_ioas_id;
};
#define IT_IOMMU_IOAS_ALLOC _IO(IOMMUFD_IOCTL_TYPE, 0x81)

#define IT_IOMMU_IOAS_MAP_FIXED_IOVA (1u << 0)
#define IT_IOMMU_IOAS_MAP_WRITEABLE (1u << 1)
#define IT_IOMMU_IOAS_MAP_READABLE (1u << 2)

struct it_iommu_ioas_map {
	__u32 size;
	__u32 flags;
	__u32 ioas_id;
	__u32 reserved;
	__aligned_u64 user_va;
	__aligned_u64 length;
	__aligned_u64 iova;
};
#define IT_IOMMU_IOAS_MAP _IO(IOMMUFD_IOCTL_TYPE, 0x85)

struct it_iommu_ioas_unmap {
	__u32 size;
	__u32 ioas_id;
	__aligned_u64 iova;
	__aligned_u64 length;
};
#define IT_IOMMU_IOAS_UNMAP _IO(IOMMUFD_IOCTL_TYPE, 0x86)

/* Linux 6.13: map [start, start + length) of a memfd without a user address */
struct it_iommu_ioas_map_file {
	__u32 size;
	__u32 flags;
	__u32 ioas_id;
	__s32 fd;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 iova;
};
#define IT_IOMMU_IOAS_MAP_FILE _IO(IOMMUFD_IOCTL_TYPE, 0x8f)

/* VFIO_DEVICE_FEATURE_GET of this feature exports ranges of a vfio-pci region (a BAR) as a
 * dma-buf, which IOMMU_IOAS_MAP_FILE takes where iommufd accepts dma-bufs: how iommufd maps MMIO,
 * which it cannot pin through a user address. The header is followed by the ranges. */
#define IT_VFIO_DEVICE_FEATURE_DMA_BUF 11

struct it_vfio_region_dma_range {
	__aligned_u64 offset;
	__aligned_u64 length;
};

struct it_vfio_device_feature_dma_buf {
	__u32 region_index;
	__u32 open_flags;
	__u32 flags;
	__u32 nr_ranges;
};

/* On a /dev/vfio/devices/vfioN fd: bind the device to an iommufd, then attach it to an IOAS
 * (the kernel gives it a domain for that IOAS). Later kernels append fields behind a flag;
 * argsz = these sizes works on all of them. */
struct it_vfio_device_bind_iommufd {
	__u32 argsz;
	__u32 flags;
	__s32 iommufd;
	__u32 out_devid;
};
#define IT_VFIO_DEVICE_BIND_IOMMUFD _IO(VFIO_TYPE, VFIO_BASE + 18)

struct it_vfio_device_attach_iommufd_pt {
	__u32 argsz;
	__u32 flags;
	__u32 pt_id;
};
#define IT_VFIO_DEVICE_ATTACH_IOMMUFD_PT _IO(VFIO_TYPE, VFIO_BASE + 19)

static_assert(sizeof(struct it_iommu_ioas_alloc) == 12, "iommu_ioas_alloc ABI");
static_assert(sizeof(struct it_iommu_ioas_map) == 40, "iommu_ioas_map ABI");
static_assert(sizeof(struct it_iommu_ioas_unmap) == 24, "iommu_ioas_unmap ABI");
static_assert(sizeof(struct it_iommu_ioas_map_file) == 40, "iommu_ioas_map_file ABI");
static_assert(sizeof(struct it_vfio_device_bind_iommufd) == 16, "vfio_device_bind_iommufd ABI");
static_assert(sizeof(struct it_vfio_device_feature_dma_buf) == 16,
	      "vfio_device_feature_dma_buf ABI");
static_assert(sizeof(struct it_vfio_region_dma_range) == 16, "vfio_region_dma_range ABI");
static_assert(sizeof(struct it_vfio_device_attach_iommufd_pt) == 12,
	      "vfio_device_attach_iommufd_pt ABI");

#endif
