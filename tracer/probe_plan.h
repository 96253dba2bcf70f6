/* The probe plan: which kernel tracepoints and functions this kernel offers for each role, and
 * how each is attached (fentry, kprobe, tp_btf, raw_tp), decided by probing the running kernel
 * (BTF, test loads, the kprobe PMU), never by its version. A probe's index in the plan is the
 * probe_id its records carry. */
#ifndef IOMMUTRACE_PROBE_PLAN_H
#define IOMMUTRACE_PROBE_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/probe_slots.h"

enum probe_role {
	ROLE_TRACEPOINT, /* an iommu:* or intel_iommu:* event */
	ROLE_DOMAIN_CALL, /* an IOMMU core function taking the domain first: names the domain */
	ROLE_DRIVER_MAP, /* driver map_pages: the page size and count written */
	ROLE_DRIVER_UNMAP, /* driver unmap_pages */
	ROLE_DRIVER_MAP_RANGE, /* driver map_range: leaf chosen inside, pages derived */
	ROLE_DEVICE_CALL, /* a DMA API function taking the device first: ties domains to devices */
};

enum probe_mech {
	MECH_NONE,
	MECH_FENTRY,
	MECH_KPROBE,
	MECH_TP_BTF,
	MECH_RAW_TP,
	MECH_TRACEFS,
};

struct probe {
	enum probe_role role;
	const char *target; /* "iommu:map" or a kernel function name */
	const char *tp_name; /* tracepoints: the name without its system */
	char prog[48]; /* tracepoints: the handler, btf_PROG / raw_PROG */
	int index; /* tracepoint: enum it_tracepoint; functions: slot */
	uint32_t call; /* domain calls: enum it_domain_call */
	uint32_t size_arg; /* domain calls: 1-based size argument, 0: none */
	unsigned vendors; /* driver functions: bits 1 << enum iommu_vendor */
	bool in_kernel; /* functions: in the kernel's BTF */
	bool optional; /* absence is normal on some kernels/vendors */
	enum probe_mech mech; /* chosen mechanism; MECH_NONE when unavailable */
	bool attached;
	char reason[224]; /* why not attached, or a note on the choice */
};

#define PROBE_PLAN_MAX 48

struct probe_plan_opts {
	/* every tracepoint as raw_tp, also those this kernel lacks (they load but cannot
	 * attach): tests drive the handlers with BPF_PROG_TEST_RUN */
	bool raw_tp_only;
	bool no_functions; /* tracepoints only */
	/* the iommu:* tracepoints alone, as trace-cmd -e iommu: no vendor tracepoints (they are
	 * listed, not attached), no functions */
	bool iommu_tracepoints_only;
};

struct probe_plan {
	struct probe probes[PROBE_PLAN_MAX];
	size_t count;
	bool have_btf;
	bool have_kprobes;
	bool fentry_works; /* a test fentry load+attach succeeded somewhere */
	/* the IOMMU core calls may be probed, so the handlers look up the thread's (false with
	 * iommu_tracepoints_only: nothing would fill it) */
	bool domain_calls;
	/* the vendors of the machine's IOMMUs (bits 1 << enum iommu_vendor; 0: none) */
	unsigned iommu_vendors;
};

/**
 * probe_plan_build() - Probe the running kernel and fill @plan.
 *
 * Return: 0, or -1 when there is no kernel BTF (the reason is in plan->probes' reasons and
 * returned through @err).
 */
int probe_plan_build(struct probe_plan *plan, const struct probe_plan_opts *opts, char *err,
		     size_t errlen);
/**
 * probe_plan_driver_domains() - The kinds of IOMMU core call whose domain the driver calls inside
 * them give as well.
 *
 * They do when every IOMMU of the machine is an Intel or AMD one, every map_pages (unmap_pages)
 * function this kernel has for them is probed, and (maps) the kernel has no map_range for them.
 * The capture may then leave those core calls unattached (bpf_capture_attach()).
 *
 * Return: bits 1 << IT_CALL_MAP, IT_CALL_UNMAP; 0 when domain_calls is false.
 */
unsigned probe_plan_driver_domains(const struct probe_plan *plan);
/**
 * probe_plan_use_tracefs() - Mark the tracepoints as captured through tracefs instead (no BPF).
 */
void probe_plan_use_tracefs(struct probe_plan *plan, const char *why);

const char *probe_mech_name(enum probe_mech mech);
const char *probe_role_name(enum probe_role role);
/**
 * probe_plan_name() - Name of a probe id for driver_maps.function.
 * @plan: the plan (a callback's ctx)
 *
 * Return: the name; NULL when out of range.
 */
const char *probe_plan_name(void *plan, uint32_t probe_id);
/**
 * probe_plan_find() - The probe of a target ("iommu:map", "intel_iommu_map_pages").
 *
 * Return: the probe, or NULL.
 */
const struct probe *probe_plan_find(const struct probe_plan *plan, const char *target);
/**
 * probe_plan_print() - Print the plan as a table (what attached, what did not, and why).
 */
void probe_plan_print(const struct probe_plan *plan, FILE *f);

#endif
