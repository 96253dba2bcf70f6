/* The iommufd mapper (see iommufd.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "common/log.h"
#include "common/sysfs_file.h"
#include "probes/iommufd.h"
#include "probes/iommufd_uapi.h"
#include "probes/vfio_region.h"

static void report_missing(void)
{
	log_error("--mapper iommufd: /dev/iommu does not exist: this kernel has no iommufd "
		  "(CONFIG_IOMMUFD; or try 'modprobe iommufd'); use --mapper type1");
}

int iommufd_available(void)
{
	if (access("/dev/iommu", F_OK) == 0)
		return 0;
	report_missing();
	return -1;
}

int iommufd_open(struct iommufd_mapper *m, const char *sysfs_root)
{
	struct it_iommu_ioas_alloc alloc = { .size = sizeof(alloc) };

	memset(m, 0, sizeof(*m));
	m->sysfs_root = sysfs_root;
	m->bar_dmabuf = -1;
	m->iommufd = open("/dev/iommu", O_RDWR | O_CLOEXEC);
	if (m->iommufd < 0) {
		if (errno == ENOENT)
			report_missing();
		else
			log_error("opening /dev/iommu: %s", strerror(errno));
		return -1;
	}
	if (ioctl(m->iommufd, IT_IOMMU_IOAS_ALLOC, &alloc)) {
		log_error("IOMMU_IOAS_ALLOC: %s", strerror(errno));
		close(m->iommufd);
		m->iommufd = -1;
		return -1;
	}
	m->ioas_id = alloc.out_ioas_id;
	return 0;
}

/* /dev/vfio/devices/vfioN of the device, from ROOT/sys/bus/pci/devices/BDF/vfio-dev/vfioN. */
static int cdev_path(const struct iommufd_mapper *m, const char *bdf, char *out, size_t len)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = -1;

	if (sysfs_path(dir, sizeof(dir), m->sysfs_root, "/sys/bus/pci/devices/%s/vfio-dev", bdf)) {
		log_error("%s: its sysfs path under %s is too long", bdf, m->sysfs_root);
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		log_error("%s has no VFIO device cdev (%s: %s): this kernel's vfio lacks "
			  "CONFIG_VFIO_DEVICE_CDEV (Linux 6.6+); use --mapper type1",
			  bdf, dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, "vfio", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9' &&
		    strlen(e->d_name) < 16) {
			snprintf(out, len, "/dev/vfio/devices/%s", e->d_name);
			rc = 0;
			break;
		}
	}
	closedir(d);
	if (rc)
		log_error("%s lists no VFIO device cdev; use --mapper type1", dir);
	return rc;
}

static int find_device(struct iommufd_mapper *m, const char *bdf)
{
	for (int i = 0; i < m->ndevices; i++)
		if (!strcmp(m->device_bdfs[i], bdf))
			return i;
	return -1;
}

int iommufd_add_device(struct iommufd_mapper *m, const char *bdf)
{
	struct it_vfio_device_bind_iommufd bind = { .argsz = sizeof(bind), .iommufd = m->iommufd };
	struct it_vfio_device_attach_iommufd_pt attach = { .argsz = sizeof(attach),
							   .pt_id = m->ioas_id };
	char path[64];
	int fd;

	if (find_device(m, bdf) >= 0)
		return 0;
	if (m->ndevices == IOMMUFD_MAX_DEVICES) {
		log_error("more than %d devices in one iommufd", IOMMUFD_MAX_DEVICES);
		return -1;
	}
	if (cdev_path(m, bdf, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		log_error("opening %s (%s): %s", path, bdf, strerror(errno));
		return -1;
	}
	if (ioctl(fd, IT_VFIO_DEVICE_BIND_IOMMUFD, &bind)) {
		log_error("VFIO_DEVICE_BIND_IOMMUFD of %s: %s%s", bdf, strerror(errno),
			  errno == EBUSY ? " (bind every device of its IOMMU group to vfio-pci)" :
					   "");
		close(fd);
		return -1;
	}
	if (ioctl(fd, IT_VFIO_DEVICE_ATTACH_IOMMUFD_PT, &attach)) {
		log_error("VFIO_DEVICE_ATTACH_IOMMUFD_PT of %s to IOAS %u: %s", bdf, m->ioas_id,
			  strerror(errno));
		close(fd);
		return -1;
	}
	m->device_fds[m->ndevices] = fd;
	snprintf(m->device_bdfs[m->ndevices++], sizeof(m->device_bdfs[0]), "%s", bdf);
	return 0;
}

int iommufd_device_fd(struct iommufd_mapper *m, const char *bdf)
{
	int i = find_device(m, bdf), fd;

	if (i < 0) {
		log_error("%s is not bound to the iommufd", bdf);
		return -1;
	}
	fd = fcntl(m->device_fds[i], F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		log_error("duplicating the VFIO cdev fd of %s: %s", bdf, strerror(errno));
	return fd;
}

static const unsigned map_flags =
	IT_IOMMU_IOAS_MAP_FIXED_IOVA | IT_IOMMU_IOAS_MAP_READABLE | IT_IOMMU_IOAS_MAP_WRITEABLE;

int iommufd_map(struct iommufd_mapper *m, void *vaddr, uint64_t iova, uint64_t size)
{
	struct it_iommu_ioas_map map = { .size = sizeof(map),
					 .flags = map_flags,
					 .ioas_id = m->ioas_id,
					 .user_va = (uintptr_t)vaddr,
					 .length = size,
					 .iova = iova };

	if (ioctl(m->iommufd, IT_IOMMU_IOAS_MAP, &map)) {
		log_error("IOMMU_IOAS_MAP of %#llx bytes at IOVA %#llx: %s",
			  (unsigned long long)size, (unsigned long long)iova, strerror(errno));
		return -1;
	}
	return 0;
}

/* what names the file in messages; einval_means says what EINVAL tells, or NULL. */
static int map_file(struct iommufd_mapper *m, int fd, uint64_t offset, uint64_t iova, uint64_t size,
		    const char *what, const char *einval_means)
{
	struct it_iommu_ioas_map_file map = { .size = sizeof(map),
					      .flags = map_flags,
					      .ioas_id = m->ioas_id,
					      .fd = fd,
					      .start = offset,
					      .length = size,
					      .iova = iova };

	if (ioctl(m->iommufd, IT_IOMMU_IOAS_MAP_FILE, &map)) {
		if (errno == ENOTTY)
			log_error("IOMMU_IOAS_MAP_FILE: this kernel's iommufd has no file mappings "
				  "(Linux 6.13+); map the %s with --mapper type1",
				  what);
		else
			log_error("IOMMU_IOAS_MAP_FILE of the %s, %#llx bytes at IOVA %#llx: %s%s%s",
				  what, (unsigned long long)size, (unsigned long long)iova,
				  strerror(errno), errno == EINVAL && einval_means ? "; " : "",
				  errno == EINVAL && einval_means ? einval_means : "");
		return -1;
	}
	return 0;
}

int iommufd_map_file(struct iommufd_mapper *m, int fd, uint64_t offset, uint64_t iova,
		     uint64_t size)
{
	return map_file(m, fd, offset, iova, size, "memfd", NULL);
}

int iommufd_map_bar(struct iommufd_mapper *m, int device_fd, unsigned region, uint64_t offset,
		    uint64_t iova, uint64_t size)
{
	if (m->bar_dmabuf < 0)
		m->bar_dmabuf = vfio_region_export_dmabuf(device_fd, region, offset, size,
							  "which iommufd needs to map MMIO; use "
							  "--mapper type1");
	if (m->bar_dmabuf < 0)
		return -1;
	return map_file(m, m->bar_dmabuf, 0, iova, size, "BAR dma-buf",
			"an iommufd that takes memfds only refuses dma-bufs: use --mapper type1");
}

int iommufd_unmap(struct iommufd_mapper *m, uint64_t iova, uint64_t size)
{
	struct it_iommu_ioas_unmap unmap = { .size = sizeof(unmap),
					     .ioas_id = m->ioas_id,
					     .iova = iova,
					     .length = size };

	if (ioctl(m->iommufd, IT_IOMMU_IOAS_UNMAP, &unmap)) {
		log_error("IOMMU_IOAS_UNMAP of %#llx bytes at IOVA %#llx: %s",
			  (unsigned long long)size, (unsigned long long)iova, strerror(errno));
		return -1;
	}
	return 0;
}

void iommufd_close(struct iommufd_mapper *m)
{
	if (m->bar_dmabuf >= 0)
		close(m->bar_dmabuf);
	m->bar_dmabuf = -1;
	for (int i = 0; i < m->ndevices; i++)
		close(m->device_fds[i]);
	m->ndevices = 0;
	if (m->iommufd >= 0)
		close(m->iommufd);
	m->iommufd = -1;
}
