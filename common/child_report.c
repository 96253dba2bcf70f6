/* Passing a report file from a recorded command to its recorder (see child_report.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/log.h"
#include "common/parse.h"
#include "common/child_report.h"

#define ENV_NAME "IOMMUTRACE_REPORT_FD"

int child_report_create(void)
{
	int fd = memfd_create("iommutrace-report", 0); /* inherited across exec */
	char num[16];

	if (fd < 0) {
		log_error("memfd_create for the command's report: %s", strerror(errno));
		return -1;
	}
	snprintf(num, sizeof(num), "%d", fd);
	if (setenv(ENV_NAME, num, 1)) {
		log_error("setting %s: %s", ENV_NAME, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void child_report_close(int fd)
{
	unsetenv(ENV_NAME);
	if (fd >= 0)
		close(fd);
}

int child_report_take(void)
{
	const char *s = getenv(ENV_NAME);
	uint64_t n;
	int fd = -1;

	if (s && !parse_u64(s, &n) && n <= INT_MAX)
		fd = (int)n;
	unsetenv(ENV_NAME);
	return fd;
}

int child_report_write(int fd, const void *buf, size_t len, off_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);

		if (n <= 0) {
			log_error("writing the report for the recorder: %s",
				  n < 0 ? strerror(errno) : "no space");
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

int child_report_read(int fd, void *buf, size_t len, off_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			log_error("reading the command's report: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			return 1;
		done += (size_t)n;
	}
	return 0;
}
