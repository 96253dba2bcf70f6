// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Page-table snapshots: reads the live translation table of an IOMMU group's domain, read-only.
 * The tool reads /sys/kernel/iommu_groups/N/type; the kprobe on iommu_group_show_type, for this
 * process only, walks that group's current domain a slice of `budget` entries at a time and puts
 * its leaves into the ring buffer as runs (bpf/iommutrace.h: struct it_snap_run). Table pages are
 * read through the kernel's direct map (page_offset_base + physical address) with
 * bpf_probe_read_kernel; nothing is written to kernel memory. Intel VT-d tables, as the legacy
 * driver keeps them (struct dmar_domain's pgd and agaw, up to 6.18) and as the generic page
 * table does (6.19 on); the same entry layout serves second-stage and first-stage tables
 * (present or read bit 0, write bit 1, page size bit 7). */
#include "bpf/kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/iommutrace.h"

char LICENSE[] SEC("license") = "GPL";

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)
struct dma_pte {
	u64 val;
};

/* drivers/iommu/intel/iommu.h; pgd and agaw sit in an anonymous union from 6.7 */
struct dmar_domain {
	struct dma_pte *pgd;
	int agaw;
	struct iommu_domain domain;
};

/* The generic page table (include/linux/generic_pt): top_of_table is the top table's kernel
 * address with its level (0: the 4 KiB leaves' table) in the low bits */
struct pt_common {
	unsigned long top_of_table;
};
struct pt_vtdss {
	struct pt_common common;
};
struct pt_iommu_vtdss {
	struct pt_vtdss vtdss_pt;
};
/* the VT-d domain of 6.19 on: a union of the iommu_domain and the tables' structs, whose
 * second-stage and first-stage (pt_iommu_x86_64) tables sit at one offset */
struct dmar_domain___pt {
	struct iommu_domain domain;
	struct pt_iommu_vtdss sspt;
};
#pragma clang attribute pop

#define PT_TOP_LEVEL_MASK 7ull

/* the direct map's base: a table entry's physical address plus it is the table's kernel address */
extern const void page_offset_base __ksym __weak;

const volatile __u32 target_tgid;
/* set by user space from the machine's IOMMU units: whether paging domains are VT-d's */
const volatile __u32 vtd_tables;

#define PTE_ADDR_MASK 0x000ffffffffff000ull
#define PTE_PRESENT 3ull /* second stage: read or write; first stage: present (bit 0) */
#define PTE_LARGE (1ull << 7)
#define ENTRIES 512
#define DOMAIN_PAGING (1u << 0) /* __IOMMU_DOMAIN_PAGING */
#define DOMAIN_PT (1u << 2) /* __IOMMU_DOMAIN_PT */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct it_snap_walk);
} walk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} runs SEC(".maps");

/* Maps and unmaps seen while the snapshot program is loaded: a walk whose count moved read a
 * table that may have changed under it. Counted in the walked domain by the VT-d driver's
 * map_pages/unmap_pages, where user space could attach them, else in any domain by the
 * iommu:map and iommu:unmap tracepoints. */
/* [IT_SNAP_SEQ_STARTED]: driver calls in the walked domain begun; [IT_SNAP_SEQ_ENDED]: those
 * ended, or, with the tracepoints, maps and unmaps done in any domain; [IT_SNAP_SEQ_LOST]:
 * driver calls whose thread could not be noted */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} map_seq SEC(".maps");

/* the threads inside a driver call, with its domain: for its return, and for a walk that begins
 * while a call into its domain is writing */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} in_call SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *seq = bpf_map_lookup_elem(&map_seq, &which);

	if (seq)
		__sync_fetch_and_add(seq, 1);
}

/* a driver call begins: its thread noted with the domain; counted when it is the one walked */
static __always_inline void driver_call(void *domain)
{
	__u32 zero = 0;
	__u64 tid = bpf_get_current_pid_tgid(), d = (u64)domain;
	struct it_snap_walk *w = bpf_map_lookup_elem(&walk, &zero);

	if (bpf_map_update_elem(&in_call, &tid, &d, BPF_ANY)) {
		count(IT_SNAP_SEQ_LOST); /* its return could not be matched */
		return;
	}
	if (w && w->domain && d == w->domain)
		count(IT_SNAP_SEQ_STARTED);
}

/* a driver call returns: counted when into the domain walked */
static __always_inline void driver_return(void)
{
	__u32 zero = 0;
	__u64 tid = bpf_get_current_pid_tgid(), *d = bpf_map_lookup_elem(&in_call, &tid);
	struct it_snap_walk *w = bpf_map_lookup_elem(&walk, &zero);

	if (!d)
		return;
	if (w && w->domain && *d == w->domain)
		count(IT_SNAP_SEQ_ENDED);
	bpf_map_delete_elem(&in_call, &tid);
}

SEC("kprobe/intel_iommu_map_pages")
int BPF_KPROBE(snap_driver_map, void *domain)
{
	driver_call(domain);
	return 0;
}

SEC("kretprobe/intel_iommu_map_pages")
int BPF_KRETPROBE(snap_driver_map_ret)
{
	driver_return();
	return 0;
}

SEC("kprobe/intel_iommu_unmap_pages")
int BPF_KPROBE(snap_driver_unmap, void *domain)
{
	driver_call(domain);
	return 0;
}

SEC("kretprobe/intel_iommu_unmap_pages")
int BPF_KRETPROBE(snap_driver_unmap_ret)
{
	driver_return();
	return 0;
}

/* iommu:map and iommu:unmap fire after the change: ended only */
SEC("raw_tp/map")
int snap_map(void *ctx)
{
	count(IT_SNAP_SEQ_ENDED);
	return 0;
}

SEC("raw_tp/unmap")
int snap_unmap(void *ctx)
{
	count(IT_SNAP_SEQ_ENDED);
	return 0;
}

static __always_inline void flush_run(struct it_snap_walk *w)
{
	struct it_snap_run *r;

	if (!w->open.count)
		return;
	r = bpf_ringbuf_reserve(&runs, sizeof(*r), 0);
	if (r) {
		*r = w->open;
		bpf_ringbuf_submit(r, 0);
		w->runs++;
	} else {
		w->dropped++;
	}
	w->open.count = 0;
}

static __always_inline void add_leaf(struct it_snap_walk *w, u64 iova, u64 phys, u32 level,
				     u32 perms)
{
	u64 pgsize = 1ull << (12 + 9 * (level - 1));
	u64 next = w->open.count * w->open.pgsize;

	w->leaves++;
	if (w->open.count && w->open.level == level && w->open.perms == perms &&
	    w->open.iova + next == iova && w->open.phys + next == phys) {
		w->open.count++;
		return;
	}
	flush_run(w);
	w->open.iova = iova;
	w->open.phys = phys;
	w->open.pgsize = pgsize;
	w->open.count = 1;
	w->open.level = level;
	w->open.perms = perms;
}

/* bpf_loop's context: on the stack, which is all 6.1's bpf_loop takes */
struct loop_ctx {
	struct it_snap_walk *w;
};

/* One table entry of the walk; 1 stops the loop (the walk is done or failed). Levels index the
 * walk's arrays masked with 7, which the verifier can bound. */
static long step(__u32 i, struct loop_ctx *ctx)
{
	struct it_snap_walk *w = ctx->w;
	u32 l = w->level & 7, up, down;
	u64 pte, iova, pgsize;

	if (l < 1 || l > IT_SNAP_MAX_LEVELS) {
		w->error = IT_SNAP_BAD_LEVELS;
		return 1;
	}
	if (w->idx[l] >= ENTRIES) {
		if (l >= w->top) {
			flush_run(w);
			w->done = 1;
			return 1;
		}
		up = (l + 1) & 7;
		w->level = up;
		w->idx[up]++;
		return 0;
	}
	if (bpf_probe_read_kernel(&pte, sizeof(pte),
				  (void *)(w->direct_map + w->table[l] +
					   (u64)w->idx[l] * sizeof(pte)))) {
		w->error = IT_SNAP_READ_FAILED;
		return 1;
	}
	w->entries++;
	iova = w->base[l] + ((u64)w->idx[l] << (12 + 9 * (l - 1)));
	if (!(pte & PTE_PRESENT)) {
		w->idx[l]++;
		return 0;
	}
	if (l == 1 || (pte & PTE_LARGE)) {
		/* a large leaf's low address bits are flags (first stage: PAT at bit 12) */
		pgsize = 1ull << (12 + 9 * (l - 1));
		add_leaf(w, iova, pte & PTE_ADDR_MASK & ~(pgsize - 1), l, (u32)(pte & 3));
		w->idx[l]++;
		return 0;
	}
	down = (l - 1) & 7;
	w->tables++;
	w->level = down;
	w->table[down] = pte & PTE_ADDR_MASK;
	w->base[down] = iova;
	w->idx[down] = 0;
	return 0;
}

/* bpf_for_each_map_elem over in_call: counts the calls into the walked domain in flight */
static long in_flight(void *map, __u64 *tid, __u64 *domain, struct loop_ctx *ctx)
{
	if (*domain == ctx->w->domain)
		ctx->w->in_flight_at_start++;
	return 0;
}

/* A new walk: what the group's domain is, and for a VT-d paging domain, its table's root */
static int start(struct it_snap_walk *w, struct iommu_group *group)
{
	struct iommu_domain *domain = BPF_CORE_READ(group, domain);
	struct dmar_domain *dmar;
	u64 pgd, base, pob = (u64)&page_offset_base;
	u32 which = IT_SNAP_SEQ_STARTED, type, top;
	u64 *started = bpf_map_lookup_elem(&map_seq, &which), *ended, *lost;
	int agaw;

	__builtin_memset(&w->domain, 0,
			 sizeof(*w) - __builtin_offsetof(struct it_snap_walk, domain));
	w->group = (u64)group;
	which = IT_SNAP_SEQ_ENDED;
	ended = bpf_map_lookup_elem(&map_seq, &which);
	w->seq_started = started ? *started : 0;
	w->seq_ended = ended ? *ended : 0;
	which = IT_SNAP_SEQ_LOST;
	lost = bpf_map_lookup_elem(&map_seq, &which);
	w->seq_lost = lost ? *lost : 0;
	if (!domain) {
		w->kind = IT_SNAP_NO_DOMAIN;
		w->done = 1;
		return 0;
	}
	type = BPF_CORE_READ(domain, type);
	w->domain = (u64)domain;
	{
		struct loop_ctx ctx = { .w = w };

		bpf_for_each_map_elem(&in_call, in_flight, &ctx, 0);
	}
	w->domain_type = type;
	w->pgsize_bitmap = BPF_CORE_READ(domain, pgsize_bitmap);
	if (type & DOMAIN_PT) {
		w->kind = IT_SNAP_IDENTITY;
		w->done = 1;
		return 0;
	}
	if (!(type & DOMAIN_PAGING)) {
		/* no paging: blocked (type 0), or one this walker cannot tell (nested, SVA,
		 * platform), which translate all the same */
		w->kind = type ? IT_SNAP_UNREADABLE : IT_SNAP_BLOCKED;
		w->done = 1;
		return 0;
	}
	if (!vtd_tables || !pob || bpf_probe_read_kernel(&base, sizeof(base), (void *)pob)) {
		w->kind = IT_SNAP_UNREADABLE;
		w->done = 1;
		return 0;
	}
	if (bpf_core_field_exists(struct dmar_domain, pgd)) {
		dmar = (void *)domain - bpf_core_field_offset(struct dmar_domain, domain);
		pgd = (u64)BPF_CORE_READ(dmar, pgd);
		agaw = BPF_CORE_READ(dmar, agaw);
		/* agaw 1: 3 levels, 39 bits; 2: 4 levels, 48 bits; 3: 5 levels */
		top = agaw < 1 ? 0 : (u32)agaw + 2;
		w->format = IT_SNAP_FORMAT_VTD;
	} else if (bpf_core_field_exists(struct dmar_domain___pt, sspt)) {
		struct dmar_domain___pt *pt =
			(void *)domain - bpf_core_field_offset(struct dmar_domain___pt, domain);
		u64 tot = BPF_CORE_READ(pt, sspt.vtdss_pt.common.top_of_table);

		pgd = tot & ~PT_TOP_LEVEL_MASK;
		top = (u32)(tot & PT_TOP_LEVEL_MASK) + 1;
		w->format = IT_SNAP_FORMAT_VTD_PT;
	} else {
		w->kind = IT_SNAP_UNREADABLE;
		w->done = 1;
		return 0;
	}
	w->direct_map = base;
	if (!pgd || pgd < base) {
		w->error = IT_SNAP_READ_FAILED;
		return 0;
	}
	if (top < 2 || top > IT_SNAP_MAX_LEVELS) {
		w->error = IT_SNAP_BAD_LEVELS;
		return 0;
	}
	w->kind = IT_SNAP_TRANSLATED;
	w->top = top;
	w->level = top;
	barrier_var(top); /* keeps the mask, which 6.1's verifier needs to bound the index */
	w->table[top & 7] = pgd - base;
	return 0;
}

SEC("kprobe/iommu_group_show_type")
int BPF_KPROBE(snap_show_type, struct iommu_group *group)
{
	u32 zero = 0;
	struct it_snap_walk *w;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	w = bpf_map_lookup_elem(&walk, &zero);
	if (!w)
		return 0;
	if (w->command == IT_SNAP_START) {
		w->command = IT_SNAP_CONTINUE;
		start(w, group);
	} else if (w->command != IT_SNAP_CONTINUE || w->done || w->error) {
		return 0;
	} else if ((u64)BPF_CORE_READ(group, domain) != w->domain) {
		w->error = IT_SNAP_DOMAIN_CHANGED;
		return 0;
	}
	if (!w->done && !w->error) {
		struct loop_ctx ctx = { .w = w };

		bpf_loop(w->budget, step, &ctx, 0);
	}
	return 0;
}
