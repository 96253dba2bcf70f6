/* eBPF capture (see bpf_capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "tracer/bpf_capture.h"
#include "iommutrace.skel.h"

#define DEFAULT_RINGBUF (16u << 20)
/* the reader is woken each time another 1/WAKEUP_PARTS of the ring buffer waits (the BPF
 * handlers' submit()), else finds the records when its poll times out */
#define WAKEUP_PARTS 16

struct bpf_capture {
	struct iommutrace_bpf *skel;
	struct probe_plan *plan;
	struct bpf_link *links[PROBE_PLAN_MAX];
	struct ring_buffer *rb;
	bpf_capture_event_fn fn;
	void *fn_ctx;
	/* this poll's records so far; set when they reached BPF_CAPTURE_POLL_BUDGET */
	int polled;
	bool budget_spent;
	/* the kinds of core call whose domain the driver calls give (rodata driver_domains) */
	unsigned driver_domains;
	/* the programs hold driver calls until their events (threshold mode, driver_domains) */
	bool holds;
	/* release_held_driver_calls_of is loaded: an offline CPU's held calls can be counted */
	bool releases_offline;
	/* bpf_map_lookup_percpu_elem (5.19) loads here: 1 or 0; -1 until probed (once, whatever
	 * the load attempts) */
	int percpu_lookup;
};

/* The program libbpf last warned about ("libbpf: prog 'NAME': ..."), so that when a load fails the
 * loader can leave that program out and retry: one probe the running kernel cannot take (a
 * verifier refusal, an attach target missing from BTF) must not cost the others. */
static char refused_prog[64];

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static const char prefix[] = "libbpf: prog '";
	char *msg = NULL, *line, *save = NULL;
	const char *end;
	va_list copy;
	int len;

	va_copy(copy, ap);
	len = vasprintf(&msg, fmt, copy);
	va_end(copy);
	if (len < 0)
		return 0;
	end = strstr(msg, "': ");
	if (level == LIBBPF_WARN && !strncmp(msg, prefix, sizeof(prefix) - 1) && end &&
	    (size_t)(end - msg) - (sizeof(prefix) - 1) < sizeof(refused_prog))
		snprintf(refused_prog, sizeof(refused_prog), "%.*s",
			 (int)((size_t)(end - msg) - (sizeof(prefix) - 1)),
			 msg + sizeof(prefix) - 1);
	/* a message may hold many lines (the verifier's log): each is logged on its own */
	if (level != LIBBPF_DEBUG || log_verbose >= 2)
		for (line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			log_debug("%s", line);
	free(msg);
	return 0;
}

static const char *slot_prefix(enum probe_role role)
{
	switch (role) {
	case ROLE_DOMAIN_CALL:
		return "domain";
	case ROLE_DRIVER_MAP:
		return "map";
	case ROLE_DRIVER_UNMAP:
		return "unmap";
	case ROLE_DEVICE_CALL:
		return "device";
	default:
		return "range";
	}
}

/* The program implementing probe p with its chosen mechanism. */
static struct bpf_program *probe_program(struct bpf_capture *c, const struct probe *p)
{
	char name[64];

	switch (p->mech) {
	case MECH_TP_BTF:
		snprintf(name, sizeof(name), "btf_%s", p->prog);
		break;
	case MECH_RAW_TP:
		snprintf(name, sizeof(name), "raw_%s", p->prog);
		break;
	case MECH_FENTRY:
		snprintf(name, sizeof(name), "fe_%s_%d", slot_prefix(p->role), p->index);
		break;
	case MECH_KPROBE:
		snprintf(name, sizeof(name), "kp_%s_%d", slot_prefix(p->role), p->index);
		break;
	default:
		return NULL;
	}
	return bpf_object__find_program_by_name(c->skel->obj, name);
}

/* Tells the programs which probe id each slot and tracepoint reports. */
static void set_probe_ids(struct bpf_capture *c)
{
	struct iommutrace_bpf__rodata *ro = c->skel->rodata;

	for (size_t i = 0; i < c->plan->count; i++) {
		const struct probe *p = &c->plan->probes[i];

		if (p->mech == MECH_NONE)
			continue;
		switch (p->role) {
		case ROLE_TRACEPOINT:
			ro->tp_probe[p->index] = i;
			break;
		case ROLE_DOMAIN_CALL:
			ro->domain_slot_probe[p->index] = i;
			ro->domain_slot_call[p->index] = p->call;
			ro->domain_slot_size_arg[p->index] = p->size_arg;
			break;
		case ROLE_DRIVER_MAP:
			ro->map_slot_probe[p->index] = i;
			break;
		case ROLE_DRIVER_UNMAP:
			ro->unmap_slot_probe[p->index] = i;
			break;
		case ROLE_DRIVER_MAP_RANGE:
			ro->range_slot_probe[p->index] = i;
			break;
		case ROLE_DEVICE_CALL:
			ro->device_slot_probe[p->index] = i;
			break;
		}
	}
}

static size_t ringbuf_size(size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page;

	if (!want)
		want = DEFAULT_RINGBUF;
	while (size < want && size < ((size_t)1 << 31))
		size <<= 1;
	return size;
}

/* Whether the programs may call bpf_map_lookup_percpu_elem, probed on first use. */
static bool percpu_lookup_loads(struct bpf_capture *c)
{
	if (c->percpu_lookup < 0)
		c->percpu_lookup =
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
						BPF_FUNC_map_lookup_percpu_elem, NULL) > 0;
	return c->percpu_lookup;
}

/* Opens the skeleton with the plan's programs switched on and loads it; returns 0 or libbpf's
 * negative error. */
static int open_and_load(struct bpf_capture *c, const struct bpf_capture_opts *opts)
{
	struct bpf_program *prog;
	size_t ring;

	c->skel = iommutrace_bpf__open();
	if (!c->skel)
		return -errno;
	bpf_object__for_each_program(prog, c->skel->obj) bpf_program__set_autoload(prog, false);
	for (size_t i = 0; i < c->plan->count; i++) {
		struct probe *p = &c->plan->probes[i];

		prog = probe_program(c, p);
		if (!prog)
			continue;
		bpf_program__set_autoload(prog, true);
		if (p->mech == MECH_FENTRY && bpf_program__set_attach_target(prog, 0, p->target)) {
			snprintf(p->reason, sizeof(p->reason), "fentry target not found");
			bpf_program__set_autoload(prog, false);
			p->mech = MECH_NONE;
		}
	}
	set_probe_ids(c);
	c->skel->rodata->capture_mode = (__u32)opts->mode;
	c->skel->rodata->domain_calls = c->plan->domain_calls;
	c->driver_domains = probe_plan_driver_domains(c->plan);
	c->skel->rodata->driver_domains = c->driver_domains;
	c->holds = opts->mode == CAPTURE_THRESHOLD && c->driver_domains;
	bpf_program__set_autoload(c->skel->progs.release_held_driver_calls, c->holds);
	c->releases_offline = c->holds && percpu_lookup_loads(c);
	bpf_program__set_autoload(c->skel->progs.release_held_driver_calls_of, c->releases_offline);
	bpf_program__set_autoload(c->skel->progs.replay_map_unmap, opts->replay);
	c->skel->rodata->threshold_bytes =
		opts->threshold_bytes ? opts->threshold_bytes : CAPTURE_DEFAULT_THRESHOLD;
	ring = ringbuf_size(opts->ringbuf_bytes);
	bpf_map__set_max_entries(c->skel->maps.events, ring);
	/* a power of two, as the handlers' test of it needs */
	c->skel->rodata->wakeup_bytes = ring / WAKEUP_PARTS;
	/* preallocated: the per-event mode never counts, and pays one entry of each */
	bpf_map__set_max_entries(c->skel->maps.aggregates,
				 opts->mode == CAPTURE_PER_EVENT ? 1 :
				 opts->aggregate_entries	 ? opts->aggregate_entries :
								   CAPTURE_DEFAULT_AGGREGATE_ENTRIES);
	bpf_map__set_max_entries(c->skel->maps.agg_slot_keys,
				 opts->mode == CAPTURE_PER_EVENT ? 1 : IT_AGG_SLOTS);
	bpf_map__set_max_entries(c->skel->maps.agg_slot_counts,
				 opts->mode == CAPTURE_PER_EVENT ? 1 : IT_AGG_SLOTS);
	return iommutrace_bpf__load(c->skel);
}

/* The probe whose program is named prog, or NULL. */
static struct probe *probe_of_program(struct bpf_capture *c, const char *prog)
{
	for (size_t i = 0; i < c->plan->count; i++) {
		struct bpf_program *p = probe_program(c, &c->plan->probes[i]);

		if (p && !strcmp(bpf_program__name(p), prog))
			return &c->plan->probes[i];
	}
	return NULL;
}

struct bpf_capture *bpf_capture_load(struct probe_plan *plan, const struct bpf_capture_opts *opts,
				     char *err, size_t errlen)
{
	struct bpf_capture *c = calloc(1, sizeof(*c));
	struct probe *refused;
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->plan = plan;
	c->percpu_lookup = -1;
	libbpf_set_print(libbpf_log);
	for (size_t attempt = 0; attempt <= plan->count; attempt++) {
		refused_prog[0] = '\0';
		ret = open_and_load(c, opts ? opts : &(struct bpf_capture_opts){ 0 });
		if (!ret)
			return c;
		refused = c->skel && refused_prog[0] ? probe_of_program(c, refused_prog) : NULL;
		iommutrace_bpf__destroy(c->skel);
		c->skel = NULL;
		if (!refused)
			break;
		log_warn("the kernel refused the BPF program for %s (%s); recording without it "
			 "(-v -v shows the verifier's log)",
			 refused->target, strerror(-ret));
		snprintf(refused->reason, sizeof(refused->reason),
			 "%s program refused by the kernel: %s", probe_mech_name(refused->mech),
			 strerror(-ret));
		refused->mech = MECH_NONE;
	}
	snprintf(err, errlen,
		 "cannot load the BPF programs: %s (run with -v -v for the "
		 "verifier's log)",
		 strerror(-ret));
	bpf_capture_close(c);
	return NULL;
}

static struct bpf_link *attach_probe(struct bpf_capture *c, struct probe *p,
				     struct bpf_program *prog)
{
	switch (p->mech) {
	case MECH_RAW_TP:
		return bpf_program__attach_raw_tracepoint(prog, p->tp_name);
	case MECH_KPROBE:
		return bpf_program__attach_kprobe(prog, false, p->target);
	default: /* tp_btf and fentry carry their target from load */
		return bpf_program__attach(prog);
	}
}

static int deliver(void *ctx, void *data, size_t size)
{
	struct bpf_capture *c = ctx;
	struct it_event e;
	int ret;

	if (size < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	ret = c->fn(&e, c->fn_ctx);
	if (ret < 0)
		return ret;
	/* libbpf's reader goes on while records arrive: a negative return is the only way out,
	 * and it leaves this record consumed */
	if (++c->polled >= BPF_CAPTURE_POLL_BUDGET) {
		c->budget_spent = true;
		return -ECANCELED;
	}
	return 0;
}

static bool attach_one(struct bpf_capture *c, size_t i)
{
	struct probe *p = &c->plan->probes[i];
	struct bpf_program *prog = probe_program(c, p);

	if (!prog)
		return false;
	c->links[i] = attach_probe(c, p, prog);
	if (!c->links[i]) {
		snprintf(p->reason, sizeof(p->reason), "%s attach failed: %s",
			 probe_mech_name(p->mech), strerror(errno));
		return false;
	}
	p->attached = true;
	return true;
}

/* The kinds of core call (bits 1 << enum it_domain_call) whose domain the attached driver calls
 * give: of c->driver_domains, those whose every loaded driver probe attached. */
static unsigned attached_driver_domains(const struct bpf_capture *c)
{
	unsigned kinds = c->driver_domains;

	for (size_t i = 0; i < c->plan->count; i++) {
		const struct probe *p = &c->plan->probes[i];

		if (p->mech == MECH_NONE || p->attached)
			continue;
		if (p->role == ROLE_DRIVER_MAP)
			kinds &= ~(1u << IT_CALL_MAP);
		else if (p->role == ROLE_DRIVER_UNMAP)
			kinds &= ~(1u << IT_CALL_UNMAP);
	}
	return kinds;
}

int bpf_capture_attach(struct bpf_capture *c)
{
	unsigned from_drivers;
	int attached = 0;

	/* the threshold mode holds the driver calls of those kinds from their first run */
	if (c->holds)
		c->skel->bss->held_calls = c->driver_domains;
	for (size_t i = 0; i < c->plan->count; i++)
		if (c->plan->probes[i].role != ROLE_DOMAIN_CALL)
			attached += attach_one(c, i);
	/* a core call whose domain the driver calls inside it give is not attached: it would
	 * cost a program per call and say nothing more (its programs stay loaded, unused) */
	from_drivers = attached_driver_domains(c);
	/* where a driver probe failed, the core calls are attached and say the size instead
	 * (what is held meanwhile is let go by its event, or at the end) */
	if (c->holds)
		c->skel->bss->held_calls = from_drivers;
	for (size_t i = 0; i < c->plan->count; i++) {
		struct probe *p = &c->plan->probes[i];

		if (p->role != ROLE_DOMAIN_CALL)
			continue;
		if (p->mech != MECH_NONE && (from_drivers & (1u << p->call))) {
			snprintf(p->reason, sizeof(p->reason),
				 "not needed: the driver's %s calls "
				 "give the domain",
				 p->call == IT_CALL_MAP ? "map_pages" : "unmap_pages");
			continue;
		}
		attached += attach_one(c, i);
	}
	return attached;
}

/* The ring buffer's reader, made on first use; 0 or a negative errno */
static int ensure_reader(struct bpf_capture *c)
{
	if (!c->rb)
		c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), deliver, c, NULL);
	return c->rb ? 0 : -errno;
}

int bpf_capture_epoll_fd(struct bpf_capture *c)
{
	int ret = ensure_reader(c);

	return ret ? ret : ring_buffer__epoll_fd(c->rb);
}

int bpf_capture_poll(struct bpf_capture *c, int timeout_ms, bpf_capture_event_fn fn, void *ctx)
{
	int ret = ensure_reader(c);

	if (ret)
		return ret;
	c->fn = fn;
	c->fn_ctx = ctx;
	c->polled = 0;
	c->budget_spent = false;
	ret = timeout_ms ? ring_buffer__poll(c->rb, timeout_ms) : 0;
	/* records below the wakeup mark woke no one: the wait timed out, they are taken now */
	if (!ret)
		ret = ring_buffer__consume(c->rb);
	return c->budget_spent ? c->polled : ret;
}

void bpf_capture_detach(struct bpf_capture *c)
{
	for (size_t i = 0; i < PROBE_PLAN_MAX; i++) {
		bpf_link__destroy(c->links[i]);
		c->links[i] = NULL;
	}
}

/* Calls fn for each (cpu, kind) with a nonzero count in the per-CPU array map (indexed by
 * event kind). */
static int percpu_counts(struct bpf_map *map,
			 int (*fn)(uint32_t cpu, uint32_t kind, uint64_t n, void *ctx), void *ctx)
{
	int ncpus = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(map);
	__u64 *values;
	int ret = 0;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (__u32 kind = 0; kind < IT_EV_KIND_MAX && !ret; kind++) {
		if (bpf_map_lookup_elem(fd, &kind, values)) {
			ret = -errno;
			break;
		}
		for (int cpu = 0; cpu < ncpus && !ret; cpu++)
			if (values[cpu])
				ret = fn(cpu, kind, values[cpu], ctx);
	}
	free(values);
	return ret;
}

int bpf_capture_held_calls(struct bpf_capture *c, int cpu, uint64_t *held)
{
	int fd = bpf_map__fd(c->skel->maps.driver_calls), ncpus = libbpf_num_possible_cpus(),
	    ret = 0;
	struct it_driver_call *values;

	/* the kernel hands each CPU's value out rounded up to 8 bytes */
	_Static_assert(sizeof(*values) % 8 == 0, "per-CPU values are 8-byte aligned");
	*held = 0;
	if (ncpus < 0)
		return ncpus;
	if (cpu < 0 || cpu >= ncpus)
		return -EINVAL;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (__u32 call = IT_CALL_MAP; call <= IT_CALL_UNMAP && !ret; call++) {
		if (bpf_map_lookup_elem(fd, &call, values))
			ret = -errno;
		else
			*held += values[cpu].npending;
	}
	free(values);
	return ret;
}

int bpf_capture_release_held(struct bpf_capture *c, uint64_t *uncounted)
{
	int ncpus = libbpf_num_possible_cpus(), fd, offline_fd = -1;

	*uncounted = 0;
	if (!c->holds)
		return 0;
	if (ncpus < 0)
		return ncpus;
	fd = bpf_program__fd(c->skel->progs.release_held_driver_calls);
	if (c->releases_offline)
		offline_fd = bpf_program__fd(c->skel->progs.release_held_driver_calls_of);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .cpu = (__u32)cpu,
			    .flags = BPF_F_TEST_RUN_ON_CPU);
		__u64 arg = (__u32)cpu;
		LIBBPF_OPTS(bpf_test_run_opts, from_here, .ctx_in = &arg,
			    .ctx_size_in = sizeof(arg));
		int ret;

		if (!bpf_prog_test_run_opts(fd, &opts))
			continue;
		if (errno != ENXIO)
			return -errno;
		/* the CPU is offline (CPU hotplug during the capture): its entries are let go from
		 * this CPU, or, where the kernel cannot, what they hold is said uncounted */
		if (offline_fd >= 0) {
			ret = bpf_prog_test_run_opts(offline_fd, &from_here) ? -errno : 0;
			if (!ret)
				log_debug("CPU %d is offline: the driver calls it held let go from "
					  "this one",
					  cpu);
		} else {
			uint64_t held;

			ret = bpf_capture_held_calls(c, cpu, &held);
			*uncounted += held;
		}
		if (ret)
			return ret;
	}
	return 0;
}

int bpf_capture_losses(struct bpf_capture *c,
		       int (*fn)(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx), void *ctx)
{
	return percpu_counts(c->skel->maps.drops, fn, ctx);
}

int bpf_capture_aggregate_losses(struct bpf_capture *c,
				 int (*fn)(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx),
				 void *ctx)
{
	return percpu_counts(c->skel->maps.agg_overflow, fn, ctx);
}

struct agg_maps bpf_capture_agg_maps(struct bpf_capture *c)
{
	return (struct agg_maps){ .hash_fd = bpf_map__fd(c->skel->maps.aggregates),
				  .slot_keys_fd = bpf_map__fd(c->skel->maps.agg_slot_keys),
				  .slot_counts_fd = bpf_map__fd(c->skel->maps.agg_slot_counts) };
}

int bpf_capture_prog_fd(struct bpf_capture *c, const char *prog_name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(c->skel->obj, prog_name);

	return prog ? bpf_program__fd(prog) : -1;
}

int bpf_capture_map_fd(struct bpf_capture *c, const char *map_name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(c->skel->obj, map_name);

	return map ? bpf_map__fd(map) : -1;
}

void bpf_capture_close(struct bpf_capture *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	if (c->skel)
		bpf_capture_detach(c);
	iommutrace_bpf__destroy(c->skel);
	free(c);
}
