/* The journal of original driver bindings (see binding_journal.h). An entry is seven lines of
 * KEY=VALUE in this order, and the reader takes nothing else:
 *   bdf=0000:00:04.0
 *   driver=nvme
 *   driver_override=
 *   bound_to=vfio-pci
 *   pid=812
 *   pid_start_ticks=52110
 *   boot_id=1c1f0a4e-5d3b-4c57-9a55-0e8a4b7f2c11 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/parse.h"
#include "probes/binding_journal.h"

#define RUN_DIR_DEFAULT "/run/iommutrace"
/* seven short lines: the longest values are three names of SYSFS_NAME_MAX */
#define ENTRY_MAX_BYTES 512

static const char *run_dir(void)
{
	const char *dir = getenv("IOMMUTRACE_RUN_DIR");

	return dir && dir[0] ? dir : RUN_DIR_DEFAULT;
}

int binding_journal_dir(char *out, size_t len)
{
	return sysfs_path(out, len, run_dir(), "/bindings");
}

int binding_journal_path(const char *bdf, char *out, size_t len)
{
	return sysfs_path(out, len, run_dir(), "/bindings/%s", bdf);
}

static bool boot_id_ok(const char *s)
{
	for (int i = 0; i < BINDING_JOURNAL_BOOT_ID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' :
			   !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return s[BINDING_JOURNAL_BOOT_ID_LEN] == '\0';
}

int binding_journal_boot_id(char out[BINDING_JOURNAL_BOOT_ID_LEN + 1])
{
	char buf[64];

	if (sysfs_read_text("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)))
		return -1;
	if (!boot_id_ok(buf)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(out, buf, BINDING_JOURNAL_BOOT_ID_LEN + 1);
	return 0;
}

int binding_journal_pid_start(pid_t pid, unsigned long long *out)
{
	char path[64], buf[2048], *p, *field, *save = NULL;
	long ticks;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sysfs_read_text(path, buf, sizeof(buf)))
		return -1;
	/* the command name (field 2) may hold spaces and parentheses: fields 3 on follow the last ')' */
	p = strrchr(buf, ')');
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	field = strtok_r(p + 1, " ", &save);
	for (int n = 3; field && n < 22; n++)
		field = strtok_r(NULL, " ", &save);
	if (!field || sysfs_parse_long(field, 0, LONG_MAX, &ticks)) {
		errno = EINVAL;
		return -1;
	}
	*out = (unsigned long long)ticks;
	return 0;
}

int binding_journal_entry_init(struct binding_journal_entry *e, const char *bdf)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->bdf, sizeof(e->bdf), "%s", bdf);
	e->pid = getpid();
	return binding_journal_pid_start(e->pid, &e->pid_start_ticks) ||
			       binding_journal_boot_id(e->boot_id) ?
		       -1 :
		       0;
}

static bool name_or_empty_ok(const char *s)
{
	return !s[0] || sysfs_name_ok(s);
}

static bool bdf_ok(const char *s)
{
	char canonical[13];

	return !parse_bdf(s, canonical) && !strcmp(canonical, s);
}

static bool entry_ok(const struct binding_journal_entry *e)
{
	return bdf_ok(e->bdf) && name_or_empty_ok(e->orig_driver) &&
	       name_or_empty_ok(e->orig_override) && sysfs_name_ok(e->bound_to) && e->pid > 0 &&
	       boot_id_ok(e->boot_id);
}

/* A journal folder is trusted when it is a folder (not a link) of this user or root that no one
 * else can write: its entries name the drivers devices are bound to. errno EPERM otherwise. */
static int dir_trusted(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

static int mkdir_trusted(const char *path)
{
	return mkdir(path, 0755) && errno != EEXIST ? -1 : dir_trusted(path);
}

const char *binding_journal_strerror(int err)
{
	return err == EPERM ? "not a folder of this user or root that only its owner can write" :
			      strerror(err);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int binding_journal_write(const struct binding_journal_entry *e)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX], text[ENTRY_MAX_BYTES];
	int fd, n, err;

	if (!entry_ok(e)) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(text, sizeof(text),
		     "bdf=%s\ndriver=%s\ndriver_override=%s\nbound_to=%s\npid=%d\n"
		     "pid_start_ticks=%llu\nboot_id=%s\n",
		     e->bdf, e->orig_driver, e->orig_override, e->bound_to, (int)e->pid,
		     e->pid_start_ticks, e->boot_id);
	if (binding_journal_dir(dir, sizeof(dir)) ||
	    binding_journal_path(e->bdf, path, sizeof(path)) ||
	    sysfs_path(tmp, sizeof(tmp), dir, "/.%s.tmp-%d", e->bdf, (int)getpid()))
		return -1;
	if (mkdir_trusted(run_dir()) || mkdir_trusted(dir))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	/* synced before the rename: after a power loss on a journal kept on disk, an entry is whole
	 * (and of an earlier boot, so dropped), never an empty file refused as malformed */
	if (write_all(fd, text, (size_t)n) || fsync(fd)) {
		err = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) || rename(tmp, path)) {
		err = errno;
		goto fail;
	}
	return 0;
fail:
	unlink(tmp);
	errno = err;
	return -1;
}

/* The next line of *text if it is KEY=VALUE, into out (len bytes with the NUL); moves *text past
 * it. */
static int take_field(char **text, const char *key, char *out, size_t len)
{
	size_t key_len = strlen(key), value_len;
	char *value, *end;

	if (strncmp(*text, key, key_len) || (*text)[key_len] != '=')
		return -1;
	value = *text + key_len + 1;
	end = strchrnul(value, '\n');
	value_len = (size_t)(end - value);
	if (value_len >= len)
		return -1;
	memcpy(out, value, value_len);
	out[value_len] = '\0';
	*text = *end ? end + 1 : end;
	return 0;
}

int binding_journal_read(const char *bdf, struct binding_journal_entry *e)
{
	char path[PATH_MAX], text[ENTRY_MAX_BYTES], pid[16], start[24], *p = text;
	long pid_value, start_value;

	if (binding_journal_path(bdf, path, sizeof(path)))
		return -1;
	if (sysfs_read_text(path, text, sizeof(text))) {
		if (errno == EFBIG)
			errno = EINVAL; /* longer than any entry we write */
		return -1;
	}
	memset(e, 0, sizeof(*e));
	if (take_field(&p, "bdf", e->bdf, sizeof(e->bdf)) ||
	    take_field(&p, "driver", e->orig_driver, sizeof(e->orig_driver)) ||
	    take_field(&p, "driver_override", e->orig_override, sizeof(e->orig_override)) ||
	    take_field(&p, "bound_to", e->bound_to, sizeof(e->bound_to)) ||
	    take_field(&p, "pid", pid, sizeof(pid)) ||
	    take_field(&p, "pid_start_ticks", start, sizeof(start)) ||
	    take_field(&p, "boot_id", e->boot_id, sizeof(e->boot_id)) || *p ||
	    sysfs_parse_long(pid, 1, INT_MAX, &pid_value) ||
	    sysfs_parse_long(start, 0, LONG_MAX, &start_value)) {
		errno = EINVAL;
		return -1;
	}
	e->pid = (pid_t)pid_value;
	e->pid_start_ticks = (unsigned long long)start_value;
	if (!entry_ok(e) || strcmp(e->bdf, bdf)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int binding_journal_remove(const char *bdf)
{
	char path[PATH_MAX];

	if (binding_journal_path(bdf, path, sizeof(path)))
		return -1;
	return unlink(path) && errno != ENOENT ? -1 : 0;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int binding_journal_for_each(void (*fn)(const char *name, void *ctx), void *ctx)
{
	char dir[PATH_MAX];
	struct dirent **names;
	int n;

	if (binding_journal_dir(dir, sizeof(dir)))
		return -1;
	if (dir_trusted(run_dir()) || dir_trusted(dir))
		return errno == ENOENT ? 0 : -1;
	n = scandir(dir, &names, not_hidden, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	for (int i = 0; i < n; i++) {
		fn(names[i]->d_name, ctx);
		free(names[i]);
	}
	free(names);
	return 0;
}

enum binding_journal_owner binding_journal_owner(const struct binding_journal_entry *e)
{
	char boot_id[BINDING_JOURNAL_BOOT_ID_LEN + 1];
	unsigned long long start;

	if (!binding_journal_boot_id(boot_id) && strcmp(boot_id, e->boot_id))
		return JOURNAL_OWNER_OTHER_BOOT;
	if (!binding_journal_pid_start(e->pid, &start))
		return start == e->pid_start_ticks ? JOURNAL_OWNER_RUNNING : JOURNAL_OWNER_GONE;
	/* a process we cannot see for another reason than its absence is left to run */
	return errno == ENOENT ? JOURNAL_OWNER_GONE : JOURNAL_OWNER_RUNNING;
}
