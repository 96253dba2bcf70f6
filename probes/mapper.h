/* The one interface through which the harness maps buffers into a device's IOMMU domain, over
 * its two implementations: VFIO type1 (container and groups; every kernel) and iommufd (IOAS and
 * VFIO device cdevs; kernels built with it). Callers do not look past it. Functions log one line
 * on failure and return -1. */
#ifndef IOMMUTRACE_MAPPER_H
#define IOMMUTRACE_MAPPER_H

#include <stdint.h>
#include "probes/buffers.h"
#include "probes/iommufd.h"
#include "probes/vfio_type1.h"

enum mapper_kind { MAPPER_TYPE1, MAPPER_IOMMUFD };

struct mapper {
	enum mapper_kind kind;
	struct vfio_type1 type1;
	struct iommufd_mapper iommufd;
};

#define MAPPER_INIT \
	{ \
		.type1 = VFIO_TYPE1_INIT, .iommufd = IOMMUFD_MAPPER_INIT \
	}

/**
 * mapper_default_iova() - The IOVA for a buffer of @size bytes when none is given.
 *
 * Either is aligned to the largest page (1 GiB) any buffer allows.
 *
 * Return: 1 GiB, or 4 GiB when the range would reach 0xfee00000, the x86 MSI window that type1
 * reserves in every domain.
 */
uint64_t mapper_default_iova(uint64_t size);
/**
 * mapper_parse() - Parse "type1" or "iommufd".
 *
 * Return: 0, or -1 for anything else (the caller says why).
 */
int mapper_parse(const char *s, enum mapper_kind *kind);
const char *mapper_name(enum mapper_kind kind);

/**
 * mapper_available() - Whether this kernel has the mapper.
 *
 * VFIO itself is checked when devices are bound.
 *
 * Return: 0, or one line and -1 when it certainly does not (iommufd without /dev/iommu).
 */
int mapper_available(enum mapper_kind kind);
/**
 * mapper_open() - Open a mapper of @kind.
 * @sysfs_root: where the devices added later are looked up (as for sysfs_path(): NULL for the
 *              live system)
 */
int mapper_open(struct mapper *m, enum mapper_kind kind, const char *sysfs_root);
/**
 * mapper_add_device() - Put the device (bound to vfio-pci) into the mapper's address space.
 */
int mapper_add_device(struct mapper *m, const char *bdf);
/**
 * mapper_device_fd() - A new VFIO device fd of an added device, for buffer_create()'s BAR window;
 * the caller owns it.
 */
int mapper_device_fd(struct mapper *m, const char *bdf);
/**
 * mapper_pgsizes() - The page sizes the domain takes.
 *
 * Return: the page sizes, or 0 when the mapper does not tell (iommufd).
 */
uint64_t mapper_pgsizes(struct mapper *m);
/**
 * mapper_map() - Map the whole buffer at @iova, read and write.
 *
 * By its user address; under iommufd a memfd by file offset and a BAR window as the dma-buf
 * vfio-pci exports of it (IOMMU_IOAS_MAP_FILE both): iommufd pins pages, and a BAR's mmap has
 * none.
 */
int mapper_map(struct mapper *m, const struct buffer *b, uint64_t iova);
int mapper_unmap(struct mapper *m, uint64_t iova, uint64_t size);
void mapper_close(struct mapper *m);

#endif
