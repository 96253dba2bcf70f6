/* The IOMMU units of the machine (/sys/class/iommu/UNIT): vendor, raw capability registers, and
 * the capabilities that shape mappings, decoded into one vendor-neutral form.
 *
 * Intel units (an intel-iommu/ directory): cap and ecap are CAP_REG and ECAP_REG, version is
 * "major:minor"; see intel_cap.h. AMD units (amd-iommu/): cap is the capability header, ecap
 * holds the EFR read from 'features'; see amd_cap.h. Other units (virtio-iommu, ARM SMMU, ...):
 * vendor "other", registers and decoded fields unknown. */
#ifndef IOMMUTRACE_IOMMU_UNITS_H
#define IOMMUTRACE_IOMMU_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/sysfs_file.h"

enum iommu_vendor {
	IOMMU_VENDOR_OTHER,
	IOMMU_VENDOR_INTEL,
	IOMMU_VENDOR_AMD,
};

/* A yes/no capability the unit reports, or IOMMU_CAP_UNKNOWN when it does not say (other
 * vendors, a register that could not be read, a field with no meaning on the vendor). */
#define IOMMU_CAP_UNKNOWN (-1)

struct iommu_unit {
	char name[SYSFS_NAME_MAX + 1]; /* dmar0, ivhd0 */
	enum iommu_vendor vendor;
	bool have_cap, have_ecap;
	uint64_t cap; /* Intel CAP_REG; AMD capability header */
	uint64_t ecap; /* Intel ECAP_REG; AMD EFR */
	char version[16]; /* Intel "1:0"; "" when unknown */
	/* Page sizes of a domain's (second-level, or AMD v1) table; 0 when unknown. */
	uint64_t pgsize_bitmap;
	unsigned addr_width_bits; /* Intel MGAW; AMD widest host-table IOVA; 0 unknown */
	int sagaw; /* Intel SAGAW bits; -1 elsewhere or unknown */
	int caching_mode; /* Intel CM; AMD NpCache */
	int pass_through; /* Intel ECAP.PT; AMD always (device table mode 0) */
	int scalable_mode; /* Intel ECAP.SMTS (supported, not necessarily enabled) */
};

/**
 * iommu_units_read() - Read every unit under ROOT/sys/class/iommu, sorted by name in version order
 * (dmar2 before dmar10).
 * @units: free with free()
 *
 * No such directory means no units (IOMMU off or absent), not an error. Unreadable or malformed
 * files leave their fields unknown, with a warning.
 *
 * Return: 0, or -1 when out of memory (logged).
 */
int iommu_units_read(const char *root, struct iommu_unit **units, size_t *n);

/**
 * iommu_units_vendors() - The vendors of the units under ROOT/sys/class/iommu. Reads no register.
 *
 * Return: bits 1 << enum iommu_vendor; 0 when there are none or the directory cannot be read
 * (logged).
 */
unsigned iommu_units_vendors(const char *root);

/**
 * iommu_vendor_name() - The iommus.vendor column's name of @vendor.
 *
 * Return: "intel", "amd" or "other".
 */
const char *iommu_vendor_name(enum iommu_vendor vendor);

#endif
