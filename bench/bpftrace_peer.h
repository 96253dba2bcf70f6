/* The bpftrace peer of items 1 and 2: a running bpftrace with the one-liner that prints what our
 * map and unmap records hold, and bpftrace's own bytecode for it driven by BPF_PROG_TEST_RUN.
 *
 * bpftrace 0.17 (Debian 12) has no rawtracepoint probes, and its tracepoint:iommu:map/unmap
 * programs cannot be test-run and never fire on a machine without an IOMMU. So bpftrace runs
 * attached to those tracepoints (its perf buffer and its reader as in real use), and the very
 * instructions it generates for them (bpftrace --emit-elf) are loaded as raw_tp programs writing
 * into that running bpftrace's perf buffer: a test_run then costs bpftrace's code what a real
 * event would, and bpftrace's reader prints the line. A tracepoint reads its fields after the
 * 8-byte common header, so a clone's context is { 0, arg0, arg1, arg2 }. */
#ifndef IOMMUTRACE_BENCH_BPFTRACE_PEER_H
#define IOMMUTRACE_BENCH_BPFTRACE_PEER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct bpftrace_peer {
	pid_t pid;
	int perf_map_fd; /* the running bpftrace's "printf" perf event array */
	int map_fd, unmap_fd; /* bpftrace's map/unmap code, loaded as raw_tp */
	int tags_match; /* the clones' tags equal the running programs' */
	char out_path[512];
	long out_offset; /* how far the output has been read */
	uint64_t lines; /* event lines printed so far */
	uint64_t lost; /* events bpftrace reported lost ("Lost N events") */
	struct rusage usage; /* bpftrace's, after bpftrace_peer_stop */
};

/* Starts bpftrace (its output to out_path, its log to out_path.log, pinned to cpu when >= 0,
 * with a per-CPU perf buffer of perf_pages pages) and loads the clones. Returns 0, or -1 with
 * one line in err. */
int bpftrace_peer_start(struct bpftrace_peer *p, const char *out_path, int cpu, unsigned perf_pages,
			char *err, size_t errlen);
/* Reads what bpftrace printed since the last call into lines and lost. */
void bpftrace_peer_read_output(struct bpftrace_peer *p);
/* Stops bpftrace (SIGINT: it flushes its output), reads the rest, closes everything. */
void bpftrace_peer_stop(struct bpftrace_peer *p);

#endif
