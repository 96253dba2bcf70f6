/* Fixture trees for the inventory tests: a temporary directory holding the sysfs and procfs
 * files the inventory reads, written by the test itself. sysfs_fixture_qemu() builds the
 * testbed machine: QEMU q35 with the emulated VT-d (dmar0), an NVMe, an ivshmem-plain and an
 * AHCI controller. Header-only (static inline) because each test binary is one source file. */
#ifndef IOMMUTRACE_TEST_SYSFS_FIXTURE_H
#define IOMMUTRACE_TEST_SYSFS_FIXTURE_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The VT-d capability QEMU's intel-iommu reports (design notes): 2 MiB and 1 GiB superpages,
 * caching mode, 39-bit. The ecap is QEMU's with intremap=on, eim and pt: QI, IR, EIM, PT. */
#define QEMU_VTD_CAP 0xd2008c22260286ull
#define QEMU_VTD_ECAP 0xf00f5aull

/* A resource file whose first lines are the given BAR lines and the rest (up to the 13 lines a
 * device without SR-IOV has) empty. */
#define RES_EMPTY "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"

/* printf into a PATH_MAX buffer; a fixture path that does not fit aborts the test. */
static inline __attribute__((format(printf, 2, 3))) void fixture_path(char out[PATH_MAX],
								      const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "fixture path too long: %s\n", fmt);
		abort();
	}
}

static inline void fixture_mkdirs(const char *path)
{
	char buf[PATH_MAX];

	fixture_path(buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST) {
			perror(buf);
			abort();
		}
		*p = '/';
	}
}

/* Writes content to ROOT/rel, creating the directories on the way. */
static inline void fixture_write(const char *root, const char *rel, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	fixture_path(path, "%s/%s", root, rel);
	fixture_mkdirs(path);
	f = fopen(path, "w");
	if (!f || fputs(content, f) == EOF || fclose(f)) {
		perror(path);
		abort();
	}
}

/* Makes ROOT/rel a symlink to target (relative targets as sysfs has them). */
static inline void fixture_symlink(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];

	fixture_path(path, "%s/%s", root, rel);
	fixture_mkdirs(path);
	if (symlink(target, path)) {
		perror(path);
		abort();
	}
}

/* The whole of ROOT/rel into out, as a string; a file that is missing or does not fit aborts the
 * test. For what the code under test wrote into the tree. */
static inline void fixture_read(const char *root, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	fixture_path(path, "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		abort();
	}
	n = fread(out, 1, len, f);
	if (n == len || ferror(f)) {
		fprintf(stderr, "%s: unreadable or larger than %zu bytes\n", path, len - 1);
		abort();
	}
	out[n] = '\0';
	fclose(f);
}

static inline void fixture_mkdir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	fixture_path(path, "%s/%s/", root, rel);
	fixture_mkdirs(path);
}

/* A new empty fixture root in out. */
static inline void fixture_create(char out[PATH_MAX])
{
	const char *tmp = getenv("TMPDIR");

	fixture_path(out, "%s/iommutrace-fixture-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(out)) {
		perror("mkdtemp");
		abort();
	}
}

static inline int fixture_remove_one(const char *path, const struct stat *st, int flag,
				     struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static inline void fixture_destroy(const char *root)
{
	nftw(root, fixture_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A PCI device: the device directory under sys/devices, and the sys/bus/pci/devices link. */
static inline void fixture_pci_device(const char *root, const char *bdf, const char *vendor,
				      const char *device, const char *class, const char *numa,
				      const char *resource)
{
	char rel[PATH_MAX], target[PATH_MAX];

	fixture_path(rel, "sys/devices/pci0000:00/%s/vendor", bdf);
	fixture_write(root, rel, vendor);
	fixture_path(rel, "sys/devices/pci0000:00/%s/device", bdf);
	fixture_write(root, rel, device);
	fixture_path(rel, "sys/devices/pci0000:00/%s/class", bdf);
	fixture_write(root, rel, class);
	fixture_path(rel, "sys/devices/pci0000:00/%s/numa_node", bdf);
	fixture_write(root, rel, numa);
	fixture_path(rel, "sys/devices/pci0000:00/%s/resource", bdf);
	fixture_write(root, rel, resource);
	fixture_path(rel, "sys/bus/pci/devices/%s", bdf);
	fixture_path(target, "../../../devices/pci0000:00/%s", bdf);
	fixture_symlink(root, rel, target);
}

/* One of the device's sysfs links (driver, iommu_group, iommu) */
static inline void fixture_pci_link(const char *root, const char *bdf, const char *link,
				    const char *target)
{
	char rel[PATH_MAX];

	fixture_path(rel, "sys/devices/pci0000:00/%s/%s", bdf, link);
	fixture_symlink(root, rel, target);
}

static inline void fixture_group(const char *root, int id, const char *type)
{
	char rel[PATH_MAX];

	fixture_path(rel, "sys/kernel/iommu_groups/%d/type", id);
	fixture_write(root, rel, type);
}

/* The testbed: q35 + intel-iommu, booted "console=ttyS0 intel_iommu=on iommu.strict=0".
 *   0000:00:04.0 NVMe 1b36:0010, nvme driver, group 3 (DMA-FQ), BAR0 16 KiB 64-bit at
 *                0xfebd0000, no NUMA node
 *   0000:00:05.0 ivshmem 1af4:1110, no driver, group 4 (DMA), BAR0 256 B 32-bit at
 *                0xfebd4000, BAR2 2 GiB 64-bit prefetchable at 0x800000000, node 0
 *   0000:00:1f.2 AHCI 8086:2922, ahci, group 2 (identity), I/O BARs 0-4, BAR5 4 KiB at
 *                0xfebd5000
 *   group 10 has no type file. */
static inline void fixture_qemu(const char *root)
{
	char cap[32], ecap[32];

	fixture_write(root, "proc/cmdline", "console=ttyS0 intel_iommu=on iommu.strict=0\n");
	fixture_write(root, "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	snprintf(cap, sizeof(cap), "%llx\n", QEMU_VTD_CAP);
	snprintf(ecap, sizeof(ecap), "%llx\n", QEMU_VTD_ECAP);
	fixture_write(root, "sys/devices/virtual/iommu/dmar0/intel-iommu/cap", cap);
	fixture_write(root, "sys/devices/virtual/iommu/dmar0/intel-iommu/ecap", ecap);
	fixture_write(root, "sys/devices/virtual/iommu/dmar0/intel-iommu/version", "1:0\n");
	fixture_symlink(root, "sys/class/iommu/dmar0", "../../devices/virtual/iommu/dmar0");

	fixture_pci_device(root, "0000:00:04.0", "0x1b36\n", "0x0010\n", "0x010802\n", "-1\n",
			   "0x00000000febd0000 0x00000000febd3fff 0x0000000000140204\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY
					   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY);
	fixture_pci_link(root, "0000:00:04.0", "driver", "../../../bus/pci/drivers/nvme");
	fixture_pci_link(root, "0000:00:04.0", "iommu_group", "../../../kernel/iommu_groups/3");
	fixture_pci_link(root, "0000:00:04.0", "iommu", "../../virtual/iommu/dmar0");

	fixture_pci_device(root, "0000:00:05.0", "0x1af4\n", "0x1110\n", "0x050000\n", "0\n",
			   "0x00000000febd4000 0x00000000febd40ff 0x0000000000040200\n" RES_EMPTY
			   "0x0000000800000000 0x000000087fffffff 0x000000000014220c\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY
					   RES_EMPTY RES_EMPTY RES_EMPTY);
	fixture_pci_link(root, "0000:00:05.0", "iommu_group", "../../../kernel/iommu_groups/4");
	fixture_pci_link(root, "0000:00:05.0", "iommu", "../../virtual/iommu/dmar0");

	fixture_pci_device(root, "0000:00:1f.2", "0x8086\n", "0x2922\n", "0x010601\n", "-1\n",
			   "0x000000000000c060 0x000000000000c067 0x0000000000040101\n"
			   "0x000000000000c080 0x000000000000c083 0x0000000000040101\n"
			   "0x000000000000c068 0x000000000000c06f 0x0000000000040101\n"
			   "0x000000000000c084 0x000000000000c087 0x0000000000040101\n"
			   "0x000000000000c040 0x000000000000c05f 0x0000000000040101\n"
			   "0x00000000febd5000 0x00000000febd5fff 0x0000000000040200\n" RES_EMPTY
				   RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY RES_EMPTY);
	fixture_pci_link(root, "0000:00:1f.2", "driver", "../../../bus/pci/drivers/ahci");
	fixture_pci_link(root, "0000:00:1f.2", "iommu_group", "../../../kernel/iommu_groups/2");
	fixture_pci_link(root, "0000:00:1f.2", "iommu", "../../virtual/iommu/dmar0");

	fixture_group(root, 2, "identity\n");
	fixture_group(root, 3, "DMA-FQ\n");
	fixture_group(root, 4, "DMA\n");
	fixture_mkdir(root, "sys/kernel/iommu_groups/10");
}

#endif
