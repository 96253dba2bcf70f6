/* Making the dma-bufs that map --import-as imports (see dmabuf_export.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <linux/udmabuf.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/leaf.h"
#include "common/log.h"
#include "probes/dmabuf_export.h"
#include "probes/drm_uapi.h"
#include "probes/vfio_region.h"

#define UDMABUF_DEVICE "/dev/udmabuf"

/* A memfd of size bytes in pages of page_size, backed now (mapped and written, so that what
 * udmabuf pins is what pagemap shows), sealed against shrinking as udmabuf requires, then
 * exported by /dev/udmabuf. */
static int create_udmabuf(struct dmabuf_export *e)
{
	unsigned hugeflags = e->spec.page_size == LEAF_2M ? MFD_HUGETLB | MFD_HUGE_2MB :
			     e->spec.page_size == LEAF_1G ? MFD_HUGETLB | MFD_HUGE_1GB :
							    0;
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = e->size };
	int dev = open(UDMABUF_DEVICE, O_RDWR | O_CLOEXEC);

	if (dev < 0) {
		if (errno == ENOENT)
			log_error("%s does not exist: this kernel has no udmabuf (built without "
				  "CONFIG_UDMABUF, as Debian's 6.1 is, or try 'modprobe udmabuf')",
				  UDMABUF_DEVICE);
		else
			log_error("cannot open %s: %s", UDMABUF_DEVICE, strerror(errno));
		return -1;
	}
	e->memfd = memfd_create("iommutrace-udmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING | hugeflags);
	if (e->memfd < 0 || ftruncate(e->memfd, (off_t)e->size)) {
		log_error("memfd of %#llx bytes%s: %s", (unsigned long long)e->size,
			  hugeflags ? " in hugetlb pages" : "", strerror(errno));
		goto fail;
	}
	e->vaddr = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_SHARED, e->memfd, 0);
	if (e->vaddr == MAP_FAILED) {
		e->vaddr = NULL;
		log_error("mapping the memfd: %s%s", strerror(errno),
			  hugeflags ? " (reserve huge pages in /sys/kernel/mm/hugepages)" : "");
		goto fail;
	}
	memset(e->vaddr, 0, e->size);
	if (fcntl(e->memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		log_error("sealing the memfd against shrinking: %s", strerror(errno));
		goto fail;
	}
	c.memfd = (__u32)e->memfd;
	e->fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (e->fd < 0) {
		log_error("UDMABUF_CREATE of %#llx bytes: %s%s", (unsigned long long)e->size,
			  strerror(errno),
			  errno == EINVAL && hugeflags ?
				  " (this kernel's udmabuf may not take hugetlb memfds)" :
			  errno == EINVAL ? " (above the udmabuf module's size_limit_mb?)" :
					    "");
		goto fail;
	}
	close(dev);
	return 0;
fail:
	close(dev);
	return -1;
}

/* The first /dev/dri/card* that vgem drives, open, or -1 (logged). */
static int open_vgem(void)
{
	for (int i = 0; i < 64; i++) {
		char path[32], name[16] = "";
		struct it_drm_version v = { .name_len = sizeof(name) - 1, .name = name };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!ioctl(fd, IT_DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem")) {
			log_debug("vgem is %s", path);
			return fd;
		}
		close(fd);
	}
	log_error("no vgem device in /dev/dri: load the vgem module ('modprobe vgem'; Debian "
		  "kernels build it, CONFIG_DRM_VGEM)");
	return -1;
}

/* A GEM object of size bytes, made as a dumb buffer of 4 KiB rows (vgem has no other way to make
 * one), exported with PRIME. */
static int create_vgem(struct dmabuf_export *e)
{
	struct it_drm_mode_create_dumb dumb = { .width = 1024,
						.bpp = 32,
						.height = (__u32)(e->size / 4096) };
	struct it_drm_prime_handle prime = { .flags = O_CLOEXEC | O_RDWR };

	if (e->size / 4096 > UINT32_MAX) {
		log_error("vgem makes objects of at most %#llx bytes here",
			  (unsigned long long)UINT32_MAX * 4096);
		return -1;
	}
	e->drm_fd = open_vgem();
	if (e->drm_fd < 0)
		return -1;
	if (ioctl(e->drm_fd, IT_DRM_IOCTL_MODE_CREATE_DUMB, &dumb)) {
		log_error("vgem: creating a GEM object of %#llx bytes: %s",
			  (unsigned long long)e->size, strerror(errno));
		return -1;
	}
	e->gem_handle = dumb.handle;
	if (dumb.size != e->size) {
		log_error("vgem made %#llx bytes where %#llx were asked",
			  (unsigned long long)dumb.size, (unsigned long long)e->size);
		return -1;
	}
	prime.handle = dumb.handle;
	if (ioctl(e->drm_fd, IT_DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime)) {
		log_error("vgem: exporting the GEM object as a dma-buf: %s", strerror(errno));
		return -1;
	}
	e->fd = prime.fd;
	return 0;
}

/* The BAR's device bound to vfio-pci in a type1 container of its own, which gives the device fd
 * that VFIO_DEVICE_FEATURE_DMA_BUF is asked on. The fd stays open as long as the dma-buf: closing
 * the device revokes its dma-bufs. */
static int create_bar_dmabuf(struct dmabuf_export *e, bool force)
{
	if (buffer_bar_start(NULL, e->spec.bar_bdf, e->spec.bar_index, &e->bar_start) ||
	    device_bind_vfio(&e->bar_dev, NULL, e->spec.bar_bdf, force) ||
	    mapper_open(&e->mapper, MAPPER_TYPE1, NULL) ||
	    mapper_add_device(&e->mapper, e->spec.bar_bdf))
		return -1;
	e->device_fd = mapper_device_fd(&e->mapper, e->spec.bar_bdf);
	if (e->device_fd < 0 || vfio_pci_enable_memory(e->device_fd))
		return -1;
	e->fd = vfio_region_export_dmabuf(e->device_fd,
					  VFIO_PCI_BAR0_REGION_INDEX + e->spec.bar_index,
					  e->bar_offset, e->size,
					  "which a dmabuf-bar buffer is; map the window with "
					  "--buffer bar:BDF/INDEX (dma_map_resource) instead");
	return e->fd < 0 ? -1 : 0;
}

int dmabuf_export_create(struct dmabuf_export *e, const struct buffer_spec *spec, uint64_t size,
			 uint64_t offset, bool force)
{
	e->spec = *spec;
	e->size = size;
	e->bar_offset = offset;
	switch (spec->kind) {
	case BUF_UDMABUF:
		return create_udmabuf(e);
	case BUF_VGEM:
		return create_vgem(e);
	case BUF_DMABUF_BAR:
		return create_bar_dmabuf(e, force);
	case BUF_GPU:
		if (cuda_export_create(&e->cuda, spec->gpu_ordinal, spec->gpu_vmm, size))
			return -1;
		e->fd = e->cuda.fd;
		snprintf(e->gpu_bdf, sizeof(e->gpu_bdf), "%s", e->cuda.bdf);
		return 0;
	default:
		log_error("a %s buffer is not a dma-buf: map it with --device",
			  buffer_kind_name(spec->kind));
		return -1;
	}
}

int dmabuf_export_close(struct dmabuf_export *e)
{
	int ret = 0;

	if (e->spec.kind == BUF_GPU)
		cuda_export_destroy(&e->cuda); /* closes the dma-buf too */
	else if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	if (e->gem_handle) {
		struct it_drm_gem_close c = { .handle = e->gem_handle };

		ioctl(e->drm_fd, IT_DRM_IOCTL_GEM_CLOSE, &c);
		e->gem_handle = 0;
	}
	if (e->drm_fd >= 0)
		close(e->drm_fd);
	e->drm_fd = -1;
	if (e->vaddr)
		munmap(e->vaddr, e->size);
	e->vaddr = NULL;
	if (e->memfd >= 0)
		close(e->memfd);
	e->memfd = -1;
	if (e->device_fd >= 0)
		close(e->device_fd);
	e->device_fd = -1;
	mapper_close(&e->mapper);
	if (device_restore(&e->bar_dev))
		ret = -1;
	return ret;
}
