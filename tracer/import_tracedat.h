/* Import of a trace-cmd trace.dat file (file versions 6 and 7, compressed or not) through
 * libtracecmd: the top buffer and every instance buffer the file holds, merged in timestamp
 * order, each record converted by tep_events. Records of other events are skipped and counted;
 * records the file marks as preceded by lost events give losses per CPU (reason
 * "trace.dat-missed"; a gap whose size the file does not know counts as 1, reason
 * "trace.dat-missed-unknown"). */
#ifndef IOMMUTRACE_IMPORT_TRACEDAT_H
#define IOMMUTRACE_IMPORT_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include "tracer/tep_events.h"

/* The first bytes of every trace.dat: 0x17 0x08 0x44 "tracing". */
#define TRACEDAT_MAGIC "\x17\x08\x44tracing"
#define TRACEDAT_MAGIC_LEN 10

bool tracedat_has_magic(const void *head, size_t len);

struct tracedat_info {
	char clock[32]; /* trace clock the file was recorded with; "" when it does not say */
	int buffers; /* buffers read: the top one and the instances */
};

/**
 * import_tracedat() - Read @path to its end into @sink.
 * @st: counted into, not reset
 * @info: describes the file
 *
 * Return: 0, or -1 with one line in @err: the file cannot be opened, is not a trace.dat, is
 * truncated or corrupt (also when libtracecmd crashes or loops on it: a forked child reads it
 * first, and is stopped after 10 s without a record; nothing reaches @sink before that child read
 * it to its end); or -1 with @err empty when the sink refused a record (the sink says why).
 */
int import_tracedat(const char *path, const struct ftrace_sink *sink, struct ftrace_stats *st,
		    struct tracedat_info *info, char *err, size_t errlen);

#endif
