/* VFIO type1 container, groups, DMA map/unmap and BAR mmap (see vfio_type1.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "common/log.h"
#include "common/sysfs_file.h"
#include "probes/vfio_type1.h"

int vfio_type1_open(struct vfio_type1 *v, const char *sysfs_root)
{
	memset(v, 0, sizeof(*v));
	v->sysfs_root = sysfs_root;
	v->container_fd = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (v->container_fd < 0) {
		log_error("opening /dev/vfio/vfio: %s (is the vfio module loaded?)",
			  strerror(errno));
		return -1;
	}
	if (ioctl(v->container_fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		log_error("/dev/vfio/vfio: unknown VFIO API version");
		goto fail;
	}
	if (ioctl(v->container_fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
		log_error("VFIO has no type1v2 IOMMU here (is vfio_iommu_type1 loaded?)");
		goto fail;
	}
	return 0;
fail:
	close(v->container_fd);
	v->container_fd = -1;
	return -1;
}

static int group_of(const struct vfio_type1 *v, const char *bdf)
{
	char path[PATH_MAX], name[SYSFS_NAME_MAX + 1];
	long id;

	if (sysfs_path(path, sizeof(path), v->sysfs_root, "/sys/bus/pci/devices/%s/iommu_group",
		       bdf) ||
	    sysfs_link_name(path, name, sizeof(name)) || sysfs_parse_long(name, 0, INT_MAX, &id)) {
		log_error("%s has no IOMMU group: %s", bdf, strerror(errno));
		return -1;
	}
	return (int)id;
}

static int open_group(int id)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/vfio/%d", id);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		log_error("opening %s: %s", path, strerror(errno));
		return -1;
	}
	if (ioctl(fd, VFIO_GROUP_GET_STATUS, &status) ||
	    !(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		log_error("IOMMU group %d is not viable: bind every device in it to vfio-pci", id);
		close(fd);
		return -1;
	}
	return fd;
}

int vfio_type1_add_device_group(struct vfio_type1 *v, const char *bdf)
{
	int id = group_of(v, bdf), fd;

	if (id < 0)
		return -1;
	for (int i = 0; i < v->ngroups; i++)
		if (v->group_ids[i] == id)
			return 0;
	if (v->ngroups == VFIO_TYPE1_MAX_GROUPS) {
		log_error("more than %d IOMMU groups in one container", VFIO_TYPE1_MAX_GROUPS);
		return -1;
	}
	fd = open_group(id);
	if (fd < 0)
		return -1;
	if (ioctl(fd, VFIO_GROUP_SET_CONTAINER, &v->container_fd)) {
		log_error("adding IOMMU group %d to the VFIO container: %s", id, strerror(errno));
		close(fd);
		return -1;
	}
	v->group_fds[v->ngroups] = fd;
	v->group_ids[v->ngroups++] = id;
	if (!v->iommu_set) {
		if (ioctl(v->container_fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU)) {
			log_error("VFIO_SET_IOMMU type1v2: %s", strerror(errno));
			return -1;
		}
		v->iommu_set = 1;
	}
	return 0;
}

int vfio_type1_device_fd(struct vfio_type1 *v, const char *bdf)
{
	int id = group_of(v, bdf);

	if (id < 0)
		return -1;
	for (int i = 0; i < v->ngroups; i++) {
		if (v->group_ids[i] != id)
			continue;
		int fd = ioctl(v->group_fds[i], VFIO_GROUP_GET_DEVICE_FD, bdf);
		if (fd < 0)
			log_error("getting the VFIO device fd of %s: %s", bdf, strerror(errno));
		return fd;
	}
	log_error("the IOMMU group of %s is not in the VFIO container", bdf);
	return -1;
}

int vfio_type1_pgsizes(struct vfio_type1 *v, uint64_t *pgsize_bitmap)
{
	struct vfio_iommu_type1_info info = { .argsz = sizeof(info) };

	errno = 0;
	if (ioctl(v->container_fd, VFIO_IOMMU_GET_INFO, &info) ||
	    !(info.flags & VFIO_IOMMU_INFO_PGSIZES)) {
		log_warn("VFIO_IOMMU_GET_INFO gave no page sizes (%s): the expected pages come from "
			 "the recorded domain's, if any",
			 errno ? strerror(errno) : "not in its answer");
		return -1;
	}
	*pgsize_bitmap = info.iova_pgsizes;
	return 0;
}

int vfio_type1_map(struct vfio_type1 *v, void *vaddr, uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = size,
	};

	if (ioctl(v->container_fd, VFIO_IOMMU_MAP_DMA, &map)) {
		log_error("VFIO_IOMMU_MAP_DMA of %#llx bytes at IOVA %#llx: %s",
			  (unsigned long long)size, (unsigned long long)iova, strerror(errno));
		return -1;
	}
	return 0;
}

int vfio_type1_unmap(struct vfio_type1 *v, uint64_t iova, uint64_t size)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = size,
	};

	if (ioctl(v->container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap)) {
		log_error("VFIO_IOMMU_UNMAP_DMA of %#llx bytes at IOVA %#llx: %s",
			  (unsigned long long)size, (unsigned long long)iova, strerror(errno));
		return -1;
	}
	return 0;
}

void vfio_type1_close(struct vfio_type1 *v)
{
	for (int i = 0; i < v->ngroups; i++)
		close(v->group_fds[i]);
	v->ngroups = 0;
	if (v->container_fd >= 0)
		close(v->container_fd);
	v->container_fd = -1;
}
