/* What one `io` run measured, handed from the command the recorder runs (io -o) to the recorder
 * through the report file of common/child_report.h, and stored with the session: the run's
 * parameters (io_runs), its devices (io_devices), each point's counts, rates and percentiles per
 * device (io_points) and its latency histogram (io_latency_buckets, non-empty buckets only). Points carry their
 * CLOCK_MONOTONIC start and end, the clock of the recorded events, so throughput joins the
 * mappings made during it. */
#ifndef IOMMUTRACE_IO_REPORT_H
#define IOMMUTRACE_IO_REPORT_H

#include <stdint.h>
#include <sqlite3.h>
#include "io/engine.h"

struct io_report_device {
	char device[16], model[41], serial[21];
	char iommu[16]; /* off | passthrough | translated: how its DMA is addressed */
	uint32_t block_size; /* 0: not opened yet */
	int32_t numa_node, cpu; /* -1: none, not pinned */
	uint64_t blocks, iova; /* iova 0: the engine maps nothing itself */
	uint64_t bar_offset; /* bar: its part of the window, from the BAR's start */
};

struct io_report_run {
	char engine[16], mapper[16];
	char workload[16], buffer[48], buffer_kind[16];
	uint32_t nsid, bs, verify, ndevices;
	uint64_t duration_ns, repeat, size, bar_offset, window, iova;
	struct io_report_device devices[IO_MAX_DEVICES];
};

struct io_report_point {
	uint32_t qd, repeat_index, device_index;
	uint64_t start_mono_ns, end_mono_ns;
	struct io_result result;
};

struct io_report {
	struct io_report_run run;
	uint64_t npoints;
	struct io_report_point *points;
};

/**
 * io_report_write_run() - Child: write the run, at its start (points 0).
 *
 * Return: 0, or -1 (logged).
 */
int io_report_write_run(int fd, const struct io_report_run *run);
/**
 * io_report_write_point() - Child: write each point as it ends.
 *
 * Return: 0, or -1 (logged).
 */
int io_report_write_point(int fd, uint64_t index, const struct io_report_point *p);
/**
 * io_report_read() - Recorder: read what the child wrote.
 *
 * Return: 0; 1 when it wrote nothing; -1 (logged) when malformed.
 */
int io_report_read(int fd, struct io_report *r);
void io_report_free(struct io_report *r);
int io_report_store(sqlite3 *db, int64_t session_id, const struct io_report *r);

#endif
