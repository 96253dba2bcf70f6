/* trace.dat import through libtracecmd (see import_tracedat.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>
#include "common/log.h"
#include "import_tracedat.h"

/* Exported by libtracecmd (1.x) but declared only in its private header. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);

/* libtracecmd 1.3 (trace-cmd 3.1.6) crashes in tracecmd_close() on a handle whose
 * tracecmd_init_data() failed (a version 6 file truncated in its data): such a handle is left
 * open, and kept reachable here rather than leaked (the CLI reads one file; the fuzzer many). */
static struct tracecmd_input **unclosable;
static size_t n_unclosable;

static void keep_unclosable(struct tracecmd_input *handle)
{
	struct tracecmd_input **more = realloc(unclosable, (n_unclosable + 1) * sizeof(*more));

	if (!more)
		return;
	unclosable = more;
	unclosable[n_unclosable++] = handle;
}

struct buffer {
	struct tracecmd_input *handle;
	struct tep_events *events;
};

struct iterate_state {
	struct buffer *buffers;
	int nbuffers;
	const struct ftrace_sink *sink;
	struct ftrace_stats *st;
	int failed;			/* the sink refused something */
};

bool tracedat_has_magic(const void *head, size_t len)
{
	return len >= TRACEDAT_MAGIC_LEN && !memcmp(head, TRACEDAT_MAGIC, TRACEDAT_MAGIC_LEN);
}

/* Opens path only to tell a missing or unreadable file, and a file of another kind, apart from
 * a damaged trace.dat. */
static int check_magic(const char *path, char *err, size_t errlen)
{
	unsigned char head[TRACEDAT_MAGIC_LEN];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (!tracedat_has_magic(head, n)) {
		snprintf(err, errlen, "%s is not a trace-cmd trace.dat file (its first bytes are "
			 "not the trace.dat magic)", path);
		return -1;
	}
	return 0;
}

static int report_loss(struct iterate_state *s, struct tep_record *rec)
{
	uint64_t lost = rec->missed_events > 0 ? (uint64_t)rec->missed_events : 1;
	const char *reason = rec->missed_events > 0 ? "trace.dat-missed" :
			     "trace.dat-missed-unknown";

	s->st->lost += lost;
	return s->sink->loss((uint32_t)rec->cpu, lost, reason, s->sink->ctx);
}

static int on_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *arg)
{
	struct iterate_state *s = arg;
	struct tep_events *events = NULL;
	struct it_event e;
	int ret;

	for (int i = 0; i < s->nbuffers; i++)
		if (s->buffers[i].handle == handle)
			events = s->buffers[i].events;
	if (rec->missed_events && report_loss(s, rec)) {
		s->failed = 1;
		return 1;
	}
	ret = events ? tep_events_convert(events, rec, &e) : 0;
	if (ret == 0) {
		s->st->skipped++;
	} else if (ret < 0) {
		s->st->malformed++;
		log_debug("trace.dat: CPU %d record at %llu ns: malformed IOMMU record", cpu,
			  rec->ts);
	} else {
		s->st->events[e.h.kind]++;
		if (s->sink->event(&e, s->sink->ctx)) {
			s->failed = 1;
			return 1;
		}
	}
	return 0;
}

static int open_buffers(struct tracecmd_input *top, struct buffer **out, int *count,
			char *err, size_t errlen)
{
	int ninstances = tracecmd_buffer_instances(top);
	struct buffer *b = calloc((size_t)ninstances + 1, sizeof(*b));

	*out = b;
	*count = 0;
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i <= ninstances; i++) {
		struct tracecmd_input *h = i ? tracecmd_buffer_instance_handle(top, i - 1) : top;

		if (!h) {
			snprintf(err, errlen, "cannot read buffer '%s' of the trace.dat",
				 tracecmd_buffer_instance_name(top, i - 1));
			return -1;
		}
		b[i].handle = h;
		(*count)++;
		b[i].events = tep_events_new(tracecmd_get_tep(h));
		if (!b[i].events) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		log_debug("trace.dat buffer '%s': %zu of the IOMMU events are described",
			  i ? tracecmd_buffer_instance_name(top, i - 1) : "top",
			  tep_events_known(b[i].events));
	}
	return 0;
}

int import_tracedat(const char *path, const struct ftrace_sink *sink, struct ftrace_stats *st,
		    struct tracedat_info *info, char *err, size_t errlen)
{
	/* the libraries' warnings (formats of unrelated events they cannot parse) are noise but
	 * at -vv */
	enum tep_loglevel level = log_verbose >= 2 ? TEP_LOG_WARNING : TEP_LOG_NONE;
	struct iterate_state s = { .sink = sink, .st = st };
	struct tracecmd_input **handles = NULL;
	struct tracecmd_input *top;
	const char *clock;
	int ret = -1;

	memset(info, 0, sizeof(*info));
	if (check_magic(path, err, errlen))
		return -1;
	tracecmd_set_loglevel(level);
	tep_set_loglevel(level);
	top = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		snprintf(err, errlen, "%s: cannot read this trace.dat (truncated or corrupt, or of "
			 "a file version libtracecmd does not know)", path);
		return -1;
	}
	if (tracecmd_init_data(top) < 0) {
		keep_unclosable(top);
		snprintf(err, errlen, "%s: cannot read the data of this trace.dat (truncated or "
			 "corrupt)", path);
		return -1;
	}
	clock = tracecmd_get_trace_clock(top);
	if (clock)
		ftrace_copy_name(info->clock, sizeof(info->clock), clock, sizeof(info->clock));
	if (open_buffers(top, &s.buffers, &s.nbuffers, err, errlen))
		goto cleanup;
	info->buffers = s.nbuffers;
	handles = calloc((size_t)s.nbuffers, sizeof(*handles));
	if (!handles) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	for (int i = 0; i < s.nbuffers; i++)
		handles[i] = s.buffers[i].handle;
	if (tracecmd_iterate_events_multi(handles, s.nbuffers, on_record, &s) < 0 && !s.failed) {
		snprintf(err, errlen, "%s: reading its records failed (truncated or corrupt)",
			 path);
		goto cleanup;
	}
	if (s.failed) {
		snprintf(err, errlen, "%s: import stopped: the database refused a record", path);
		goto cleanup;
	}
	ret = 0;
cleanup:
	for (int i = 0; i < s.nbuffers; i++) {
		tep_events_free(s.buffers[i].events);
		if (s.buffers[i].handle != top)
			tracecmd_close(s.buffers[i].handle);
	}
	free(s.buffers);
	free(handles);
	tracecmd_close(top);
	return ret;
}
