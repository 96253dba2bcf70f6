/* An I/O engine reads from an NVMe namespace into the harness's buffer at a queue depth for a
 * while and measures what completed: `vfio` (the user-space driver of nvme_io.h over a mapper),
 * `uring` (the kernel nvme driver through io_uring and O_DIRECT, which maps and unmaps every
 * read in the IOMMU) and `uio` (the user-space driver with physical addresses: IOMMU off). cli/io.c drives engines through this
 * interface only. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_ENGINE_H
#define IOMMUTRACE_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/mapper.h"
#include "lat_hist.h"

enum io_workload { IO_RANDREAD, IO_SEQREAD };

/* What an engine opens: the device, its namespace, and the buffer the data lands in. */
struct io_target {
	const char *bdf;
	uint32_t nsid;
	enum mapper_kind mapper;
	struct buffer_spec buffer;
	uint64_t buffer_size, buffer_offset;	/* offset: into the BAR of a bar buffer */
	uint64_t iova;			/* where the buffer is mapped for the device */
	uint32_t max_qd;		/* the deepest queue any point will ask for */
	bool force;
	volatile sig_atomic_t *stop;	/* set by a signal: end the point early */
};

/* One measurement point. */
struct io_point {
	enum io_workload workload;
	uint32_t bs;			/* bytes per command, a multiple of the block size */
	uint32_t qd;			/* commands kept in flight */
	uint64_t duration_ns;
	uint64_t window;		/* bytes of the buffer the data addresses cycle through */
	bool verify;			/* check every read against the testbed's disk pattern */
	uint64_t seed;			/* of the random LBAs */
};

struct io_result {
	uint64_t completed, failed, verify_errors, bytes, elapsed_ns;
	struct lat_hist hist;
};

struct io_engine;

struct io_engine_ops {
	const char *name;
	int (*open)(struct io_engine *e, const struct io_target *t);
	int (*run)(struct io_engine *e, const struct io_point *p, struct io_result *r);
	/* Stops I/O and puts the devices back; -1 when one could not be restored. */
	int (*close)(struct io_engine *e);
};

struct io_engine {
	const struct io_engine_ops *ops;
	uint32_t block_size;		/* of the namespace */
	uint64_t blocks;
	uint32_t max_transfer;		/* bytes per command the device takes; 0: no limit */
	uint32_t max_qd;		/* commands the device can have in flight on one queue */
	char model[41], serial[21];
	void *buffer;			/* where the data lands, in this process */
	uint64_t buffer_size;
	void *priv;
};

extern const struct io_engine_ops io_engine_vfio;
extern const struct io_engine_ops io_engine_uring;
extern const struct io_engine_ops io_engine_uio;

/* "vfio", "uring" or "uio"; NULL for an unknown name. */
const struct io_engine_ops *io_engine_find(const char *name);

#endif
