/* What a PCI device's block devices are used for, found before the device leaves its driver:
 * every disk in SYS/block whose device path runs through the PCI device (or, NVMe multipath,
 * one of whose paths in its multipath/ folder does), and each of its partitions, is checked for
 *   - holders (SYS/block/X/holders: device-mapper, LVM, md, ...), named by their dm name;
 *   - mounts (PROC/self/mountinfo, by major:minor), named by mount point, the root filesystem
 *     said so;
 *   - swap (PROC/swaps, by the device node's major:minor, else by name).
 * Each use found is one phrase such as "block device nvme0n1p1 (259:1) is mounted at / (the
 * root filesystem)". SYS and PROC are "/sys" and "/proc" normally; tests point them at fixture
 * trees. Files that cannot be read count as no use (the kernel always has them). */
#ifndef IOMMUTRACE_DEVICE_USES_H
#define IOMMUTRACE_DEVICE_USES_H

#include <stddef.h>

typedef void (*device_use_fn)(const char *use, void *ctx);

/**
 * device_uses_find() - Call @fn once per use of @bdf's block devices.
 *
 * Return: how many were found.
 */
int device_uses_find(const char *bdf, const char *sys_root, const char *proc_root, device_use_fn fn,
		     void *ctx);

/**
 * device_uses_who() - Who is running this, for the warning --force prints: "user NAME (uid N)",
 * with ", through sudo from NAME" when SUDO_USER is set.
 */
void device_uses_who(char *out, size_t len);

#endif
