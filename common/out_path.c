/* Output paths the tool may create or replace (see out_path.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/out_path.h"

/* SQLite's helper files beside a database, and the names in an import's private folder */
static const char *const helper_suffixes[] = { "-wal", "-shm", "-journal" };
#define PRIVATE_SUFFIX ".partial-XXXXXX"

static const char *kind_of(mode_t mode)
{
	return S_ISLNK(mode)  ? "a symbolic link" :
	       S_ISDIR(mode)  ? "a directory" :
	       S_ISCHR(mode)  ? "a character device" :
	       S_ISBLK(mode)  ? "a block device" :
	       S_ISFIFO(mode) ? "a FIFO" :
	       S_ISSOCK(mode) ? "a socket" :
				"not a regular file";
}

/* 1 when path is absent, 0 when it is a regular file (size in *size), -1 otherwise (err). */
static int absent_or_regular(const char *path, off_t *size, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "cannot check %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode)) {
		*size = st.st_size;
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		snprintf(err, errlen,
			 "%s is a symbolic link: iommutrace does not write through links;"
			 " give the path of a file, or remove the link",
			 path);
	else
		snprintf(err, errlen, "%s is %s, not a file: give the path of a file", path,
			 kind_of(st.st_mode));
	return -1;
}

/* Names SQLite does not take as a file path: an output there would vanish or go elsewhere. */
static int check_name(const char *path, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/');
	size_t longest = strlen(PRIVATE_SUFFIX) + strlen("/db-journal");

	base = base ? base + 1 : path;
	if (!*path || !strcmp(path, ":memory:") || !strncmp(path, "file:", 5)) {
		snprintf(err, errlen,
			 "'%s' is not a file name to SQLite (%s): give a file path such"
			 " as ./trace.db",
			 path,
			 !*path	      ? "an empty name is a temporary database" :
			 *path == ':' ? "a database in memory, gone at exit" :
					"a URI");
		return -1;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(err, errlen, "%s names a folder: give the path of a file in it", path);
		return -1;
	}
	if (strlen(path) + longest >= PATH_MAX ||
	    strlen(base) + strlen(PRIVATE_SUFFIX) > NAME_MAX) {
		snprintf(err, errlen,
			 "%.64s...: the name is too long: with the suffixes of its helper"
			 " files (%s, -journal) it passes the system's limits; give a shorter one",
			 path, PRIVATE_SUFFIX);
		return -1;
	}
	return 0;
}

/* The folder of path, or "." */
static void dir_of(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		strcpy(dir, ".");
	else
		snprintf(dir, PATH_MAX, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

int out_path_check_db(const char *path, bool replace, const char *replace_option, char *err,
		      size_t errlen)
{
	char dir[PATH_MAX], helper[PATH_MAX];
	off_t size = 0, hsize;
	int absent;

	if (check_name(path, err, errlen))
		return -1;
	absent = absent_or_regular(path, &size, err, errlen);
	if (absent < 0)
		return -1;
	if (!absent && size > 0 && !replace) {
		snprintf(err, errlen, "%s exists; use %s to replace it, or choose another -o", path,
			 replace_option ? replace_option : "--force");
		return -1;
	}
	for (size_t i = 0; i < sizeof(helper_suffixes) / sizeof(helper_suffixes[0]); i++) {
		int h;

		snprintf(helper, sizeof(helper), "%s%s", path, helper_suffixes[i]);
		h = absent_or_regular(helper, &hsize, err, errlen);
		if (h < 0)
			return -1;
		/* a stale -wal would be read into the new database as its own */
		if (!h && (absent || !size) && !replace) {
			snprintf(err, errlen,
				 "%s is left from an earlier database (%s has none): remove"
				 " it, or choose another -o",
				 helper, path);
			return -1;
		}
	}
	dir_of(path, dir);
	if (access(dir, W_OK | X_OK)) {
		snprintf(err, errlen, "cannot create %s: %s: %s", path, dir, strerror(errno));
		return -1;
	}
	return 0;
}

int out_path_check_file(const char *path, char *err, size_t errlen)
{
	off_t size;

	return absent_or_regular(path, &size, err, errlen) < 0 ? -1 : 0;
}

int out_path_claim(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	off_t size = 0;

	if (fd >= 0 && !close(fd))
		return 0;
	if (fd >= 0 || errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	switch (absent_or_regular(path, &size, err, errlen)) {
	case 0:
		if (!size)
			return 0; /* empty: new to SQLite, as when it was checked */
		break;
	case -1:
		return -1;
	}
	snprintf(err, errlen,
		 "%s was created by another process meanwhile: nothing written to it;"
		 " choose another name",
		 path);
	return -1;
}

int private_dir_make(struct private_dir *pd, const char *path, char *err, size_t errlen)
{
	static const char *const names[] = { "db", "db-wal", "db-shm", "db-journal" };

	if ((size_t)snprintf(pd->dir, sizeof(pd->dir), "%s%s", path, PRIVATE_SUFFIX) >=
	    sizeof(pd->dir) - sizeof("/db-journal")) {
		snprintf(err, errlen, "%.64s...: path too long", path);
		return -1;
	}
	if (!mkdtemp(pd->dir)) {
		snprintf(err, errlen, "cannot create a folder beside %s: %s", path,
			 strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		snprintf(pd->files[i], sizeof(pd->files[i]), "%s/%s", pd->dir, names[i]);
	return 0;
}

int private_dir_remove(const struct private_dir *pd)
{
	for (size_t i = 0; i < sizeof(pd->files) / sizeof(pd->files[0]); i++)
		unlink(pd->files[i]);
	return rmdir(pd->dir);
}

/* Removes the helper files of a database about to be replaced (checked regular or absent). */
static int remove_helpers(const char *path, char *err, size_t errlen)
{
	char helper[PATH_MAX];

	for (size_t i = 0; i < sizeof(helper_suffixes) / sizeof(helper_suffixes[0]); i++) {
		snprintf(helper, sizeof(helper), "%s%s", path, helper_suffixes[i]);
		if (out_path_check_file(helper, err, errlen))
			return -1;
		if (unlink(helper) && errno != ENOENT) {
			snprintf(err, errlen, "cannot replace %s: %s", helper, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int out_path_install(const char *from, const char *path, bool replace, const char *replace_option,
		     char *err, size_t errlen)
{
	off_t size = 0;
	int absent = absent_or_regular(path, &size, err, errlen);

	if (absent < 0)
		return -1;
	if (replace || (!absent && !size)) {
		if (remove_helpers(path, err, errlen))
			return -1;
		if (!rename(from, path))
			return 0;
	} else if (!renameat2(AT_FDCWD, from, AT_FDCWD, path, RENAME_NOREPLACE)) {
		return 0;
	} else if (errno == EINVAL || errno == ENOSYS) {
		/* a filesystem without RENAME_NOREPLACE: a hard link is made only where none is */
		if (!link(from, path)) {
			unlink(from); /* else removed with its private folder */
			return 0;
		}
	}
	if (errno == EEXIST)
		snprintf(err, errlen,
			 "%s was created by another process meanwhile: nothing replaced;"
			 " choose another name, or %s to replace it",
			 path, replace_option ? replace_option : "--force");
	else
		snprintf(err, errlen, "cannot rename %s to %s: %s", from, path, strerror(errno));
	return -1;
}
