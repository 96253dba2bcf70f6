/* Live capture through a private tracefs instance (see tracefs_capture.h): one reader per CPU on
 * its trace_pipe_raw, records merged oldest first across CPUs, delivered in bounded batches so
 * that a busy system never keeps a poll from returning. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kbuffer.h>
#include <tracefs.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "tracer/probe_plan.h"
#include "tracer/tep_events.h"
#include "tracer/tracefs_capture.h"

#define INSTANCE_PREFIX "iommutrace-"
/* Records handled per poll: bounds how long a poll runs when events arrive faster than the
 * database takes them (the buffers then overrun, and the losses say so). */
#define POLL_BUDGET 65536
/* Threads whose thread group and comm are remembered; a power of two. */
#define TASK_CACHE 1024

struct cpu_reader {
	/* per_cpu/cpuN/trace_pipe_raw, non-blocking; close-on-exec, so that a traced command
	 * cannot keep the instance busy */
	int fd;
	uint32_t cpu;
	struct kbuffer *kbuf;
	void *subbuf;
	bool loaded; /* subbuf may hold records not read yet */
	bool has_rec; /* rec is the oldest unread record of this CPU */
	struct tep_record rec;
};

struct task_info {
	uint32_t tid; /* 0: empty slot */
	uint32_t tgid;
	char comm[IT_COMM_LEN];
};

struct tracefs_capture {
	char name[32];
	struct tracefs_instance *instance;
	struct tep_handle *tep;
	struct tep_events *events;
	bool *enabled; /* per ftrace_iommu_events entry */
	struct cpu_reader *readers;
	struct pollfd *pfds;
	size_t nreaders;
	size_t subbuf_size;
	uint64_t skipped, malformed;
	struct task_info tasks[TASK_CACHE];
};

/* The PID in an instance name "iommutrace-PID", or 0. */
static long instance_pid(const char *name)
{
	const char *digits = name + strlen(INSTANCE_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) || *digits < '1' ||
	    *digits > '9')
		return 0;
	pid = strtol(digits, &end, 10);
	return *end ? 0 : pid;
}

/* Removes the instances of iommutrace processes that no longer run (killed before they could
 * remove theirs). An instance whose files are open is busy and stays. (No regex given to
 * tracefs_instances(): libtracefs 1.6 does not free it.) */
static void remove_stale_instances(void)
{
	char **names = tracefs_instances(NULL);

	for (size_t i = 0; names && names[i]; i++) {
		long pid = instance_pid(names[i]);
		struct tracefs_instance *inst;

		if (pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		inst = tracefs_instance_alloc(NULL, names[i]);
		if (inst && tracefs_instance_destroy(inst) == 0)
			log_info("removed tracefs instance %s, left by a process that no longer "
				 "runs",
				 names[i]);
		else
			log_debug("tracefs instance %s (stale) could not be removed: %s", names[i],
				  strerror(errno));
		tracefs_instance_free(inst);
	}
	tracefs_list_free(names);
}

/* The sub-buffer size reads of trace_pipe_raw return: buffer_subbuf_size_kb (6.8 on), else the
 * page size. */
static size_t read_subbuf_size(struct tracefs_instance *instance)
{
	long long kb;

	if (tracefs_file_exists(instance, "buffer_subbuf_size_kb") &&
	    tracefs_instance_file_read_number(instance, "buffer_subbuf_size_kb", &kb) == 0 &&
	    kb > 0 && kb <= 1024 * 1024)
		return (size_t)kb * 1024;
	return (size_t)sysconf(_SC_PAGESIZE);
}

static int open_readers(struct tracefs_capture *c, char *err, size_t errlen)
{
	/* possible CPUs: ids can have gaps (0-3,8-11), so a count of CPUs would miss some */
	long ncpus = libbpf_num_possible_cpus();
	char file[64];

	if (ncpus < 1) {
		snprintf(err, errlen, "cannot read the possible CPUs: %s", strerror((int)-ncpus));
		return -1;
	}
	c->subbuf_size = read_subbuf_size(c->instance);
	c->readers = calloc((size_t)ncpus, sizeof(*c->readers));
	c->pfds = calloc((size_t)ncpus, sizeof(*c->pfds));
	if (!c->readers || !c->pfds)
		goto nomem;
	for (long cpu = 0; cpu < ncpus; cpu++) {
		struct cpu_reader *r = &c->readers[c->nreaders];
		int fd;

		snprintf(file, sizeof(file), "per_cpu/cpu%ld/trace_pipe_raw", cpu);
		fd = tracefs_instance_file_open(c->instance, file,
						O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			/* a CPU the tracer does not know (never present) has no directory */
			if (errno == ENOENT)
				continue;
			snprintf(err, errlen, "cannot open %s of tracefs instance %s: %s", file,
				 c->name, strerror(errno));
			return -1;
		}
		r->fd = fd;
		r->cpu = (uint32_t)cpu;
		c->pfds[c->nreaders] = (struct pollfd){ .fd = fd, .events = POLLIN };
		c->nreaders++;
		r->kbuf = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
		r->subbuf = malloc(c->subbuf_size);
		if (!r->kbuf || !r->subbuf)
			goto nomem;
	}
	if (!c->nreaders) {
		snprintf(err, errlen, "tracefs instance %s has no per-CPU buffers", c->name);
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Enables every table event this kernel has; iommu:map is required. */
static int enable_events(struct tracefs_capture *c, char *err, size_t errlen)
{
	c->enabled = calloc(ftrace_iommu_event_count, sizeof(*c->enabled));
	if (!c->enabled) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ftrace_iommu_event_count; i++) {
		const struct ftrace_iommu_event *ev = &ftrace_iommu_events[i];

		if (!tracefs_event_file_exists(c->instance, ev->system, ev->name, "enable"))
			continue;
		if (tracefs_event_enable(c->instance, ev->system, ev->name) < 0) {
			snprintf(err, errlen, "cannot enable %s:%s in tracefs instance %s: %s",
				 ev->system, ev->name, c->name, strerror(errno));
			return -1;
		}
		c->enabled[i] = true;
		log_debug("tracefs: enabled %s:%s", ev->system, ev->name);
	}
	if (!tracefs_capture_has_event(c, "iommu:map")) {
		snprintf(err, errlen,
			 "this kernel has no iommu:map tracepoint (no "
			 "events/iommu/map in tracefs)");
		return -1;
	}
	return 0;
}

struct tracefs_capture *tracefs_capture_start(char *err, size_t errlen)
{
	static const char *const systems[] = { "iommu", "intel_iommu", NULL };
	struct tracefs_capture *c = calloc(1, sizeof(*c));
	const char *dir = tracefs_tracing_dir();

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!dir) {
		snprintf(err, errlen,
			 "tracefs is not mounted and could not be mounted on "
			 "/sys/kernel/tracing (needs root)");
		goto fail;
	}
	remove_stale_instances();
	snprintf(c->name, sizeof(c->name), INSTANCE_PREFIX "%d", (int)getpid());
	c->instance = tracefs_instance_create(c->name);
	if (!c->instance) {
		snprintf(err, errlen, "cannot create tracefs instance %s/instances/%s: %s", dir,
			 c->name, strerror(errno));
		goto fail;
	}
	if (tracefs_instance_file_write(c->instance, "trace_clock", "mono") < 0) {
		snprintf(err, errlen, "cannot set trace_clock 'mono' in tracefs instance %s: %s",
			 c->name, strerror(errno));
		goto fail;
	}
	/* poll() then wakes on the first record, not when the buffer is half full */
	if (tracefs_instance_file_write(c->instance, "buffer_percent", "0") < 0)
		log_debug("tracefs: buffer_percent not settable: polls wait for their timeout");
	c->tep = tracefs_local_events_system(NULL, systems);
	if (!c->tep) {
		snprintf(err, errlen, "cannot read the event formats under %s/events", dir);
		goto fail;
	}
	c->events = tep_events_new(c->tep);
	if (!c->events) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (enable_events(c, err, errlen) || open_readers(c, err, errlen))
		goto fail;
	return c;
fail:
	tracefs_capture_stop(c);
	return NULL;
}

void tracefs_capture_disable(struct tracefs_capture *c)
{
	if (c->instance && tracefs_event_disable(c->instance, NULL, NULL) < 0)
		log_debug("tracefs: disabling the events of %s: %s", c->name, strerror(errno));
}

void tracefs_capture_stop(struct tracefs_capture *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nreaders; i++) {
		close(c->readers[i].fd);
		kbuffer_free(c->readers[i].kbuf);
		free(c->readers[i].subbuf);
	}
	free(c->readers);
	free(c->pfds);
	if (c->instance) {
		tracefs_capture_disable(c);
		/* the reader files are closed: nothing of ours keeps the instance busy */
		if (tracefs_instance_destroy(c->instance) < 0)
			log_warn("could not remove tracefs instance %s: %s; remove it with "
				 "'rmdir %s/instances/%s'",
				 c->name, strerror(errno), tracefs_tracing_dir(), c->name);
		tracefs_instance_free(c->instance);
	}
	tep_events_free(c->events);
	tep_free(c->tep);
	free(c->enabled);
	free(c);
}

/* Name and Tgid from /proc/TID/status (the name as status prints it: control characters and
 * backslashes escaped). */
static int read_task(uint32_t tid, struct task_info *t)
{
	char path[64], line[256];
	unsigned tgid;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (found != 3 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "Name:\t", 6)) {
			ftrace_copy_name(t->comm, sizeof(t->comm), line + 6, sizeof(line) - 6);
			found |= 1;
		} else if (sscanf(line, "Tgid: %u", &tgid) == 1) {
			t->tgid = tgid;
			found |= 2;
		}
	}
	fclose(f);
	if (found != 3)
		return -1;
	t->tid = tid;
	return 0;
}

/* Thread group and comm of the record's thread, read once per thread while it exists. */
static void fill_task(struct tracefs_capture *c, struct it_event_header *h)
{
	struct task_info *t = &c->tasks[h->tid & (TASK_CACHE - 1)];

	if (!h->tid)
		return;
	if (t->tid != h->tid && read_task(h->tid, t)) {
		t->tid = 0;
		return;
	}
	h->pid = t->tgid;
	memcpy(h->comm, t->comm, sizeof(h->comm));
}

/* Makes r->rec the next unread record of r's CPU, reading a sub-buffer when needed. Returns 1, 0
 * when the buffer is empty, or a negative errno. */
static int next_record(struct tracefs_capture *c, struct cpu_reader *r)
{
	unsigned long long ts;
	void *data;
	ssize_t n;

	for (;;) {
		if (r->loaded) {
			data = kbuffer_read_event(r->kbuf, &ts);
			if (data) {
				r->rec = (struct tep_record){
					.ts = ts,
					.data = data,
					.cpu = (int)r->cpu,
					.size = kbuffer_event_size(r->kbuf),
					.record_size = kbuffer_curr_size(r->kbuf),
				};
				kbuffer_next_event(r->kbuf, NULL);
				return 1;
			}
			r->loaded = false;
		}
		n = read(r->fd, r->subbuf, c->subbuf_size);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		if (kbuffer_load_subbuffer(r->kbuf, r->subbuf) < 0)
			return -EIO;
		r->loaded = true;
	}
}

/* The reader holding the oldest record, or NULL. */
static struct cpu_reader *oldest(struct tracefs_capture *c)
{
	struct cpu_reader *best = NULL;

	for (size_t i = 0; i < c->nreaders; i++) {
		struct cpu_reader *r = &c->readers[i];

		if (r->has_rec && (!best || r->rec.ts < best->rec.ts))
			best = r;
	}
	return best;
}

static int drain(struct tracefs_capture *c, int (*cb)(const struct it_event *e, void *ctx),
		 void *ctx)
{
	struct cpu_reader *r;
	struct it_event e;
	int delivered = 0, ret;

	for (size_t i = 0; i < c->nreaders; i++) {
		r = &c->readers[i];
		if (!r->has_rec) {
			ret = next_record(c, r);
			if (ret < 0)
				return ret;
			r->has_rec = ret;
		}
	}
	for (int handled = 0; handled < POLL_BUDGET && (r = oldest(c)); handled++) {
		ret = tep_events_convert(c->events, &r->rec, &e);
		if (ret == 0) {
			c->skipped++;
		} else if (ret < 0) {
			c->malformed++;
		} else {
			fill_task(c, &e.h);
			ret = cb(&e, ctx);
			if (ret)
				return ret;
			delivered++;
		}
		ret = next_record(c, r);
		if (ret < 0)
			return ret;
		r->has_rec = ret;
	}
	return delivered;
}

int tracefs_capture_poll(struct tracefs_capture *c, int timeout_ms,
			 int (*cb)(const struct it_event *e, void *ctx), void *ctx)
{
	int n = drain(c, cb, ctx);

	if (n != 0 || timeout_ms <= 0)
		return n;
	if (poll(c->pfds, c->nreaders, timeout_ms) < 0)
		return -errno;
	return drain(c, cb, ctx);
}

/* "overrun: N" plus "dropped events: N" of one per_cpu/cpuN/stats file. */
static int read_cpu_losses(struct tracefs_capture *c, uint32_t cpu, uint64_t *lost)
{
	char file[64], *text, *line, *save = NULL;
	unsigned long long v;
	int size;

	snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
	text = tracefs_instance_file_read(c->instance, file, &size);
	if (!text)
		return -1;
	*lost = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "overrun: %llu", &v) == 1 ||
		    sscanf(line, "dropped events: %llu", &v) == 1)
			*lost += v;
	free(text);
	return 0;
}

int tracefs_capture_losses(struct tracefs_capture *c,
			   int (*cb)(uint32_t cpu, uint64_t lost, void *ctx), void *ctx)
{
	uint64_t lost;
	int ret;

	for (size_t i = 0; i < c->nreaders; i++) {
		uint32_t cpu = c->readers[i].cpu;

		if (read_cpu_losses(c, cpu, &lost)) {
			log_error("cannot read per_cpu/cpu%u/stats of tracefs instance %s", cpu,
				  c->name);
			return -1;
		}
		if (lost && (ret = cb(cpu, lost, ctx)))
			return ret;
	}
	return 0;
}

const char *tracefs_capture_instance_name(const struct tracefs_capture *c)
{
	return c->name;
}

bool tracefs_capture_has_event(const struct tracefs_capture *c, const char *target)
{
	const char *colon = strchr(target, ':');
	char system[32];

	if (!colon || (size_t)(colon - target) >= sizeof(system))
		return false;
	memcpy(system, target, (size_t)(colon - target));
	system[colon - target] = '\0';
	for (size_t i = 0; i < ftrace_iommu_event_count; i++) {
		const struct ftrace_iommu_event *ev = &ftrace_iommu_events[i];

		if (c->enabled[i] && !strcmp(ev->system, system) && !strcmp(ev->name, colon + 1))
			return true;
	}
	return false;
}

uint64_t tracefs_capture_skipped(const struct tracefs_capture *c)
{
	return c->skipped;
}

uint64_t tracefs_capture_malformed(const struct tracefs_capture *c)
{
	return c->malformed;
}

void tracefs_capture_mark_plan(const struct tracefs_capture *c, struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->count; i++) {
		struct probe *p = &plan->probes[i];

		if (p->role != ROLE_TRACEPOINT)
			continue;
		p->attached = tracefs_capture_has_event(c, p->target);
		p->mech = p->attached ? MECH_TRACEFS : MECH_NONE;
		if (!p->attached)
			snprintf(p->reason, sizeof(p->reason),
				 "not in this kernel's tracefs events");
	}
}
