/* eBPF capture (see bpf_capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "bpf_capture.h"
#include "iommutrace.skel.h"

#define DEFAULT_RINGBUF (16u << 20)

struct bpf_capture {
	struct iommutrace_bpf *skel;
	struct probe_plan *plan;
	struct bpf_link *links[PROBE_PLAN_MAX];
	struct ring_buffer *rb;
	bpf_capture_event_fn fn;
	void *fn_ctx;
};

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbose < 2)
		return 0;
	log_vdebug(fmt, ap);
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
		snprintf(name, sizeof(name), "btf_%s", p->tp_name);
		break;
	case MECH_RAW_TP:
		snprintf(name, sizeof(name), "raw_%s", p->tp_name);
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

struct bpf_capture *bpf_capture_load(struct probe_plan *plan, size_t ringbuf_bytes, char *err,
				     size_t errlen)
{
	struct bpf_capture *c = calloc(1, sizeof(*c));
	struct bpf_program *prog;
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->plan = plan;
	libbpf_set_print(libbpf_log);
	c->skel = iommutrace_bpf__open();
	if (!c->skel) {
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}
	bpf_object__for_each_program(prog, c->skel->obj)
		bpf_program__set_autoload(prog, false);
	for (size_t i = 0; i < plan->count; i++) {
		struct probe *p = &plan->probes[i];

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
	bpf_map__set_max_entries(c->skel->maps.events, ringbuf_size(ringbuf_bytes));
	ret = iommutrace_bpf__load(c->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s (run with -v -v for the "
			 "verifier's log)", strerror(-ret));
		goto fail;
	}
	return c;
fail:
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

	if (size < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	return c->fn(&e, c->fn_ctx);
}

int bpf_capture_attach(struct bpf_capture *c)
{
	int attached = 0;

	for (size_t i = 0; i < c->plan->count; i++) {
		struct probe *p = &c->plan->probes[i];
		struct bpf_program *prog = probe_program(c, p);

		if (!prog)
			continue;
		c->links[i] = attach_probe(c, p, prog);
		if (!c->links[i]) {
			snprintf(p->reason, sizeof(p->reason), "%s attach failed: %s",
				 probe_mech_name(p->mech), strerror(errno));
			continue;
		}
		p->attached = true;
		attached++;
	}
	return attached;
}

int bpf_capture_poll(struct bpf_capture *c, int timeout_ms, bpf_capture_event_fn fn, void *ctx)
{
	int ret;

	if (!c->rb) {
		c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), deliver, c, NULL);
		if (!c->rb)
			return -errno;
	}
	c->fn = fn;
	c->fn_ctx = ctx;
	ret = timeout_ms ? ring_buffer__poll(c->rb, timeout_ms) : ring_buffer__consume(c->rb);
	return ret;
}

void bpf_capture_detach(struct bpf_capture *c)
{
	for (size_t i = 0; i < PROBE_PLAN_MAX; i++) {
		bpf_link__destroy(c->links[i]);
		c->links[i] = NULL;
	}
}

int bpf_capture_losses(struct bpf_capture *c,
		       int (*fn)(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx), void *ctx)
{
	int ncpus = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(c->skel->maps.drops);
	__u64 *values;
	int ret = 0;

	if (ncpus <= 0)
		return -1;
	values = calloc(ncpus, sizeof(*values));
	if (!values)
		return -1;
	for (__u32 kind = 0; kind < IT_EV_KIND_MAX && !ret; kind++) {
		if (bpf_map_lookup_elem(fd, &kind, values)) {
			ret = -1;
			break;
		}
		for (int cpu = 0; cpu < ncpus && !ret; cpu++)
			if (values[cpu])
				ret = fn(cpu, kind, values[cpu], ctx);
	}
	free(values);
	return ret;
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
