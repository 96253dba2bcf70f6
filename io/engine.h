/* An I/O engine reads from an NVMe namespace into the harness's buffer (or, for the write
 * workloads, writes the testbed's pattern from it) at a queue depth for a while and measures what
 * completed: `vfio` (the user-space driver of nvme_io.h over a mapper),
 * `uring` (the kernel nvme driver through io_uring and O_DIRECT, which maps and unmaps every
 * command in the IOMMU) and `uio` (the user-space driver with physical addresses: IOMMU off). cli/io.c drives engines through this
 * interface only. Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_ENGINE_H
#define IOMMUTRACE_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/mapper.h"
#include "io/lat_hist.h"

enum io_workload { IO_RANDREAD, IO_SEQREAD, IO_RANDWRITE, IO_SEQWRITE };

/**
 * io_workload_name() - The name of @w: "randread", "seqread", "randwrite", "seqwrite".
 */
const char *io_workload_name(enum io_workload w);
/**
 * io_workload_parse() - Parse a workload's name.
 *
 * Return: 0, or -1 for an unknown name.
 */
int io_workload_parse(const char *s, enum io_workload *w);
/**
 * io_workload_writes() - Whether the workload writes to the namespace.
 *
 * Each command's buffer piece is first filled with the testbed's pattern for its blocks
 * (pattern.h), so a later read with --verify checks it.
 */
static inline bool io_workload_writes(enum io_workload w)
{
	return w == IO_RANDWRITE || w == IO_SEQWRITE;
}
static inline bool io_workload_random(enum io_workload w)
{
	return w == IO_RANDREAD || w == IO_RANDWRITE;
}

/* Devices one io run drives at once, each with its own engine and worker thread. */
#define IO_MAX_DEVICES 32

/* What an engine opens: the device, its namespace, and the buffer the data lands in. */
struct io_target {
	const char *bdf;
	uint32_t nsid;
	enum mapper_kind mapper;
	struct buffer_spec buffer;
	uint64_t buffer_size, buffer_offset; /* offset: into the BAR of a bar buffer */
	uint64_t iova; /* where the buffer is mapped for the device */
	/* bar, several devices (vfio engine, type1): the first engine opens the window for all,
	 * bar_window_bytes long, and uses its first buffer_size bytes; each other engine takes the
	 * buffer_size bytes at peer_offset of that window (peer_window), and leaves the BAR's device
	 * to the first. */
	uint64_t bar_window_bytes; /* 0: buffer_size */
	const struct buffer *peer_window;
	uint64_t peer_offset;
	uint32_t max_qd; /* the deepest queue any point will ask for */
	uint32_t max_bs; /* the largest command any point will make, bytes */
	bool writes; /* some point writes: open the namespace for writing */
	bool force;
	volatile sig_atomic_t *stop; /* set by a signal: end the point early */
	const char *sysfs_root; /* where the device is found in sysfs (as for sysfs_path):
					 * NULL, the live system */
};

/* One measurement point. */
struct io_point {
	enum io_workload workload;
	uint32_t bs; /* bytes per command, a multiple of the block size */
	uint32_t qd; /* commands kept in flight */
	uint64_t duration_ns;
	uint64_t window; /* bytes of the buffer the data addresses cycle through */
	bool verify; /* check every read against the testbed's disk pattern
					 * (reads only) */
	uint64_t seed; /* of the random LBAs */
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
	uint32_t block_size; /* of the namespace */
	uint64_t blocks;
	uint32_t max_transfer; /* bytes per command the device takes; 0: no limit */
	uint32_t max_qd; /* commands the device can have in flight on one queue */
	char model[41], serial[21];
	void *buffer; /* where the data lands, in this process */
	uint64_t buffer_size;
	const struct buffer *window; /* a bar window other engines may take parts of; NULL */
	void *priv;
};

extern const struct io_engine_ops io_engine_vfio;
extern const struct io_engine_ops io_engine_uring;
extern const struct io_engine_ops io_engine_uio;

/**
 * io_engine_find() - The engine called @name: "vfio", "uring" or "uio".
 *
 * Return: its ops, or NULL for an unknown name.
 */
const struct io_engine_ops *io_engine_find(const char *name);

#endif
