/* One measurement point on every device of a run at once: a thread per device, pinned to the CPU
 * chosen for it (device_cpu.h), all released together once every thread exists, each running its
 * device's engine for the point and timing it on CLOCK_MONOTONIC. */
#ifndef IOMMUTRACE_IO_WORKERS_H
#define IOMMUTRACE_IO_WORKERS_H

#include <stddef.h>
#include "io/engine.h"
#include "io/io_report.h"

struct io_worker {
	const char *bdf;
	struct io_engine engine; /* opened by the caller */
	int node, cpu; /* -1: none, not pinned */
	char iommu[16]; /* for the report: how the device's DMA is addressed */
	struct io_point point; /* what to run; set by the caller */
	struct io_report_point row; /* what it measured: start, end, result */
	int rc; /* the engine's run: 0 or -1 */
};

/* Called about once a second while a point runs, with the time since it started. */
typedef void (*io_workers_tick)(void *ctx, uint64_t elapsed_ns);

/**
 * io_workers_run() - Run each worker's point in its own thread and wait for all.
 * @tick: called meanwhile, when not NULL
 *
 * Return: 0 when every engine's run returned 0, -1 (each failure logged by its engine, or here
 * when a thread cannot start: then no point runs) otherwise.
 */
int io_workers_run(struct io_worker *w, size_t n, io_workers_tick tick, void *ctx);

#endif
