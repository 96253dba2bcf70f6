/* Import of ftrace text output: the tracefs 'trace' or 'trace_pipe' files of a tracing session
 * (for instance one enabled at boot with trace_event=iommu:*), or `trace-cmd report` output.
 *
 * An event line is "COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: EVENT: MESSAGE". COMM may
 * hold spaces and dashes: the PID is the last "-digits" before the CPU column. The timestamp
 * must be seconds with a fraction of 1 to 9 digits (a clock printing raw counts, such as
 * 'counter' or 'x86-tsc', is not read). The messages are parsed as the kernel prints them
 * (TP_printk of include/trace/events/iommu.h and drivers/iommu/intel/trace.h; map and unmap also
 * in their pre-5.13 form without the end address). Strictness: a line that is not one of these
 * forms, or whose IOMMU message does not parse exactly, is malformed: counted, reported with its
 * number at debug level, never fatal. Lines longer than IMPORT_TEXT_LINE_MAX are malformed.
 * But IMPORT_TEXT_UNPARSED_MAX bytes without a line that parses (an event, another event, a
 * lost-events line; comments do not count) end the import: no trace holds that much else. */
#ifndef IOMMUTRACE_IMPORT_TEXT_H
#define IOMMUTRACE_IMPORT_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tracer/tep_events.h"

#define IMPORT_TEXT_LINE_MAX 65536
#define IMPORT_TEXT_UNPARSED_MAX (4 << 20)

enum text_line_kind {
	TEXT_LINE_EVENT, /* an IOMMU event: event holds it */
	TEXT_LINE_OTHER_EVENT, /* a well-formed event line of another event */
	TEXT_LINE_LOST, /* "CPU:N [LOST M EVENTS]", trace-cmd's "[M EVENTS DROPPED]" */
	TEXT_LINE_COMMENT, /* blank, '#' header, "##### CPU n buffer started", "cpus=N" */
	TEXT_LINE_MALFORMED,
};

struct text_line {
	struct it_event event;
	uint32_t lost_cpu;
	uint64_t lost; /* 1 when the count is unknown ("CPU:N [EVENTS DROPPED]") */
	bool lost_count_unknown;
};

/**
 * import_text_parse_line() - Parse one NUL-terminated line (trailing newline and spaces allowed).
 *
 * The event header: ts_ns from the timestamp, cpu, tid = PID, pid = TGID when the line has one
 * else PID, comm truncated to IT_COMM_LEN - 1 bytes, probe_id 0, flags 0, domains 0.
 */
enum text_line_kind import_text_parse_line(const char *line, struct text_line *out);

/**
 * import_text_stream() - Read @f to its end, delivering IOMMU events and lost-event counts to
 * @sink.
 * @name: the file's name, for messages
 * @sink: losses go with reason "ftrace-lost", or "ftrace-lost-unknown" for a gap of unknown
 *        size, counted as 1
 * @st: counted into, not reset
 *
 * Return: 0, or -1 when reading fails, IMPORT_TEXT_UNPARSED_MAX bytes hold no line that parses,
 * or the sink refuses (logged).
 */
int import_text_stream(FILE *f, const char *name, const struct ftrace_sink *sink,
		       struct ftrace_stats *st);

#endif
