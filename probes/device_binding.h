/* Binding a PCI device to vfio-pci (or, IOMMU off, uio_pci_generic) for the harness and putting
 * it back: driver_override, unbind, drivers_probe; the original driver and driver_override are
 * remembered, in the binding journal too (binding_journal.h) for `iommutrace restore`, and
 * restored. A device without an IOMMU group (for vfio-pci), or whose new driver is not loaded, is
 * refused before it leaves its driver; one whose block devices are mounted, swap or held (dm,
 * md, LVM: device_uses.h) too, unless forced, when each use is warned about naming the user, on
 * stderr and in the kernel log; and one whose journal entry cannot be written, or that has an
 * entry already (another iommutrace holds it, or one left it without putting it back). Functions log
 * one line on failure and return -1. */
#ifndef IOMMUTRACE_DEVICE_BINDING_H
#define IOMMUTRACE_DEVICE_BINDING_H

#include <stdbool.h>
#include "common/sysfs_file.h"

struct device_binding {
	char bdf[13];
	/* where its sysfs is: NULL for the live system, a fixture tree's root in tests; a string
	 * that outlives the binding */
	const char *sysfs_root;
	bool bound; /* we changed its binding: restore it */
	char orig_driver[SYSFS_NAME_MAX + 1]; /* "" when no driver was bound */
	char orig_override[SYSFS_NAME_MAX + 1]; /* "" when driver_override was not set */
	/* how long a put-back waits for the original driver to have the device working; 0: 90 s,
	 * past the 60 s the kernel's nvme driver gives a controller's first command */
	unsigned ready_ms;
};

/**
 * device_bind() - Bind the device to @driver_name (nothing to do when it already is).
 * @root: ROOT/sys is used (as for sysfs_path(): NULL for the live system); @b keeps it for
 *        putting the device back
 * @force: go on although its block devices are mounted, swap or held, with a warning per use
 */
int device_bind(struct device_binding *b, const char *root, const char *bdf,
		const char *driver_name, bool force);
/**
 * device_bind_vfio() - device_bind() to vfio-pci, which first needs the device to have an IOMMU
 * group.
 */
int device_bind_vfio(struct device_binding *b, const char *root, const char *bdf, bool force);
/**
 * device_restore() - Unbind the device from vfio-pci, restore driver_override and reprobe the
 * original driver (device_put_back()).
 *
 * A no-op when device_bind_vfio() changed nothing, or when the device has since been removed from
 * the system (said in one line). Safe to call twice.
 */
int device_restore(struct device_binding *b);

/* What device_put_back found, and did unless asked for a dry run. */
enum device_put_back {
	DEVICE_PUT_BACK_FAILED = -1, /* why in @why; the journal entry stays */
	DEVICE_PUT_BACK_DONE, /* back on its original driver and driver_override */
	DEVICE_PUT_BACK_ALREADY, /* it was: nothing written */
	DEVICE_PUT_BACK_GONE, /* no longer in the system: nothing to put back */
};

/**
 * device_put_back() - Put the device b->bdf back on b->orig_driver (or none) with
 * b->orig_override, from whatever driver it is on: unbind, driver_override, drivers_probe, under
 * b->sysfs_root.
 * @dry_run: only find out what it would do
 * @was: the driver it was on, "" for none
 * @why: where it says, in a few words, the first thing that failed (nothing is logged: its
 *       caller says the one line); with DEVICE_PUT_BACK_DONE, "" or what went wrong on the
 *       way, for a warning (the driver's first probe failed and a second one took it)
 *
 * Back on nvme means its controller is live, not only the driver bound: the kernel probes NVMe
 * controllers asynchronously and lets the device go when the probe fails, after up to 60 s.
 * Then the device is probed once more. Its binding journal entry is removed once nothing is left
 * to put back. device_restore() for a
 * binding of this process; `iommutrace restore` for one from the journal.
 */
enum device_put_back device_put_back(const struct device_binding *b, bool dry_run,
				     char was[SYSFS_NAME_MAX + 1], char *why, size_t whylen);

#endif
