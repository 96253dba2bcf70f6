/* Physical runs and huge-page bytes of a buffer (see backing.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "common/log.h"
#include "probes/backing.h"

#define PAGE 4096ull
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_HUGE 17
#define KPF_THP 22
#define CHUNK 4096 /* pagemap or kpageflags entries per read */

static int read_entries(int fd, const char *what, uint64_t index, uint64_t *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n * sizeof(*buf), (off_t)(index * sizeof(*buf)));

	if (got != (ssize_t)(n * sizeof(*buf))) {
		log_error("reading %s at entry %#llx: %s", what, (unsigned long long)index,
			  got < 0 ? strerror(errno) : "short read");
		return -1;
	}
	return 0;
}

static int add_page(struct backing *b, uint64_t offset, uint64_t paddr)
{
	struct backing_run *last = b->nruns ? &b->runs[b->nruns - 1] : NULL, *runs;

	if (last && last->offset + last->size == offset && last->paddr + last->size == paddr) {
		last->size += PAGE;
		return 0;
	}
	runs = array_grow(b->runs, b->nruns, sizeof(*runs));
	if (!runs) {
		log_error("out of memory for the buffer's physical runs");
		return -1;
	}
	b->runs = runs;
	b->runs[b->nruns++] =
		(struct backing_run){ .offset = offset, .paddr = paddr, .size = PAGE };
	return 0;
}

static int read_runs(int pagemap, const void *vaddr, uint64_t size, struct backing *b)
{
	uint64_t first = (uintptr_t)vaddr / PAGE, pages = size / PAGE, buf[CHUNK];

	for (uint64_t done = 0; done < pages;) {
		size_t n = pages - done < CHUNK ? pages - done : CHUNK;

		if (read_entries(pagemap, "/proc/self/pagemap", first + done, buf, n))
			return -1;
		for (size_t i = 0; i < n; i++, done++) {
			if (!(buf[i] & PM_PRESENT)) {
				log_error("page at offset %#llx of the buffer is not in memory",
					  (unsigned long long)(done * PAGE));
				return -1;
			}
			if (!(buf[i] & PM_PFN_MASK)) {
				log_error(
					"/proc/self/pagemap hides frame numbers: reading the "
					"buffer's physical layout needs CAP_SYS_ADMIN (run as root)");
				return -1;
			}
			if (add_page(b, done * PAGE, (buf[i] & PM_PFN_MASK) * PAGE))
				return -1;
		}
	}
	return 0;
}

/* Bytes of each run in THP and in hugetlb pages. */
static int read_flags(int kpageflags, struct backing *b)
{
	uint64_t buf[CHUNK];

	for (size_t r = 0; r < b->nruns; r++) {
		uint64_t pfn = b->runs[r].paddr / PAGE, pages = b->runs[r].size / PAGE;

		for (uint64_t done = 0; done < pages;) {
			size_t n = pages - done < CHUNK ? pages - done : CHUNK;

			if (read_entries(kpageflags, "/proc/kpageflags", pfn + done, buf, n))
				return -1;
			for (size_t i = 0; i < n; i++) {
				b->thp_bytes += buf[i] >> KPF_THP & 1 ? PAGE : 0;
				b->hugetlb_bytes += buf[i] >> KPF_HUGE & 1 ? PAGE : 0;
			}
			done += n;
		}
	}
	return 0;
}

int backing_read(const void *vaddr, uint64_t size, struct backing *out)
{
	int pagemap = -1, kpageflags = -1, ret = -1;

	memset(out, 0, sizeof(*out));
	if ((uintptr_t)vaddr % PAGE || size % PAGE) {
		log_error("buffer at %p of %#llx bytes is not page-aligned", vaddr,
			  (unsigned long long)size);
		return -1;
	}
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap >= 0)
		kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kpageflags < 0) {
		log_error("opening %s: %s (reading the buffer's physical layout needs root)",
			  pagemap < 0 ? "/proc/self/pagemap" : "/proc/kpageflags", strerror(errno));
		goto cleanup;
	}
	if (read_runs(pagemap, vaddr, size, out) || read_flags(kpageflags, out))
		goto cleanup;
	ret = 0;
cleanup:
	if (pagemap >= 0)
		close(pagemap);
	if (kpageflags >= 0)
		close(kpageflags);
	if (ret)
		backing_free(out);
	return ret;
}

void backing_free(struct backing *b)
{
	free(b->runs);
	memset(b, 0, sizeof(*b));
}
