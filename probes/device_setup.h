/* What `map` and `io` set up before they touch a device's domain, and take down on every exit
 * path: the device (and, for a window of another device's BAR, that device too) bound to
 * vfio-pci, the mapper with both in its address space, and the buffer. Functions log one line on
 * failure and return -1. */
#ifndef IOMMUTRACE_DEVICE_SETUP_H
#define IOMMUTRACE_DEVICE_SETUP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/device_binding.h"
#include "probes/mapper.h"

struct device_setup {
	struct device_binding dev, bar_dev;
	struct mapper mapper;
	struct buffer buffer;
	bool removal_requested; /* the kernel asked for the device back: it is going away */
};

#define DEVICE_SETUP_INIT \
	{ \
		.mapper = MAPPER_INIT, .buffer = BUFFER_INIT \
	}

struct device_setup_opts {
	const char *bdf;
	enum mapper_kind mapper;
	struct buffer_spec buffer;
	uint64_t size, offset; /* of the buffer; offset: into the BAR */
	const struct buffer *borrow; /* a view of another setup's buffer to use instead of
					 * making one (its BAR's device is then not bound here) */
	bool force; /* take a device whose block devices are in use */
	volatile sig_atomic_t *stop; /* set by a signal handler: stop before the next step */
	const char *sysfs_root; /* where the devices are found and rebound (as for
					 * sysfs_path): NULL, the live system */
};

int device_setup_open(struct device_setup *s, const struct device_setup_opts *o);
/**
 * device_setup_close() - Free the buffer, close the mapper, put both devices back.
 *
 * After removal_requested it first gives the removal, which waited for the mapper to let go, up
 * to 5 s to finish. Safe after a failed or partial open, and twice.
 *
 * Return: 0, or -1 when a device could not be restored.
 */
int device_setup_close(struct device_setup *s);

#endif
