/* The start both BPF benchmarks share: check that this process may load BPF, and build the probe
 * plan of the raw_tp handlers alone (BPF_PROG_TEST_RUN drives them; no function probes). */
#ifndef IOMMUTRACE_BENCH_RAW_PLAN_H
#define IOMMUTRACE_BENCH_RAW_PLAN_H

#include "tracer/bpf_capture.h"
#include "tracer/probe_plan.h"

/* The capture modes both measure, in the order of their rows */
#define BENCH_NMODES 3
extern const enum capture_mode bench_modes[BENCH_NMODES];

/* Returns 0, or 1 after one line on stderr naming prog (the benchmark) and what failed. */
int bench_raw_plan(const char *prog, struct probe_plan *plan);

#endif
