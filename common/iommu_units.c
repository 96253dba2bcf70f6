/* Reads /sys/class/iommu/UNIT and decodes each unit's capabilities. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/amd_cap.h"
#include "common/intel_cap.h"
#include "common/iommu_units.h"
#include "common/array.h"
#include "common/log.h"

const char *iommu_vendor_name(enum iommu_vendor vendor)
{
	switch (vendor) {
	case IOMMU_VENDOR_INTEL:
		return "intel";
	case IOMMU_VENDOR_AMD:
		return "amd";
	default:
		return "other";
	}
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Reads a register file of the unit into *value; false (reported) when it cannot. */
static bool read_register(const char *dir, const char *file, uint64_t max, uint64_t *value)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), dir, "/%s", file)) {
		sysfs_report(dir, errno);
		return false;
	}
	if (sysfs_read_hex(path, value)) {
		sysfs_report(path, errno);
		return false;
	}
	if (*value > max) {
		sysfs_report(path, ERANGE);
		*value = 0;
		return false;
	}
	return true;
}

/* "major:minor", both decimal */
static bool version_ok(const char *s)
{
	size_t major = strspn(s, "0123456789");
	size_t minor;

	if (!major || s[major] != ':')
		return false;
	minor = strspn(s + major + 1, "0123456789");
	return minor && !s[major + 1 + minor];
}

static void read_intel(const char *unit_dir, struct iommu_unit *u)
{
	char dir[PATH_MAX], path[PATH_MAX];

	if (sysfs_path(dir, sizeof(dir), unit_dir, "/intel-iommu")) {
		sysfs_report(unit_dir, errno);
		return;
	}
	u->have_cap = read_register(dir, "cap", UINT64_MAX, &u->cap);
	u->have_ecap = read_register(dir, "ecap", UINT64_MAX, &u->ecap);
	if (sysfs_path(path, sizeof(path), dir, "/version")) {
		sysfs_report(dir, errno);
	} else if (sysfs_read_text(path, u->version, sizeof(u->version))) {
		sysfs_report(path, errno);
		u->version[0] = '\0';
	} else if (!version_ok(u->version)) {
		sysfs_report(path, EINVAL);
		u->version[0] = '\0';
	}
	if (u->have_cap) {
		struct intel_cap cap;

		intel_cap_decode(u->cap, &cap);
		u->pgsize_bitmap = intel_cap_pgsize_bitmap(u->cap);
		u->addr_width_bits = cap.mgaw_bits;
		u->sagaw = (int)cap.sagaw;
		u->caching_mode = cap.caching_mode;
	}
	if (u->have_ecap) {
		struct intel_ecap ecap;

		intel_ecap_decode(u->ecap, &ecap);
		u->pass_through = ecap.pt;
		u->scalable_mode = ecap.smts;
	}
}

/* The running kernel's release, which decides how to read amd-iommu/features. */
static bool read_release(const char *root, char *release, size_t len)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), root, "/proc/sys/kernel/osrelease")) {
		sysfs_report(root, errno);
		return false;
	}
	if (sysfs_read_text(path, release, len)) {
		sysfs_report(path, errno);
		return false;
	}
	return true;
}

/* The EFR from amd-iommu/features; false (reported) when it cannot be told. */
static bool read_amd_efr(const char *root, const char *dir, uint64_t *efr)
{
	char path[PATH_MAX], text[80], release[128];
	bool have_release;

	if (sysfs_path(path, sizeof(path), dir, "/features")) {
		sysfs_report(dir, errno);
		return false;
	}
	if (sysfs_read_text(path, text, sizeof(text))) {
		sysfs_report(path, errno);
		return false;
	}
	have_release = read_release(root, release, sizeof(release));
	if (!amd_features_efr(text, have_release ? release : NULL, efr))
		return true;
	if (errno == ENOENT)
		log_warn("%s: cannot tell the EFR from the EFR2 without the kernel release; left "
			 "unknown",
			 path);
	else
		sysfs_report(path, errno);
	return false;
}

static void read_amd(const char *root, const char *unit_dir, struct iommu_unit *u)
{
	struct amd_cap_header hdr;
	char dir[PATH_MAX];
	bool efr_valid;

	if (sysfs_path(dir, sizeof(dir), unit_dir, "/amd-iommu")) {
		sysfs_report(unit_dir, errno);
		return;
	}
	/* the header is a 32-bit PCI config dword */
	u->have_cap = read_register(dir, "cap", UINT32_MAX, &u->cap);
	u->have_ecap = read_amd_efr(root, dir, &u->ecap);
	efr_valid = u->have_ecap;
	/* page sizes come from the v1 table format, and pass-through from the device table
	 * (mode 0: no translation), which every AMD-Vi unit has */
	u->pgsize_bitmap = amd_v1_pgsize_bitmap();
	u->pass_through = 1;
	if (u->have_cap) {
		amd_cap_header_decode((uint32_t)u->cap, &hdr);
		u->caching_mode = hdr.np_cache;
		if (!hdr.efr_sup && u->have_ecap) {
			log_debug("%s: capability header says the unit has no EFR; its "
				  "features are not decoded",
				  dir);
			efr_valid = false;
		}
	}
	if (efr_valid) {
		struct amd_efr efr;

		amd_efr_decode(u->ecap, &efr);
		u->addr_width_bits = efr.host_addr_bits;
	}
}

/* The vendor of the unit in dir, by the register directory its driver adds. */
static enum iommu_vendor unit_vendor(const char *dir)
{
	char sub[PATH_MAX];

	if (!sysfs_path(sub, sizeof(sub), dir, "/intel-iommu") && is_dir(sub))
		return IOMMU_VENDOR_INTEL;
	if (!sysfs_path(sub, sizeof(sub), dir, "/amd-iommu") && is_dir(sub))
		return IOMMU_VENDOR_AMD;
	return IOMMU_VENDOR_OTHER;
}

static void read_unit(const char *root, const char *class_dir, const char *name,
		      struct iommu_unit *u)
{
	char dir[PATH_MAX];

	memset(u, 0, sizeof(*u));
	strcpy(u->name, name);
	u->sagaw = u->caching_mode = u->pass_through = u->scalable_mode = IOMMU_CAP_UNKNOWN;
	if (sysfs_path(dir, sizeof(dir), class_dir, "/%s", name)) {
		sysfs_report(class_dir, errno);
		return;
	}
	u->vendor = unit_vendor(dir);
	if (u->vendor == IOMMU_VENDOR_INTEL)
		read_intel(dir, u);
	else if (u->vendor == IOMMU_VENDOR_AMD)
		read_amd(root, dir, u);
}

static int compare_units(const void *a, const void *b)
{
	return strverscmp(((const struct iommu_unit *)a)->name,
			  ((const struct iommu_unit *)b)->name);
}

struct unit_list {
	const char *root;
	struct iommu_unit *items;
	size_t n;
};

static int add_unit(const char *class_dir, const char *name, void *ctx)
{
	struct unit_list *list = ctx;
	struct iommu_unit *grown;

	if (!sysfs_name_ok(name)) {
		log_warn("%s: skipping an entry with an unexpected name", class_dir);
		return 0;
	}
	grown = array_grow(list->items, list->n, sizeof(*grown));
	if (!grown)
		return -1;
	list->items = grown;
	read_unit(list->root, class_dir, name, &grown[list->n++]);
	return 0;
}

int iommu_units_read(const char *root, struct iommu_unit **units, size_t *n)
{
	struct unit_list list = { .root = root };

	*units = NULL;
	*n = 0;
	if (sysfs_for_each_entry(root, "/sys/class/iommu", "IOMMU units", add_unit, &list)) {
		free(list.items);
		return -1;
	}
	if (list.n)
		qsort(list.items, list.n, sizeof(*list.items), compare_units);
	*units = list.items;
	*n = list.n;
	return 0;
}

static int add_vendor(const char *class_dir, const char *name, void *ctx)
{
	char dir[PATH_MAX];

	if (sysfs_path(dir, sizeof(dir), class_dir, "/%s", name))
		*(unsigned *)ctx |= 1u << IOMMU_VENDOR_OTHER;
	else
		*(unsigned *)ctx |= 1u << unit_vendor(dir);
	return 0;
}

unsigned iommu_units_vendors(const char *root)
{
	unsigned vendors = 0;

	if (sysfs_for_each_entry(root, "/sys/class/iommu", "IOMMU units", add_vendor, &vendors))
		return 1u << IOMMU_VENDOR_OTHER;
	return vendors;
}
