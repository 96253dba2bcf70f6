/* Building the probe plan by probing the running kernel (see probe_plan.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "common/iommu_units.h"
#include "common/log.h"
#include "tracer/probe_plan.h"

struct tracepoint_def {
	const char *target;
	const char *name;
	enum it_tracepoint index;
	bool optional;
	/* the handlers' argument counts, and a second handler's (0: none) for kernels that
	 * changed the tracepoint's arguments: handler name + its count (cache_tag_flush_range5) */
	int nargs, alt_nargs;
};

static const struct tracepoint_def tracepoints[] = {
	{ .target = "iommu:map", .name = "map", .index = IT_TP_MAP },
	{ .target = "iommu:unmap", .name = "unmap", .index = IT_TP_UNMAP },
	{ .target = "iommu:attach_device_to_domain",
	  .name = "attach_device_to_domain",
	  .index = IT_TP_ATTACH },
	{ .target = "iommu:add_device_to_group",
	  .name = "add_device_to_group",
	  .index = IT_TP_GROUP_ADD },
	{ .target = "iommu:remove_device_from_group",
	  .name = "remove_device_from_group",
	  .index = IT_TP_GROUP_REMOVE },
	{ .target = "iommu:io_page_fault", .name = "io_page_fault", .index = IT_TP_FAULT },
	/* Intel VT-d only; qi_submit from 5.13, cache_tag_* from 6.10, without their pages
	 * argument in 7.x */
	{ .target = "intel_iommu:qi_submit",
	  .name = "qi_submit",
	  .index = IT_TP_QI_SUBMIT,
	  .optional = true },
	{ .target = "intel_iommu:cache_tag_flush_range",
	  .name = "cache_tag_flush_range",
	  .index = IT_TP_CACHE_TAG_FLUSH,
	  .optional = true,
	  .nargs = 6,
	  .alt_nargs = 5 },
	{ .target = "intel_iommu:cache_tag_flush_range_np",
	  .name = "cache_tag_flush_range_np",
	  .index = IT_TP_CACHE_TAG_FLUSH_NP,
	  .optional = true,
	  .nargs = 6,
	  .alt_nargs = 5 },
};

struct function_def {
	const char *name;
	enum probe_role role;
	enum it_domain_call call;
	/* domain calls: 1-based position of the call's size argument, 0 when it has none */
	uint32_t size_arg;
	/* driver functions: the IOMMUs whose domains they map (bits 1 << enum iommu_vendor) */
	unsigned vendors;
};

#define INTEL (1u << IOMMU_VENDOR_INTEL)
#define AMD (1u << IOMMU_VENDOR_AMD)

/* Every function of a role that the running kernel has gets a slot; names differ across kernels
 * (comments say where each exists), which is why presence is probed, never assumed. */
static const struct function_def functions[] = {
	/* IOMMU core: the function emitting iommu:map and its callers (6.1: iommu_map,
	 * iommu_map_atomic, _iommu_map, __iommu_map; later iommu_map_nosync). The map functions
	 * take (domain, iova, paddr, size, ...), the unmap ones (domain, iova, size, ...);
	 * iommu_map_sg(domain, iova, sg, nents, ...) has no size: it maps each run of its list
	 * through __iommu_map (6.1) or iommu_map_nosync (later), whose size then counts. */
	{ "__iommu_map", ROLE_DOMAIN_CALL, IT_CALL_MAP, 4, 0 },
	{ "_iommu_map", ROLE_DOMAIN_CALL, IT_CALL_MAP, 4, 0 },
	{ "iommu_map_nosync", ROLE_DOMAIN_CALL, IT_CALL_MAP, 4, 0 },
	{ "iommu_map", ROLE_DOMAIN_CALL, IT_CALL_MAP, 4, 0 },
	{ "iommu_map_atomic", ROLE_DOMAIN_CALL, IT_CALL_MAP, 4, 0 },
	{ "iommu_map_sg", ROLE_DOMAIN_CALL, IT_CALL_MAP, 0, 0 },
	{ "__iommu_unmap", ROLE_DOMAIN_CALL, IT_CALL_UNMAP, 3, 0 },
	{ "iommu_unmap", ROLE_DOMAIN_CALL, IT_CALL_UNMAP, 3, 0 },
	{ "iommu_unmap_fast", ROLE_DOMAIN_CALL, IT_CALL_UNMAP, 3, 0 },
	{ "__iommu_attach_device", ROLE_DOMAIN_CALL, IT_CALL_ATTACH, 0, 0 },
	/* drivers, map_pages(domain, iova, paddr, pgsize, pgcount, ...): Intel and AMD up to
	 * 6.18, the generic page table's per-format functions on 6.19-7.0 (VT-d second stage;
	 * x86-64 format: VT-d first stage and AMD v2; AMD v1) */
	{ "intel_iommu_map_pages", ROLE_DRIVER_MAP, IT_CALL_NONE, 0, INTEL },
	{ "amd_iommu_map_pages", ROLE_DRIVER_MAP, IT_CALL_NONE, 0, AMD },
	{ "pt_iommu_vtdss_map_pages", ROLE_DRIVER_MAP, IT_CALL_NONE, 0, INTEL },
	{ "pt_iommu_x86_64_map_pages", ROLE_DRIVER_MAP, IT_CALL_NONE, 0, INTEL | AMD },
	{ "pt_iommu_amdv1_map_pages", ROLE_DRIVER_MAP, IT_CALL_NONE, 0, AMD },
	{ "intel_iommu_unmap_pages", ROLE_DRIVER_UNMAP, IT_CALL_NONE, 0, INTEL },
	{ "amd_iommu_unmap_pages", ROLE_DRIVER_UNMAP, IT_CALL_NONE, 0, AMD },
	{ "pt_iommu_vtdss_unmap_pages", ROLE_DRIVER_UNMAP, IT_CALL_NONE, 0, INTEL },
	{ "pt_iommu_x86_64_unmap_pages", ROLE_DRIVER_UNMAP, IT_CALL_NONE, 0, INTEL | AMD },
	{ "pt_iommu_amdv1_unmap_pages", ROLE_DRIVER_UNMAP, IT_CALL_NONE, 0, AMD },
	/* 7.1 on: the core calls map_range and the leaf size is chosen inside it */
	{ "vtdss_map_range", ROLE_DRIVER_MAP_RANGE, IT_CALL_NONE, 0, INTEL },
	{ "x86_64_map_range", ROLE_DRIVER_MAP_RANGE, IT_CALL_NONE, 0, INTEL | AMD },
	{ "amdv1_map_range", ROLE_DRIVER_MAP_RANGE, IT_CALL_NONE, 0, AMD },
	/* dma-iommu: every mapping of a DMA API user goes through __iommu_dma_map but
	 * scatterlists, which iommu_dma_map_sg maps itself; the exported entry points stand in
	 * where the static function is inlined (iommu_dma_map_phys replaced map_page in 6.17) */
	{ "__iommu_dma_map", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "iommu_dma_map_sg", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "iommu_dma_map_page", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "iommu_dma_map_phys", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "iommu_dma_map_resource", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "iommu_dma_alloc", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	/* the IOVA-link API (6.16 on), through which the block layer maps NVMe I/O on 7.x */
	{ "dma_iova_try_alloc", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
	{ "dma_iova_link", ROLE_DEVICE_CALL, IT_CALL_NONE, 0, 0 },
};

const char *probe_mech_name(enum probe_mech mech)
{
	static const char *const names[] = {
		[MECH_NONE] = "-",	  [MECH_FENTRY] = "fentry", [MECH_KPROBE] = "kprobe",
		[MECH_TP_BTF] = "tp_btf", [MECH_RAW_TP] = "raw_tp", [MECH_TRACEFS] = "tracefs",
	};

	return names[mech];
}

const char *probe_role_name(enum probe_role role)
{
	static const char *const names[] = {
		[ROLE_TRACEPOINT] = "tracepoint",
		[ROLE_DOMAIN_CALL] = "domain",
		[ROLE_DRIVER_MAP] = "driver-map",
		[ROLE_DRIVER_UNMAP] = "driver-unmap",
		[ROLE_DRIVER_MAP_RANGE] = "driver-map-range",
		[ROLE_DEVICE_CALL] = "device",
	};

	return names[role];
}

const char *probe_plan_name(void *ctx, uint32_t probe_id)
{
	const struct probe_plan *plan = ctx;

	return plan && probe_id < plan->count ? plan->probes[probe_id].target : NULL;
}

/* strerror() for the errnos a BPF syscall returns, including the kernel-internal ENOTSUPP (524),
 * which libc does not name. */
static const char *bpf_strerror(int err)
{
	if (err == 524)
		return "not supported by this kernel (ENOTSUPP; x86 trampolines before 6.6 take at "
		       "most 6 arguments)";
	return strerror(err);
}

/* What attaching a test program found for one class of target (struct attach_classes). */
struct attach_verdict {
	bool known;
	int err; /* 0 or the attach's negative errno */
	char why[160]; /* what failed */
	const char *target; /* the target it was found on */
};

/* The attach verdicts of one probe_plan_build: for tp_btf, one for every tracepoint; for fentry,
 * one per argument count (x86 trampolines before 6.6 refuse functions of more than 6). Every
 * test attach and its detach rewrite the kernel's function entries through ftrace, which is slow
 * (most under TCG), and the real programs attach once more: so each class is attached once,
 * while every target is still loaded against (which catches what is particular to one target:
 * not in kallsyms, refused for tracing). */
#define MAX_CLASSED_ARGS 12 /* the kernel's MAX_BPF_FUNC_ARGS; more: each attached alone */

struct attach_classes {
	struct attach_verdict tp_btf;
	struct attach_verdict fentry[MAX_CLASSED_ARGS + 1];
};

/* Loads "return 0" as a tracing program of the given attach type against btf_id (target), then
 * attaches it unless verdict already says what attaching one of its class does: the one
 * reliable way to know whether fentry or tp_btf works on this target. Returns 0 or a negative
 * errno, with what failed in why (for a verdict found on another target, saying which). */
static int try_tracing_attach(__u32 btf_id, const char *target, enum bpf_attach_type type,
			      struct attach_verdict *verdict, const char *class, char *why,
			      size_t len)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .attach_btf_id = btf_id);
	int prog_fd, link_fd, err;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (prog_fd < 0) {
		err = errno;
		snprintf(why, len, "load refused: %s", bpf_strerror(err));
		return -err;
	}
	if (!verdict->known) {
		link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
		verdict->err = link_fd < 0 ? -errno : 0;
		if (link_fd < 0)
			snprintf(verdict->why, sizeof(verdict->why), "attach refused: %s",
				 bpf_strerror(-verdict->err));
		else
			close(link_fd);
		verdict->target = target;
		verdict->known = true;
	}
	close(prog_fd);
	if (verdict->err && verdict->target == target)
		snprintf(why, len, "%s", verdict->why);
	else if (verdict->err)
		snprintf(why, len, "%s (tried on %s%s)", verdict->why, verdict->target, class);
	return verdict->err;
}

static void add_probe(struct probe_plan *plan, const struct probe *p)
{
	if (plan->count < PROBE_PLAN_MAX)
		plan->probes[plan->count++] = *p;
}

/* Arguments of the tracepoint behind BTF typedef id (btf_trace_NAME: a pointer to a prototype
 * whose first parameter is the probe's data pointer), or -1. */
static int tracepoint_nargs(const struct btf *btf, int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	if (t && btf_is_typedef(t))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : -1;
}

/* Picks the handler matching the tracepoint's argument count; false when none does. */
static bool pick_handler(struct probe *p, const struct tracepoint_def *t, int nargs)
{
	if (!t->nargs || nargs < 0 || nargs == t->nargs) {
		snprintf(p->prog, sizeof(p->prog), "%s", t->name);
		return true;
	}
	if (nargs == t->alt_nargs) {
		snprintf(p->prog, sizeof(p->prog), "%s%d", t->name, nargs);
		return true;
	}
	snprintf(p->reason, sizeof(p->reason),
		 "tracepoint has %d arguments here; iommutrace knows %d or %d", nargs, t->nargs,
		 t->alt_nargs);
	return false;
}

static void plan_tracepoints(struct probe_plan *plan, const struct btf *btf,
			     const struct probe_plan_opts *opts, struct attach_classes *classes)
{
	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++) {
		const struct tracepoint_def *t = &tracepoints[i];
		struct probe p = { .role = ROLE_TRACEPOINT,
				   .target = t->target,
				   .tp_name = t->name,
				   .index = t->index,
				   .optional = t->optional };
		char typedef_name[96], why[160];
		int id;

		if (opts->iommu_tracepoints_only && strncmp(t->target, "iommu:", 6)) {
			snprintf(p.reason, sizeof(p.reason),
				 "left out: --tracepoints-only (iommu:* alone)");
			add_probe(plan, &p);
			continue;
		}
		snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", t->name);
		id = btf ? btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF) : -1;
		if (!pick_handler(&p, t, id >= 0 ? tracepoint_nargs(btf, id) : -1)) {
			add_probe(plan, &p);
			continue;
		}
		if (!btf || opts->raw_tp_only) {
			p.mech = MECH_RAW_TP;
		} else if (id < 0) {
			snprintf(p.reason, sizeof(p.reason), "tracepoint not in this kernel");
		} else if (try_tracing_attach(id, t->target, BPF_TRACE_RAW_TP, &classes->tp_btf, "",
					      why, sizeof(why)) == 0) {
			p.mech = MECH_TP_BTF;
		} else {
			p.mech = MECH_RAW_TP;
			snprintf(p.reason, sizeof(p.reason), "tp_btf %s; using raw_tp", why);
		}
		add_probe(plan, &p);
	}
}

static int next_slot(const struct probe_plan *plan, enum probe_role role)
{
	int used = 0;

	for (size_t i = 0; i < plan->count; i++)
		if (plan->probes[i].role == role && plan->probes[i].mech != MECH_NONE)
			used++;
	return used;
}

static int slot_count(enum probe_role role)
{
	switch (role) {
	case ROLE_DOMAIN_CALL:
		return IT_DOMAIN_SLOTS;
	case ROLE_DRIVER_MAP:
		return IT_MAP_SLOTS;
	case ROLE_DRIVER_UNMAP:
		return IT_UNMAP_SLOTS;
	case ROLE_DRIVER_MAP_RANGE:
		return IT_RANGE_SLOTS;
	case ROLE_DEVICE_CALL:
		return IT_DEVICE_SLOTS;
	default:
		return 0;
	}
}

/* Arguments of the function BTF id names, or -1. */
static int function_nargs(const struct btf *btf, int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	if (t && btf_is_func(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

static void plan_functions(struct probe_plan *plan, const struct btf *btf,
			   struct attach_classes *classes)
{
	for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
		const struct function_def *f = &functions[i];
		struct probe p = { .role = f->role,
				   .target = f->name,
				   .call = f->call,
				   .size_arg = f->size_arg,
				   .vendors = f->vendors,
				   .optional = true };
		char why[200] = "", class[48] = "";
		int id = btf__find_by_name_kind(btf, f->name, BTF_KIND_FUNC);
		int slot = next_slot(plan, f->role), nargs = id >= 0 ? function_nargs(btf, id) : -1;
		struct attach_verdict alone = { 0 }, *verdict = &alone;

		if (nargs >= 0 && nargs <= MAX_CLASSED_ARGS) {
			verdict = &classes->fentry[nargs];
			snprintf(class, sizeof(class), ", which also takes %d arguments", nargs);
		}
		p.in_kernel = id >= 0;
		if (id < 0) {
			snprintf(p.reason, sizeof(p.reason), "function not in this kernel");
		} else if (f->vendors && plan->iommu_vendors &&
			   !(f->vendors & plan->iommu_vendors)) {
			/* its driver runs no IOMMU here, so it is never called: loading and
			 * attaching it would only lengthen the start and the end */
			snprintf(p.reason, sizeof(p.reason),
				 "left out: this machine has no IOMMU of this driver's");
		} else if (slot >= slot_count(f->role)) {
			snprintf(p.reason, sizeof(p.reason), "no free %s slot",
				 probe_role_name(f->role));
		} else if (try_tracing_attach(id, f->name, BPF_TRACE_FENTRY, verdict, class, why,
					      sizeof(why)) == 0) {
			p.mech = MECH_FENTRY;
			p.index = slot;
			plan->fentry_works = true;
		} else if (plan->have_kprobes) {
			p.mech = MECH_KPROBE;
			p.index = slot;
			snprintf(p.reason, sizeof(p.reason), "fentry %s; using kprobe", why);
		} else {
			snprintf(p.reason, sizeof(p.reason),
				 "fentry %s, and the kernel has no kprobes", why);
		}
		add_probe(plan, &p);
	}
}

int probe_plan_build(struct probe_plan *plan, const struct probe_plan_opts *opts, char *err,
		     size_t errlen)
{
	static const struct probe_plan_opts defaults;
	struct attach_classes classes = { 0 };
	struct btf *btf;

	if (!opts)
		opts = &defaults;
	memset(plan, 0, sizeof(*plan));
	plan->have_kprobes = access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0;
	btf = btf__load_vmlinux_btf();
	plan->have_btf = btf != NULL;
	plan->domain_calls = !opts->iommu_tracepoints_only;
	plan->iommu_vendors = iommu_units_vendors(NULL);
	if (!btf)
		snprintf(err, errlen, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s)",
			 strerror(errno));
	plan_tracepoints(plan, btf, opts, &classes);
	if (btf && !opts->no_functions && !opts->iommu_tracepoints_only)
		plan_functions(plan, btf, &classes);
	btf__free(btf);
	return plan->have_btf ? 0 : -1;
}

/* Whether the drivers' functions of role give the domain of every call of theirs: the machine
 * has IOMMUs, each of a vendor for which this kernel has a function of the role, and every such
 * function the kernel has is probed. */
static bool drivers_cover(const struct probe_plan *plan, enum probe_role role)
{
	unsigned covered = 0;

	if (!plan->iommu_vendors || plan->iommu_vendors & ~(INTEL | AMD))
		return false;
	for (size_t i = 0; i < plan->count; i++) {
		const struct probe *p = &plan->probes[i];

		if (p->role != role || !p->in_kernel || !(p->vendors & plan->iommu_vendors))
			continue;
		if (p->mech == MECH_NONE)
			return false;
		covered |= p->vendors;
	}
	return (plan->iommu_vendors & ~covered) == 0;
}

/* Whether the kernel has a map_range function for one of the machine's IOMMUs (its record takes
 * the domain of the core map call around it). */
static bool has_map_range(const struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->count; i++)
		if (plan->probes[i].role == ROLE_DRIVER_MAP_RANGE && plan->probes[i].in_kernel &&
		    (plan->probes[i].vendors & plan->iommu_vendors))
			return true;
	return false;
}

unsigned probe_plan_driver_domains(const struct probe_plan *plan)
{
	unsigned kinds = 0;

	if (!plan->domain_calls)
		return 0;
	if (drivers_cover(plan, ROLE_DRIVER_MAP) && !has_map_range(plan))
		kinds |= 1u << IT_CALL_MAP;
	if (drivers_cover(plan, ROLE_DRIVER_UNMAP))
		kinds |= 1u << IT_CALL_UNMAP;
	return kinds;
}

void probe_plan_use_tracefs(struct probe_plan *plan, const char *why)
{
	for (size_t i = 0; i < plan->count; i++) {
		struct probe *p = &plan->probes[i];

		p->attached = false;
		if (p->role == ROLE_TRACEPOINT) {
			if (p->mech != MECH_NONE || !plan->have_btf)
				p->mech = MECH_TRACEFS;
		} else {
			p->mech = MECH_NONE;
		}
		if (p->mech != MECH_NONE || !p->reason[0])
			snprintf(p->reason, sizeof(p->reason), "%s", why);
	}
}

const struct probe *probe_plan_find(const struct probe_plan *plan, const char *target)
{
	for (size_t i = 0; i < plan->count; i++)
		if (!strcmp(plan->probes[i].target, target))
			return &plan->probes[i];
	return NULL;
}

void probe_plan_print(const struct probe_plan *plan, FILE *f)
{
	fprintf(f, "%-17s %-38s %-8s %-9s %s\n", "ROLE", "TARGET", "VIA", "ATTACHED", "WHY");
	for (size_t i = 0; i < plan->count; i++) {
		const struct probe *p = &plan->probes[i];

		fprintf(f, "%-17s %-38s %-8s %-9s %s\n", probe_role_name(p->role), p->target,
			probe_mech_name(p->mech), p->attached ? "yes" : "no", p->reason);
	}
}
