/* What a PCI device's block devices are used for (probes/device_uses.c), on fixture sysfs and
 * procfs trees: an NVMe whose disk has a mounted root partition, a swap partition and a partition
 * held by device-mapper; mount points with escaped spaces; btrfs's anonymous major:minor; an
 * NVMe multipath head under the virtual subsystem; a
 * second NVMe whose disk nobody uses; and a device with no disk at all. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "probes/device_uses.h"
#include "tests/unit/sysfs_fixture.h"

#define NVME0 "0000:00:04.0"
#define NVME1 "0000:00:05.0"
#define MOUNTINFO_HEAD "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"

struct found {
	char uses[8][512];
	int n;
};

static void collect(const char *use, void *ctx)
{
	struct found *f = ctx;

	if (f->n < 8)
		snprintf(f->uses[f->n], sizeof(f->uses[0]), "%s", use);
	f->n++;
}

/* ROOT/sys/block/DISK -> ../devices/pci0000:00/BDF/nvme/nvmeN/DISK, with partitions */
static void nvme_disk(const char *root, const char *bdf, const char *ctrl, const char *disk,
		      const char *majmin)
{
	char rel[PATH_MAX], target[PATH_MAX];

	fixture_path(rel, "sys/devices/pci0000:00/%s/nvme/%s/%s/dev", bdf, ctrl, disk);
	fixture_write(root, rel, majmin);
	fixture_path(rel, "sys/devices/pci0000:00/%s/nvme/%s/%s/holders", bdf, ctrl, disk);
	fixture_mkdir(root, rel);
	fixture_path(rel, "sys/block/%s", disk);
	fixture_path(target, "../devices/pci0000:00/%s/nvme/%s/%s", bdf, ctrl, disk);
	fixture_symlink(root, rel, target);
}

static void nvme_partition(const char *root, const char *bdf, const char *ctrl, const char *disk,
			   const char *part, const char *majmin)
{
	char rel[PATH_MAX];

	fixture_path(rel, "sys/devices/pci0000:00/%s/nvme/%s/%s/%s/dev", bdf, ctrl, disk, part);
	fixture_write(root, rel, majmin);
	fixture_path(rel, "sys/devices/pci0000:00/%s/nvme/%s/%s/%s/holders", bdf, ctrl, disk, part);
	fixture_mkdir(root, rel);
}

static int find(const char *root, const char *bdf, struct found *f)
{
	char sys[PATH_MAX], proc[PATH_MAX];

	memset(f, 0, sizeof(*f));
	fixture_path(sys, "%s/sys", root);
	fixture_path(proc, "%s/proc", root);
	return device_uses_find(bdf, sys, proc, collect, f);
}

static bool has(const struct found *f, const char *use)
{
	for (int i = 0; i < f->n && i < 8; i++)
		if (!strcmp(f->uses[i], use))
			return true;
	return false;
}

static void machine(char root[PATH_MAX])
{
	fixture_create(root);
	nvme_disk(root, NVME0, "nvme0", "nvme0n1", "259:0\n");
	nvme_partition(root, NVME0, "nvme0", "nvme0n1", "nvme0n1p1", "259:1\n");
	nvme_partition(root, NVME0, "nvme0", "nvme0n1", "nvme0n1p2", "259:2\n");
	nvme_partition(root, NVME0, "nvme0", "nvme0n1", "nvme0n1p3", "259:3\n");
	nvme_disk(root, NVME1, "nvme1", "nvme1n1", "259:4\n");
	fixture_write(root, "sys/block/dm-0/dm/name", "vg-data\n");
	fixture_mkdir(root,
		      "sys/devices/pci0000:00/" NVME0 "/nvme/nvme0/nvme0n1/nvme0n1p3/holders/dm-0");
	fixture_write(root, "proc/swaps",
		      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		      "/nonexistent/nvme0n1p2                  partition\t1048572\t\t0\t\t-2\n"
		      "/swapfile                               file\t\t1048572\t\t0\t\t-3\n");
	fixture_write(root, "proc/self/mountinfo",
		      MOUNTINFO_HEAD
		      "25 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n"
		      "26 25 259:1 /srv /srv\\040data rw,relatime shared:2 - ext4 /dev/nvme0n1p1 rw\n");
}

static void finds_mounts_swap_and_holders(void **state)
{
	char root[PATH_MAX];
	struct found f;

	machine(root);
	assert_int_equal(find(root, NVME0, &f), 4);
	assert_true(
		has(&f, "block device nvme0n1p1 (259:1) is mounted at / (the root filesystem)"));
	assert_true(has(&f, "block device nvme0n1p1 (259:1) is mounted at /srv data"));
	assert_true(has(&f, "block device nvme0n1p2 (259:2) is in use as swap"));
	assert_true(has(&f, "block device nvme0n1p3 (259:3) is held by dm-0 (vg-data) "
			    "(device-mapper, LVM or md)"));
	fixture_destroy(root);
}

static void unused_disk_and_no_disk(void **state)
{
	char root[PATH_MAX];
	struct found f;

	machine(root);
	assert_int_equal(find(root, NVME1, &f), 0);
	assert_int_equal(find(root, "0000:00:06.0", &f), 0);
	fixture_destroy(root);
}

/* btrfs mounts show 0:N; their source names the device */
static void anonymous_majmin_by_source(void **state)
{
	char root[PATH_MAX];
	struct found f;

	fixture_create(root);
	nvme_disk(root, NVME1, "nvme1", "nvme1n1", "259:4\n");
	fixture_write(root, "proc/self/mountinfo",
		      MOUNTINFO_HEAD "30 1 0:45 / /data rw - btrfs /dev/nvme1n1 rw\n");
	assert_int_equal(find(root, NVME1, &f), 1);
	assert_string_equal(f.uses[0], "block device nvme1n1 (259:4) is mounted at /data");
	fixture_destroy(root);
}

/* NVMe native multipath: /sys/block/nvme2n1 is the subsystem's head, under virtual/; the
 * controller holds the hidden path nvme2c2n1, linked from the head's multipath/ folder */
static void multipath_head(void **state)
{
	char root[PATH_MAX];
	struct found f;

	fixture_create(root);
	fixture_write(root, "sys/devices/virtual/nvme-subsystem/nvme-subsys2/nvme2n1/dev",
		      "259:7\n");
	fixture_symlink(root, "sys/block/nvme2n1",
			"../devices/virtual/nvme-subsystem/nvme-subsys2/nvme2n1");
	fixture_mkdir(root, "sys/devices/pci0000:00/0000:00:07.0/nvme/nvme2/nvme2c2n1");
	fixture_symlink(root,
			"sys/devices/virtual/nvme-subsystem/nvme-subsys2/nvme2n1/multipath/nvme2c2n1",
			"../../../../../pci0000:00/0000:00:07.0/nvme/nvme2/nvme2c2n1");
	fixture_write(root, "proc/self/mountinfo",
		      MOUNTINFO_HEAD "31 1 259:7 / /mnt rw - ext4 /dev/nvme2n1 rw\n");
	assert_int_equal(find(root, "0000:00:07.0", &f), 1);
	assert_string_equal(f.uses[0], "block device nvme2n1 (259:7) is mounted at /mnt");
	assert_int_equal(find(root, NVME1, &f), 0);
	fixture_destroy(root);
}

/* no /proc files, a disk without a dev file: nothing found, nothing crashes */
static void missing_files(void **state)
{
	char root[PATH_MAX];
	struct found f;

	fixture_create(root);
	fixture_mkdir(root, "sys/devices/pci0000:00/" NVME1 "/nvme/nvme1/nvme1n1");
	fixture_symlink(root, "sys/block/nvme1n1",
			"../devices/pci0000:00/" NVME1 "/nvme/nvme1/nvme1n1");
	assert_int_equal(find(root, NVME1, &f), 0);
	fixture_destroy(root);
	assert_int_equal(find("/nonexistent-root", NVME1, &f), 0);
}

static void who_names_the_user(void **state)
{
	char who[160], want[64];

	unsetenv("SUDO_USER");
	device_uses_who(who, sizeof(who));
	snprintf(want, sizeof(want), "(uid %u)", (unsigned)getuid());
	assert_non_null(strstr(who, want));
	assert_int_equal(strncmp(who, "user ", 5), 0);
	setenv("SUDO_USER", "alice", 1);
	device_uses_who(who, sizeof(who));
	assert_non_null(strstr(who, ", through sudo from alice"));
	unsetenv("SUDO_USER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_mounts_swap_and_holders),
		cmocka_unit_test(unused_disk_and_no_disk),
		cmocka_unit_test(anonymous_majmin_by_source),
		cmocka_unit_test(multipath_head),
		cmocka_unit_test(missing_files),
		cmocka_unit_test(who_names_the_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
