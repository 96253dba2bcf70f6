/* Result rows of `make bench`, in the format bench/run collects (8 TAB-separated fields: item,
 * figure, ours, unit, peer name, peer, better, target; '#' lines are notes), and the clock the
 * benchmarks time with. */
#ifndef IOMMUTRACE_BENCH_ROWS_H
#define IOMMUTRACE_BENCH_ROWS_H

#include <math.h>

/* peer_name NULL: no peer ("-"); peer NAN: no peer figure; target NULL: no target ("-") */
void bench_row(int item, const char *figure, double ours, const char *unit, const char *peer_name,
	       double peer, const char *better, const char *target);
/* A note printed under the table ('#' line) */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CLOCK_MONOTONIC in seconds */
double bench_now(void);
/* An unsigned integer from the environment, or fallback when unset or not a number */
unsigned long long bench_env_ull(const char *name, unsigned long long fallback);

#endif
