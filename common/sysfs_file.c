/* Bounded, validating reads of sysfs/procfs text files, symlinks and directories under a root
 * directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/sysfs_file.h"

int sysfs_path(char *out, size_t len, const char *root, const char *fmt, ...)
{
	size_t root_len;
	va_list ap;
	int n;

	if (!root)
		root = "";
	root_len = strlen(root);
	while (root_len && root[root_len - 1] == '/')
		root_len--;
	if (root_len >= len)
		goto too_long;
	memcpy(out, root, root_len);
	va_start(ap, fmt);
	n = vsnprintf(out + root_len, len - root_len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - root_len)
		goto too_long;
	return 0;
too_long:
	/* a caller that names the path in its message then names none, not a truncated one */
	if (len)
		out[0] = '\0';
	errno = ENAMETOOLONG;
	return -1;
}

int sysfs_read_text(const char *path, char *buf, size_t len)
{
	struct stat st;
	size_t used = 0;
	ssize_t n;
	int fd, ret = -1, err = 0;

	if (len < 2) {
		errno = EINVAL;
		return -1;
	}
	/* O_NONBLOCK: a FIFO planted in a fixture must not hang us; it fails the S_ISREG check */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		err = errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		goto cleanup;
	}
	/* read one byte beyond the buffer so that a file of exactly len - 1 bytes is told apart
	 * from a longer one */
	for (;;) {
		char extra;

		if (used == len - 1) {
			n = read(fd, &extra, 1);
			if (n > 0) {
				err = EFBIG;
				goto cleanup;
			}
		} else {
			n = read(fd, buf + used, len - 1 - used);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (memchr(buf, '\0', used)) {
		err = EINVAL;
		goto cleanup;
	}
	while (used && buf[used - 1] == '\n')
		used--;
	buf[used] = '\0';
	ret = 0;
cleanup:
	close(fd);
	if (ret)
		errno = err;
	return ret;
}

int sysfs_parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v >> 60) {
			errno = ERANGE;
			return -1;
		}
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || *s) {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

int sysfs_parse_long(const char *s, long min, long max, long *out)
{
	/* LONG_MIN's magnitude is LONG_MAX + 1 */
	const unsigned long long limit = (unsigned long long)LONG_MAX + (*s == '-');
	unsigned long long mag = 0;
	size_t digits = 0;
	int neg = *s == '-';
	long v;

	if (neg)
		s++;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		unsigned d = (unsigned)(*s - '0');

		if (mag > limit / 10 || mag * 10 > limit - d) {
			errno = ERANGE;
			return -1;
		}
		mag = mag * 10 + d;
	}
	if (!digits || *s) {
		errno = EINVAL;
		return -1;
	}
	v = neg ? (long)(0 - mag) : (long)mag;
	if (v < min || v > max) {
		errno = ERANGE;
		return -1;
	}
	*out = v;
	return 0;
}

int sysfs_read_hex(const char *path, uint64_t *out)
{
	char buf[64];

	if (sysfs_read_text(path, buf, sizeof(buf)))
		return -1;
	return sysfs_parse_hex(buf, out);
}

int sysfs_read_long(const char *path, long min, long max, long *out)
{
	char buf[64];

	if (sysfs_read_text(path, buf, sizeof(buf)))
		return -1;
	return sysfs_parse_long(buf, min, max, out);
}

bool sysfs_name_ok(const char *s)
{
	size_t n = 0;

	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; s[n]; n++) {
		if (n == SYSFS_NAME_MAX || s[n] < 0x21 || s[n] > 0x7e || s[n] == '/')
			return false;
	}
	return n > 0;
}

int sysfs_link_name(const char *path, char *out, size_t len)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlink(path, target, sizeof(target));
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof(target)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	target[n] = '\0';
	while (n > 1 && target[n - 1] == '/')
		target[--n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!sysfs_name_ok(base)) {
		errno = EINVAL;
		return -1;
	}
	if (strlen(base) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(out, base);
	return 0;
}

void sysfs_report(const char *path, int err)
{
	const char *why;

	switch (err) {
	case ENOENT:
		log_debug("%s: missing; left unknown", path);
		return;
	case EINVAL:
		why = "malformed content";
		break;
	case EFBIG:
		why = "larger than any valid content";
		break;
	case ERANGE:
		why = "value out of range";
		break;
	default:
		why = strerror(err);
		break;
	}
	log_warn("%s: %s; left unknown", path, why);
}

int sysfs_for_each_entry(const char *root, const char *rel, const char *what,
			 int (*fn)(const char *dir, const char *name, void *ctx), void *ctx)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (sysfs_path(dir, sizeof(dir), root, "%s", rel)) {
		sysfs_report(root, errno);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			log_debug("%s: missing; no %s", dir, what);
		else
			log_warn("%s: %s; no %s read", dir, strerror(errno), what);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (fn(dir, de->d_name, ctx)) {
			log_error("reading %s: out of memory", what);
			ret = -1;
			break;
		}
	}
	closedir(d);
	if (ret)
		errno = ENOMEM;
	return ret;
}
