/* Reading a clock in nanoseconds. CLOCK_MONOTONIC is the clock of every recorded event, of the
 * io points, and of the drivers' timeouts. */
#ifndef IOMMUTRACE_CLOCK_H
#define IOMMUTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
