/* Result rows and the benchmark clock (see rows.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench/rows.h"

static void print_number(double v)
{
	if (isnan(v))
		fputs("-", stdout);
	else if (fabs(v) >= 1000)
		printf("%.0f", v);
	else
		printf("%.4g", v);
}

void bench_row(int item, const char *figure, double ours, const char *unit, const char *peer_name,
	       double peer, const char *better, const char *target)
{
	printf("%d\t%s\t", item, figure);
	print_number(ours);
	printf("\t%s\t%s\t", unit, peer_name ? peer_name : "-");
	print_number(peer_name ? peer : NAN);
	printf("\t%s\t%s\n", better, target ? target : "-");
	fflush(stdout);
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

unsigned long long bench_env_ull(const char *name, unsigned long long fallback)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return fallback;
	v = strtoull(s, &end, 0);
	return *end ? fallback : v;
}
