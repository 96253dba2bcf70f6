/* The raw_tp probe plan of the BPF benchmarks (see raw_plan.h). */
#include <stdio.h>
#include "common/privilege.h"
#include "bench/raw_plan.h"

int bench_raw_plan(const char *prog, struct probe_plan *plan)
{
	char err[256], missing[96];

	if (!privilege_can_trace_bpf(missing, sizeof(missing))) {
		fprintf(stderr, "%s: needs %s (run as root)\n", prog, missing);
		return 1;
	}
	if (probe_plan_build(plan,
			     &(struct probe_plan_opts){ .raw_tp_only = true, .no_functions = true },
			     err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	return 0;
}

const enum capture_mode bench_modes[BENCH_NMODES] = {
	CAPTURE_PER_EVENT,
	CAPTURE_AGGREGATE,
	CAPTURE_THRESHOLD,
};
