/* trace.dat import through libtracecmd (see import_tracedat.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <trace-cmd.h>
#include "common/log.h"
#include "tracer/import_tracedat.h"

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
	int failed; /* the sink refused something */
	uint64_t *progress; /* records read, for another process to watch; or NULL */
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
		snprintf(err, errlen,
			 "%s is not a trace-cmd trace.dat file (its first bytes are "
			 "not the trace.dat magic)",
			 path);
		return -1;
	}
	return 0;
}

static int report_loss(struct iterate_state *s, struct tep_record *rec)
{
	uint64_t lost = rec->missed_events > 0 ? (uint64_t)rec->missed_events : 1;
	const char *reason =
		rec->missed_events > 0 ? "trace.dat-missed" : "trace.dat-missed-unknown";

	s->st->lost += lost;
	return s->sink->loss((uint32_t)rec->cpu, lost, reason, s->sink->ctx);
}

static int on_record(struct tracecmd_input *handle, struct tep_record *rec, int cpu, void *arg)
{
	struct iterate_state *s = arg;
	struct tep_events *events = NULL;
	struct it_event e;
	int ret;

	if (s->progress)
		__atomic_fetch_add(s->progress, 1, __ATOMIC_RELAXED);
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

static int open_buffers(struct tracecmd_input *top, struct buffer **out, int *count, char *err,
			size_t errlen)
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

/* Reads path (whose magic was checked) into sink, counting each record into *progress when
 * progress is not NULL. */
static int read_tracedat(const char *path, const struct ftrace_sink *sink, struct ftrace_stats *st,
			 struct tracedat_info *info, uint64_t *progress, char *err, size_t errlen)
{
	/* the libraries' warnings (formats of unrelated events they cannot parse) are noise but
	 * at -vv */
	enum tep_loglevel level = log_verbose >= 2 ? TEP_LOG_WARNING : TEP_LOG_NONE;
	struct iterate_state s = { .sink = sink, .st = st, .progress = progress };
	struct tracecmd_input **handles = NULL;
	struct tracecmd_input *top;
	const char *clock;
	int ret = -1;

	tracecmd_set_loglevel(level);
	tep_set_loglevel(level);
	top = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!top) {
		snprintf(err, errlen,
			 "%s: cannot read this trace.dat (truncated or corrupt, or of "
			 "a file version libtracecmd does not know)",
			 path);
		return -1;
	}
	if (tracecmd_init_data(top) < 0) {
		keep_unclosable(top);
		snprintf(err, errlen,
			 "%s: cannot read the data of this trace.dat (truncated or "
			 "corrupt)",
			 path);
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
		err[0] = '\0'; /* the sink said why */
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

/* The child's exit status when libtracecmd refused the file (its message is in the pipe). */
#define CHILD_REFUSED 3

/* Seconds the child may read without a record before it is taken to loop on a corrupt file
 * (libtracecmd can, on a header's options): a real file's header is read at once, and every
 * record it reads, of any event, counts. */
#define CHILD_STALL_S 10

static int discard_event(const struct it_event *e, void *ctx)
{
	return 0;
}

static int discard_loss(uint32_t cpu, uint64_t lost, const char *reason, void *ctx)
{
	return 0;
}

/* Set by a sanitizer build (libFuzzer installs its crash report there): absent otherwise */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* The child: reads path to its end, counting what it reads into *progress and discarding it,
 * silently; a refusal goes to fd. */
static void __attribute__((noreturn)) read_in_child(const char *path, int fd, uint64_t *progress)
{
	static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	const struct ftrace_sink discard = { discard_event, discard_loss, NULL };
	struct ftrace_stats st = { 0 };
	struct tracedat_info info = { 0 };
	char err[512];
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* a crash must end the child by its signal, not in a handler ASan or libFuzzer installed;
	 * a sanitizer's report ends it with exit status 1, not as a crash of the fuzzer: the
	 * parent refuses the file either way */
	for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
		signal(crash_signals[i], SIG_DFL);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(NULL);
	/* a stop request ends it plainly: the parent's handler (cli/import.c) cleans up, once */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	/* the parent says what it has to say, once: the warnings come again when it reads */
	if (devnull >= 0)
		dup2(devnull, STDERR_FILENO);
	if (!read_tracedat(path, &discard, &st, &info, progress, err, sizeof(err)))
		_exit(0);
	if (write(fd, err, strnlen(err, sizeof(err))) < 0)
		_exit(1);
	_exit(CHILD_REFUSED);
}

static bool is_crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

/* Collects what the child writes to fd into err until it closes it (it ended), while watching
 * *progress: unchanged for CHILD_STALL_S seconds, the child is killed. Returns whether it was. */
static bool watch_child(pid_t pid, int fd, const uint64_t *progress, char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t seen = 0, now;
	char drain[256];
	size_t got = 0;
	unsigned idle = 0;
	ssize_t n;
	int r;

	for (;;) {
		r = poll(&pfd, 1, 1000);
		if (r > 0) {
			n = got < errlen - 1 ? read(fd, err + got, errlen - 1 - got) :
					       read(fd, drain, sizeof(drain));
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
			got += n > 0 && got < errlen - 1 ? (size_t)n : 0;
			continue;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		now = __atomic_load_n(progress, __ATOMIC_RELAXED);
		idle = now == seen ? idle + 1 : 0;
		seen = now;
		if (idle >= CHILD_STALL_S) {
			kill(pid, SIGKILL);
			err[got] = '\0';
			return true;
		}
	}
	err[got] = '\0';
	return false;
}

/* Reads path in a forked child first. Returns 0 when the child read it to its end, or -1 with
 * one line in err: libtracecmd refused the file, the child ended otherwise (a crash, or a
 * sanitizer's exit on a memory error of the libraries), or it read nothing for CHILD_STALL_S. */
static int try_in_child(const char *path, char *err, size_t errlen)
{
	uint64_t *progress = mmap(NULL, sizeof(*progress), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char how[64];
	int fds[2] = { -1, -1 }, status, ret = -1;
	bool stalled;
	pid_t pid;

	if (progress == MAP_FAILED || pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(errno));
		goto cleanup;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		read_in_child(path, fds[1], progress);
	}
	close(fds[1]);
	if (pid < 0) {
		snprintf(err, errlen, "%s: cannot read it: fork: %s", path, strerror(errno));
		goto cleanup;
	}
	stalled = watch_child(pid, fds[0], progress, err, errlen);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(err, errlen, "%s: cannot read it: waitpid: %s", path,
				 strerror(errno));
			goto cleanup;
		}
	}
	if (stalled) {
		snprintf(err, errlen,
			 "%s: this trace.dat is corrupt: libtracecmd read nothing from it"
			 " for %d s (it loops on its header or data); record the trace again",
			 path, CHILD_STALL_S);
		goto cleanup;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		ret = 0;
		goto cleanup;
	}
	/* libtracecmd's refusal, in err: said once, without the warnings before it */
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_REFUSED && err[0])
		goto cleanup;
	if (WIFSIGNALED(status) && !is_crash_signal(WTERMSIG(status))) {
		snprintf(err, errlen, "%s: the process reading it was ended by signal %d (%s)",
			 path, WTERMSIG(status), strsignal(WTERMSIG(status)));
		goto cleanup;
	}
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "%s", strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
	snprintf(err, errlen,
		 "%s: this trace.dat is corrupt: libtracecmd crashed reading its "
		 "header, event formats or data (%s); record the trace again",
		 path, how);
cleanup:
	if (fds[0] >= 0)
		close(fds[0]);
	if (progress != MAP_FAILED)
		munmap(progress, sizeof(*progress));
	return ret;
}

/* A corrupt trace.dat (a zero page size, a broken print fmt) can crash libtracecmd or
 * libtraceevent: a forked child reads the file first, so a crash ends only the child, and the
 * file is read here, into sink, only once it was read there to its end. Simpler than passing
 * the records from the child, and the fuzzer still sees this process write them. */
int import_tracedat(const char *path, const struct ftrace_sink *sink, struct ftrace_stats *st,
		    struct tracedat_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	if (check_magic(path, err, errlen) || try_in_child(path, err, errlen))
		return -1;
	return read_tracedat(path, sink, st, info, NULL, err, errlen);
}
