/* The buffers the harness maps into a device's domain: anonymous memory (huge pages refused),
 * THP, hugetlb 2 MiB / 1 GiB, memfd, and a window of a device's BAR mmap()ed through its vfio
 * device fd (the stand-in for GPU BAR1 and any peer-to-peer target). Functions log one line on
 * failure and return -1. */
#ifndef IOMMUTRACE_BUFFERS_H
#define IOMMUTRACE_BUFFERS_H

#include <stdint.h>

enum buffer_kind { BUF_ANON, BUF_THP, BUF_HUGETLB2M, BUF_HUGETLB1G, BUF_MEMFD, BUF_BAR };

struct buffer_spec {
	enum buffer_kind kind;
	char bar_bdf[13];	/* BUF_BAR: the device whose BAR it is */
	unsigned bar_index;	/* BUF_BAR: 0 to 5 */
};

struct buffer {
	struct buffer_spec spec;
	void *vaddr;
	uint64_t size;
	uint64_t align;		/* largest page size (4K, 2M, 1G) the backing's alignment allows */
	uint64_t bar_start;	/* BUF_BAR: CPU physical address of the BAR */
	uint64_t bar_offset;	/* BUF_BAR: the window's offset into it */
	void *map_base;		/* what to munmap */
	uint64_t map_len;
	int fd;			/* memfd or VFIO device fd; -1 */
};

#define BUFFER_INIT { .fd = -1 }

/* "anon", "thp", "hugetlb2m", "hugetlb1g", "memfd", "bar:BDF/BARINDEX". */
int buffer_parse(const char *s, struct buffer_spec *out);
/* The page size a buffer of this kind is made of, which its size must be a multiple of. */
uint64_t buffer_granule(enum buffer_kind kind);
/* The name of the kind, "bar" for a BAR window. */
const char *buffer_kind_name(enum buffer_kind kind);
/* Allocates and touches the buffer, or maps the BAR window at offset through bar_device_fd, a
 * VFIO device fd of the BAR's device (BUF_BAR only, else -1), which the buffer then owns. */
int buffer_create(struct buffer *b, const struct buffer_spec *spec, uint64_t size,
		  uint64_t offset, int bar_device_fd);
void buffer_destroy(struct buffer *b);
/* A part of b (size bytes at offset) that owns nothing: destroying it does nothing, and it lives
 * no longer than b. */
void buffer_view(const struct buffer *b, uint64_t offset, uint64_t size, struct buffer *view);

#endif
