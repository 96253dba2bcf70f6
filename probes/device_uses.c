/* Uses of a PCI device's block devices: holders, mounts, swap (see device_uses.h). */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "common/sysfs_file.h"
#include "probes/device_uses.h"

struct walk {
	const char *sys_root, *proc_root;
	device_use_fn fn;
	void *ctx;
	int found;
};

static void report(struct walk *w, const char *fmt, const char *name, const char *majmin,
		   const char *what)
{
	char use[PATH_MAX + 160];

	snprintf(use, sizeof(use), fmt, name, majmin, what);
	w->fn(use, w->ctx);
	w->found++;
}

/* mountinfo and swaps escape space, tab, newline and backslash as \ooo */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* SYS/block/X/holders/dm-N: "dm-N (vg-root)" when the holder is a device-mapper device */
static void holder_label(const struct walk *w, const char *holder, char *out, size_t len)
{
	char path[PATH_MAX], dm_name[128];

	snprintf(path, sizeof(path), "%s/block/%s/dm/name", w->sys_root, holder);
	if (!sysfs_read_text(path, dm_name, sizeof(dm_name)) && dm_name[0])
		snprintf(out, len, "%s (%s)", holder, dm_name);
	else
		snprintf(out, len, "%s", holder);
}

static void check_holders(struct walk *w, const char *dir, const char *name, const char *majmin)
{
	char path[PATH_MAX], label[512];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/holders", dir);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		holder_label(w, e->d_name, label, sizeof(label));
		report(w, "block device %s (%s) is held by %s (device-mapper, LVM or md)", name,
		       majmin, label);
	}
	closedir(d);
}

/* mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
static void check_mounts(struct walk *w, const char *name, const char *majmin)
{
	char path[PATH_MAX], line[4096], field[32], point[PATH_MAX], where[PATH_MAX + 32];
	char *dash, source[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/self/mountinfo", w->proc_root);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %31s %*s %4095s", field, point) != 2)
			continue;
		source[0] = '\0';
		dash = strstr(line, " - ");
		if (dash && sscanf(dash, " - %*s %4095s", source) == 1)
			unescape_octal(source);
		/* btrfs and the like show an anonymous 0:N: their source names the device */
		if (strcmp(field, majmin) &&
		    !(!strncmp(source, "/dev/", 5) && !strcmp(base_name(source), name)))
			continue;
		unescape_octal(point);
		snprintf(where, sizeof(where), "%s%s", point,
			 strcmp(point, "/") ? "" : " (the root filesystem)");
		report(w, "block device %s (%s) is mounted at %s", name, majmin, where);
	}
	fclose(f);
}

/* swaps: FILENAME TYPE SIZE USED PRIORITY, after a header line */
static void check_swap(struct walk *w, const char *name, const char *majmin)
{
	char path[PATH_MAX], line[4096], file[PATH_MAX], type[32], rdev[32];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/swaps", w->proc_root);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%4095s %31s", file, type) != 2 || strcmp(type, "partition"))
			continue;
		unescape_octal(file);
		rdev[0] = '\0';
		if (!stat(file, &st) && S_ISBLK(st.st_mode))
			snprintf(rdev, sizeof(rdev), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
		if (rdev[0] ? !strcmp(rdev, majmin) : !strcmp(base_name(file), name))
			report(w, "block device %s (%s) is %s", name, majmin, "in use as swap");
	}
	fclose(f);
}

/* One disk or partition directory under SYS/block */
static void check_block(struct walk *w, const char *dir, const char *name)
{
	char path[PATH_MAX], majmin[32];

	snprintf(path, sizeof(path), "%s/dev", dir);
	if (sysfs_read_text(path, majmin, sizeof(majmin)))
		snprintf(majmin, sizeof(majmin), "?");
	check_holders(w, dir, name, majmin);
	check_mounts(w, name, majmin);
	check_swap(w, name, majmin);
}

/* A disk's partitions are the subdirectories named after it: nvme0n1p1, sda1 */
static void check_partitions(struct walk *w, const char *dir, const char *disk)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, disk, strlen(disk)) || !strcmp(e->d_name, disk))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		check_block(w, path, e->d_name);
	}
	closedir(d);
}

/* NVMe native multipath: the disk (nvme0n1) sits under the virtual nvme-subsystem, and its
 * multipath/ folder links the hidden per-controller paths (nvme0c0n1) under the PCI devices */
static bool path_of_head(const char *disk, const char *needle)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/multipath", disk) >= (int)sizeof(path))
		return false;
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.' || snprintf(path, sizeof(path), "%s/multipath/%s", disk,
						    e->d_name) >= (int)sizeof(path))
			continue;
		found = realpath(path, real) && strstr(real, needle);
	}
	closedir(d);
	return found;
}

int device_uses_find(const char *bdf, const char *sys_root, const char *proc_root, device_use_fn fn,
		     void *ctx)
{
	struct walk w = { .sys_root = sys_root, .proc_root = proc_root, .fn = fn, .ctx = ctx };
	char needle[32], path[PATH_MAX], real[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/block", sys_root);
	d = opendir(path);
	if (!d)
		return 0;
	snprintf(needle, sizeof(needle), "/%s/", bdf);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/block/%s", sys_root, e->d_name);
		if (!realpath(path, real) || (!strstr(real, needle) && !path_of_head(real, needle)))
			continue;
		check_block(&w, real, e->d_name);
		check_partitions(&w, real, e->d_name);
	}
	closedir(d);
	return w.found;
}

void device_uses_who(char *out, size_t len)
{
	const char *sudo_user = getenv("SUDO_USER");
	struct passwd *pw = getpwuid(getuid());
	char name[64];

	snprintf(name, sizeof(name), "%s", pw && pw->pw_name ? pw->pw_name : "?");
	if (sudo_user && *sudo_user)
		snprintf(out, len, "user %s (uid %u), through sudo from %s", name,
			 (unsigned)getuid(), sudo_user);
	else
		snprintf(out, len, "user %s (uid %u)", name, (unsigned)getuid());
}
