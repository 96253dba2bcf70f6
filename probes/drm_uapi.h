/* The few DRM ioctls the vgem exporter uses, declared from the kernel's include/uapi/drm/drm.h
 * and drm_mode.h: the build does not need libdrm's headers. Layouts are the kernel ABI. */
#ifndef IOMMUTRACE_DRM_UAPI_H
#define IOMMUTRACE_DRM_UAPI_H

#include <assert.h>
#include <linux/ioctl.h>
#include <linux/types.h>
#include <stddef.h>

struct it_drm_version {
	int version_major, version_minor, version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct it_drm_gem_close {
	__u32 handle;
	__u32 pad;
};

struct it_drm_prime_handle {
	__u32 handle;
	__u32 flags; /* O_CLOEXEC, O_RDWR */
	__s32 fd;
};

struct it_drm_mode_create_dumb {
	__u32 height, width, bpp, flags;
	__u32 handle, pitch; /* out */
	__u64 size; /* out */
};

#define IT_DRM_IOCTL_VERSION _IOWR('d', 0x00, struct it_drm_version)
#define IT_DRM_IOCTL_GEM_CLOSE _IOW('d', 0x09, struct it_drm_gem_close)
#define IT_DRM_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct it_drm_prime_handle)
#define IT_DRM_IOCTL_MODE_CREATE_DUMB _IOWR('d', 0xB2, struct it_drm_mode_create_dumb)

static_assert(sizeof(struct it_drm_version) == 64, "drm_version ABI");
static_assert(sizeof(struct it_drm_prime_handle) == 12, "drm_prime_handle ABI");
static_assert(sizeof(struct it_drm_mode_create_dumb) == 32, "drm_mode_create_dumb ABI");

#endif
