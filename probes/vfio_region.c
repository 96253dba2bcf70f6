/* mmap() of a VFIO device region (see vfio_region.h). */
#include <errno.h>
#include <linux/vfio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "common/log.h"
#include "vfio_region.h"

void *vfio_region_mmap(int device_fd, unsigned index, uint64_t offset, uint64_t size,
		       uint64_t *region_size)
{
	struct vfio_region_info info = { .argsz = sizeof(info), .index = index };
	void *p;

	if (ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, &info)) {
		log_error("VFIO region %u: %s", index, strerror(errno));
		return NULL;
	}
	*region_size = info.size;
	if (!(info.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		log_error("VFIO region %u cannot be mmap()ed", index);
		return NULL;
	}
	if (offset > info.size || size > info.size - offset) {
		log_error("window of %#llx bytes at %#llx does not fit in region %u of %#llx bytes",
			  (unsigned long long)size, (unsigned long long)offset, index,
			  (unsigned long long)info.size);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, device_fd, info.offset + offset);
	if (p == MAP_FAILED) {
		log_error("mmap of VFIO region %u at %#llx: %s", index, (unsigned long long)offset,
			  strerror(errno));
		return NULL;
	}
	return p;
}
