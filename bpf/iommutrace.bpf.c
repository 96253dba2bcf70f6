// SPDX-License-Identifier: GPL-2.0
/* Kernel side of the tracer: the iommu:* and intel_iommu:* tracepoints (tp_btf and raw_tp
 * variants), the IOMMU core calls that reveal which domain a map/unmap/attach went to, and the
 * driver functions that reveal the page sizes written. Every handler is compiled; user space
 * (tracer/probe_plan.c) switches off what the running kernel cannot attach and points the
 * fentry/kprobe slots at the functions it has. */
#include "bpf/kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/iommutrace.h"
#include "bpf/probe_slots.h"
#include "bpf/replay.h"

char LICENSE[] SEC("license") = "GPL";

/* probe ids of the slot programs and of the tracepoints, set by user space before load */
const volatile __u32 domain_slot_probe[IT_DOMAIN_SLOTS];
const volatile __u32 domain_slot_call[IT_DOMAIN_SLOTS];
const volatile __u32 map_slot_probe[IT_MAP_SLOTS];
const volatile __u32 unmap_slot_probe[IT_UNMAP_SLOTS];
const volatile __u32 range_slot_probe[IT_RANGE_SLOTS];
const volatile __u32 device_slot_probe[IT_DEVICE_SLOTS];
const volatile __u32 tp_probe[IT_TP_COUNT];
/* domain slots: 1-based position of the call's size argument (iommu_map: 4, iommu_unmap: 3);
 * 0: the function has none (iommu_map_sg, attach) */
const volatile __u32 domain_slot_size_arg[IT_DOMAIN_SLOTS];
/* enum it_capture_mode, and the threshold mode's boundary: set before load, so that the verifier
 * drops the code a mode does not use */
const volatile __u32 capture_mode = IT_MODE_PER_EVENT;
/* 0 with --tracepoints-only: no program records the thread's core calls, so the handlers do not
 * look them up (a hash lookup in domain_by_call, paid by every record) */
const volatile __u32 domain_calls = 1;
/* The kinds of call (bits 1 << enum it_domain_call: map, unmap) whose domain the driver's own
 * map_pages/unmap_pages calls give: their programs note themselves in driver_calls, and the
 * tracepoints take the domain from there when their thread made the call and its IOVA lies in
 * their range. Set by user space where every IOMMU of the machine maps through a probed driver
 * function (then the core calls of those kinds are left unattached, which saves two programs per
 * map or unmap). The threshold mode, which then has no core call to ask the size of, holds the
 * driver calls there until the tracepoint says it (hold_driver_call). */
const volatile __u32 driver_domains;
/* The kinds of call whose driver calls the threshold mode holds (bits as driver_domains): set by
 * user space to driver_domains before attaching, less the kinds whose driver probes then failed
 * to attach (their core calls are attached and say the size, as without driver_domains). */
__u32 held_calls;
const volatile __u64 threshold_bytes = 2ull << 20;
/* The reader is woken when the records waiting reach a multiple of wakeup_bytes (a power of two:
 * user space sets a sixteenth of the ring buffer), and finds the others when its wait times out.
 * 0: the ring buffer's own rule, a wakeup whenever the reader had caught up, which at low rates
 * is one per record, each an interrupt to this CPU (trapped, in a VM) and a switch to the reader */
const volatile __u64 wakeup_bytes;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by user space */
} events SEC(".maps");

/* reservation failures, per CPU and event kind */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_EV_KIND_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* The call of each kind (map, unmap, attach) this thread entered last, keyed by
 * domain_call_key(). Kinds are kept apart because an interrupt that completes I/O runs on the
 * interrupted thread: its DMA unmap must not take the place of the thread's map in progress.
 * LRU, so threads that are gone make room for new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct it_call_state);
} domain_by_call SEC(".maps");

/* For driver_domains: the last driver call of each kind on each CPU (struct it_driver_call). Per
 * CPU rather than per thread: its lookup is an array index, far cheaper than one in the LRU
 * hash, and the driver call and the tracepoint that follows it run on one CPU, with nothing that
 * sleeps in between; a thread moved or preempted there finds another thread's call (tid) and
 * takes no domain. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_CALL_ATTACH + 1);
	__type(key, __u32);
	__type(value, struct it_driver_call);
} driver_calls SEC(".maps");

/* aggregate and threshold modes: counters per class of call, per CPU, cumulative (never deleted:
 * a handler may hold a value's pointer); preallocated, max_entries set by user space */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct it_agg_key);
	__type(value, struct it_agg_value);
} aggregates SEC(".maps");

/* the counting fast path in front of the aggregates hash (iommutrace.h, IT_AGG_SLOTS);
 * max_entries set by user space (1 in the per-event mode, which never counts) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_AGG_SLOTS);
	__type(key, __u32);
	__type(value, struct it_agg_slot_key);
} agg_slot_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_AGG_SLOTS);
	__type(key, __u32);
	__type(value, struct it_agg_value);
} agg_slot_counts SEC(".maps");

/* calls that could not be counted because the aggregates hash was full, per CPU and kind */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_EV_KIND_MAX);
	__type(key, __u32);
	__type(value, __u64);
} agg_overflow SEC(".maps");

/* domains already reported with an IT_EV_DOMAIN record */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
} domains_seen SEC(".maps");

/* (domain, device) pairs already reported, so that a domain-device record is sent once per pair
 * while it stays in this LRU (functions that share a domain alternate without repeats) */
struct domain_device {
	__u64 domain;
	__u64 dev;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct domain_device);
	__type(value, __u8);
} domain_devices_seen SEC(".maps");

/* Submits e, waking the reader only when the records waiting (e included) have just reached a
 * multiple of wakeup_bytes; one producer passes each multiple by exactly one record, several on
 * other CPUs may pass one unseen, and the reader's timeout then bounds the wait. */
static __always_inline void submit(struct it_event *e)
{
	__u64 avail, flags = 0;

	if (wakeup_bytes) {
		avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
		flags = avail >= wakeup_bytes && (avail & (wakeup_bytes - 1)) < IT_RECORD_BYTES ?
				BPF_RB_FORCE_WAKEUP :
				BPF_RB_NO_WAKEUP;
	}
	bpf_ringbuf_submit(e, flags);
}

/* A record of kind stamped with the time and the current thread, or NULL when the ring buffer is
 * full (counted in drops). The thread is read from its task_struct: its comm in two 8-byte
 * loads (TASK_COMM_LEN is 16, the last byte always NUL) rather than by bpf_get_current_comm(), a
 * helper call that copies it, dearer than the ring buffer record; its ids as
 * bpf_get_current_pid_tgid() gives them, into *id when id is not NULL. */
static __always_inline struct it_event *reserve(__u32 kind, __u32 probe_id, __u64 *id)
{
	struct it_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct task_struct *task;
	__u64 *comm;

	if (!e) {
		__u64 *lost = bpf_map_lookup_elem(&drops, &kind);

		if (lost)
			*lost += 1;
		return NULL;
	}
	task = bpf_get_current_task_btf();
	e->h.ts_ns = bpf_ktime_get_ns();
	e->h.kind = kind;
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.pid = task->tgid;
	e->h.tid = task->pid;
	e->h.probe_id = probe_id;
	e->h.flags = 0;
	comm = (__u64 *)e->h.comm;
	comm[0] = *(__u64 *)&task->comm[0];
	comm[1] = *(__u64 *)&task->comm[8];
	if (id)
		*id = (__u64)e->h.pid << 32 | e->h.tid;
	return e;
}

/* Thread ids are below 2^22 (PID_MAX_LIMIT); the idle tasks of all CPUs share tid 0, so theirs
 * (interrupts taken while idle) are told apart by CPU. id: bpf_get_current_pid_tgid(). */
static __always_inline __u64 domain_call_key(__u32 call, __u64 id)
{
	__u32 tid = (__u32)id;

	if (!tid)
		tid = 1u << 31 | bpf_get_smp_processor_id();
	return (__u64)call << 32 | tid;
}

/* The thread's current IOMMU core call of the given kind, or NULL. */
static __always_inline struct it_call_state *current_call(__u32 call, __u64 id)
{
	__u64 key;

	if (!domain_calls)
		return NULL;
	key = domain_call_key(call, id);
	return bpf_map_lookup_elem(&domain_by_call, &key);
}

/* The domain of the thread's current IOMMU core call of the given kind, or 0. */
static __always_inline __u64 call_domain(__u32 call, __u64 id)
{
	struct it_call_state *cs = current_call(call, id);

	return cs ? cs->domain : 0;
}

/* current_call for the running thread, which it asks for only when there are calls to look up */
static __always_inline struct it_call_state *running_call(__u32 call)
{
	return domain_calls ? current_call(call, bpf_get_current_pid_tgid()) : NULL;
}

/* The domain of the running thread's current IOMMU core call of the given kind, or 0. */
static __always_inline __u64 running_call_domain(__u32 call)
{
	struct it_call_state *cs = running_call(call);

	return cs ? cs->domain : 0;
}

/* This CPU's last driver call of kind call (driver_calls) where the driver calls give the domain
 * of that kind's events (driver_domains), else NULL. A map or unmap event looks it up once, for
 * its domain and (threshold mode) the calls held there. */
static __always_inline struct it_driver_call *event_driver_call(__u32 call)
{
	if (!(driver_domains & (1u << call)))
		return NULL;
	return bpf_map_lookup_elem(&driver_calls, &call);
}

/* The domain of a map or unmap event of kind call over [iova, iova + size) made by thread id
 * (bpf_get_current_pid_tgid()): that of dc (event_driver_call), the driver call of this thread
 * before it on this CPU, when the call started inside the range (else it was another call's: an
 * interrupt's on this thread, or one whose event never fired); else, or failing that, the
 * thread's current core call's (attached where a driver probe was not). *flags gets where the
 * domain came from; 0 and no flag when unknown. */
static __always_inline __u64 event_domain(const struct it_driver_call *dc, __u32 call, __u64 id,
					  __u64 iova, __u64 size, __u32 *flags)
{
	struct it_call_state *cs;

	*flags = 0;
	if (dc && dc->domain && dc->tid == (__u32)id && dc->iova - iova < size) {
		*flags = IT_F_DOMAIN_FROM_DRIVER;
		return dc->domain;
	}
	cs = current_call(call, id);
	if (!cs || !cs->domain)
		return 0;
	*flags = IT_F_DOMAIN_FROM_CALL;
	return cs->domain;
}

/* event_domain for the running thread, which it asks for only when there is a call to look up */
static __always_inline __u64 running_event_domain(const struct it_driver_call *dc, __u32 call,
						  __u64 iova, __u64 size)
{
	__u32 flags;

	if (!domain_calls)
		return 0;
	return event_domain(dc, call, bpf_get_current_pid_tgid(), iova, size, &flags);
}

/* floor(log2(v)) for v > 0, without a loop (the BPF target has no count-leading-zeros) */
static __always_inline __u32 log2_floor(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	return r + (__u32)(v >> 1);
}

/* The trailing zero bits of addr, capped: what the largest page at addr could be. */
static __always_inline __u32 align_class(__u64 addr)
{
	__u32 bits;

	if (!addr)
		return IT_AGG_ALIGN_CAP;
	bits = log2_floor(addr & -addr);
	return bits > IT_AGG_ALIGN_CAP ? IT_AGG_ALIGN_CAP : bits;
}

static __always_inline void add_counts(struct it_agg_value *v, __u64 bytes, __u64 pages)
{
	/* atomic: an interrupt on this CPU can count into the same class in between. Nothing is
	 * added where nothing would be: the tracepoints count no pages, an invalidation neither
	 * bytes nor pages (constants at those call sites, so the test goes too) */
	__sync_fetch_and_add(&v->count, 1);
	if (bytes)
		__sync_fetch_and_add(&v->bytes, bytes);
	if (pages)
		__sync_fetch_and_add(&v->pages, pages);
}

/* Counts one call in its class's slot when user space published the class there. */
static __always_inline bool count_in_slot(const struct it_agg_key *key, __u64 bytes, __u64 pages)
{
	__u32 i = it_agg_slot_of(key);
	struct it_agg_slot_key *slot = bpf_map_lookup_elem(&agg_slot_keys, &i);
	struct it_agg_value *v;

	if (!slot || !slot->ready || slot->key.domain != key->domain ||
	    slot->key.pgsize != key->pgsize || slot->key.op != key->op ||
	    slot->key.size_log2 != key->size_log2 || slot->key.align_log2 != key->align_log2)
		return 0;
	v = bpf_map_lookup_elem(&agg_slot_counts, &i);
	if (!v)
		return 0;
	add_counts(v, bytes, pages);
	return 1;
}

/* Counts one call: in its slot, else in the aggregates hash; when the hash is full, in
 * agg_overflow. */
static __always_inline void aggregate(__u32 op, __u64 domain, __u64 len, __u64 pgsize, __u32 align,
				      __u64 bytes, __u64 pages)
{
	struct it_agg_key key = { .domain = domain,
				  .pgsize = pgsize,
				  .op = op,
				  .size_log2 = len ? log2_floor(len) : 0,
				  .align_log2 = align };
	struct it_agg_value first = { .count = 1, .bytes = bytes, .pages = pages };
	struct it_agg_value *v;
	__u64 *lost;

	if (count_in_slot(&key, bytes, pages))
		return;
	v = bpf_map_lookup_elem(&aggregates, &key);
	if (!v) {
		if (!bpf_map_update_elem(&aggregates, &key, &first, BPF_NOEXIST))
			return;
		/* another CPU added the class meanwhile (this CPU's value is zero), or full */
		v = bpf_map_lookup_elem(&aggregates, &key);
	}
	if (v) {
		add_counts(v, bytes, pages);
		return;
	}
	lost = bpf_map_lookup_elem(&agg_overflow, &op);
	if (lost)
		__sync_fetch_and_add(lost, 1);
}

/* Whether a call of size bytes is counted rather than recorded. */
static __always_inline bool counted(__u64 size)
{
	return capture_mode == IT_MODE_AGGREGATE ||
	       (capture_mode == IT_MODE_THRESHOLD && size < threshold_bytes);
}

/* Whether a driver record inside the thread's current call of kind call is counted: in the
 * threshold mode, when that call is known and smaller than the threshold (a driver record of a
 * big call stays a row, whatever its own size; with no call size known it stays a row). */
static __always_inline bool driver_counted(__u32 call)
{
	struct it_call_state *cs;

	if (capture_mode != IT_MODE_THRESHOLD)
		return capture_mode == IT_MODE_AGGREGATE;
	cs = running_call(call);
	return cs && cs->size && cs->size < threshold_bytes;
}

/* Sends the domain's IT_EV_DOMAIN record unless domains_seen has it. Returns whether the record
 * is sent (now or before); not when it was lost, so that the next call tries again. */
static __always_inline bool report_domain(__u64 domain, __u32 probe_id)
{
	struct iommu_domain *d = (struct iommu_domain *)domain;
	struct it_event *e;
	__u64 one = 1;

	if (bpf_map_lookup_elem(&domains_seen, &domain))
		return 1;
	bpf_map_update_elem(&domains_seen, &domain, &one, BPF_ANY);
	e = reserve(IT_EV_DOMAIN, probe_id, NULL);
	if (!e) {
		/* lost: let the next call report it again */
		bpf_map_delete_elem(&domains_seen, &domain);
		return 0;
	}
	e->domain.domain = domain;
	e->domain.pgsize_bitmap = BPF_CORE_READ(d, pgsize_bitmap);
	e->domain.type = BPF_CORE_READ(d, type);
	e->domain.pad = 0;
	submit(e);
	return 1;
}

static __always_inline int on_domain_call(__u64 domain, __u64 size, __u32 slot)
{
	struct it_call_state new = { .domain = domain, .size = size }, *cs;
	__u32 call;
	__u64 key;

	if (slot >= IT_DOMAIN_SLOTS)
		return 0;
	call = domain_slot_call[slot];
	key = domain_call_key(call, bpf_get_current_pid_tgid());
	/* A thread's entry is written in place once it exists: an update of the LRU hash takes
	 * its locks and swaps in a new element, costly per call (and a map or unmap runs two of
	 * these functions nested). Only this thread (and its interrupts, under other keys unless
	 * the same kind nests) writes the entry. */
	cs = bpf_map_lookup_elem(&domain_by_call, &key);
	if (cs) {
		cs->domain = domain;
		cs->size = size;
		/* a thread maps into the same domain again and again: reported already */
		if (cs->reported == domain)
			return 0;
	}
	/* not at attach: a new domain's page sizes are final only once it is attached (the VT-d
	 * driver sets them from the IOMMU the first device sits behind) */
	if (domain && call != IT_CALL_ATTACH && report_domain(domain, domain_slot_probe[slot]))
		new.reported = domain;
	if (cs)
		cs->reported = new.reported;
	else
		bpf_map_update_elem(&domain_by_call, &key, &new, BPF_ANY);
	return 0;
}

/* For driver_domains: makes a driver map_pages/unmap_pages call of thread tid this CPU's last of
 * its kind (dc), and reports its domain on first sight. */
static __always_inline void note_driver_call(struct it_driver_call *dc, __u32 tid, __u64 domain,
					     __u64 iova, __u32 probe_id)
{
	dc->domain = domain;
	dc->iova = iova;
	dc->tid = tid;
	if (domain && dc->reported != domain && report_domain(domain, probe_id))
		dc->reported = domain;
}

static __always_inline void enter_driver_call(__u32 call, __u64 domain, __u64 iova, __u32 probe_id)
{
	struct it_driver_call *dc = bpf_map_lookup_elem(&driver_calls, &call);

	if (dc)
		note_driver_call(dc, (__u32)bpf_get_current_pid_tgid(), domain, iova, probe_id);
}

/* A driver record (paddr 0 for unmaps) */
static __always_inline void record_driver(__u32 kind, __u32 probe_id, __u64 domain, __u64 iova,
					  __u64 paddr, __u64 pgsize, __u64 pgcount, __u64 len)
{
	struct it_event *e = reserve(kind, probe_id, NULL);

	if (!e)
		return;
	e->driver.domain = domain;
	e->driver.iova = iova;
	e->driver.paddr = paddr;
	e->driver.pgsize = pgsize;
	e->driver.pgcount = pgcount;
	e->driver.len = len;
	submit(e);
}

/* Counts a driver call, classed by its own length */
static __always_inline void count_driver(__u32 kind, __u64 domain, __u64 iova, __u64 paddr,
					 __u64 pgsize, __u64 pgcount, __u64 len)
{
	aggregate(kind, domain, len, pgsize, align_class(iova | paddr), len, pgcount);
}

/* Whether the threshold mode holds the driver calls of kind call until their core call's event:
 * where the driver calls give the domain, no core call program runs before them to say its
 * size. */
static __always_inline bool holds_driver_calls(__u32 call)
{
	return capture_mode == IT_MODE_THRESHOLD && (driver_domains & held_calls & (1u << call));
}

/* let_go_driver_call's first argument, which carries a held call in one word so that five
 * arguments do: keep (a record, else counted) in bit 63, the call's kind in bits 60 to 62, its
 * probe id in bits 48 to 59 (probe ids are below PROBE_PLAN_MAX, 48), its page size in bits 0 to
 * 47 (no IOMMU page comes near 2^48 bytes). */
#define LET_GO_KEEP_SHIFT 63
#define LET_GO_CALL_SHIFT 60
#define LET_GO_CALL_MASK 7
#define LET_GO_PROBE_SHIFT 48
#define LET_GO_PROBE_MASK 0xfff
#define LET_GO_PGSIZE_MASK ((1ull << LET_GO_PROBE_SHIFT) - 1)

static __always_inline __u64 let_go_what(bool keep, __u32 call, __u32 probe_id, __u64 pgsize)
{
	return (__u64)keep << LET_GO_KEEP_SHIFT | (__u64)call << LET_GO_CALL_SHIFT |
	       (__u64)(probe_id & LET_GO_PROBE_MASK) << LET_GO_PROBE_SHIFT |
	       (pgsize & LET_GO_PGSIZE_MASK);
}

/* Lets one held driver call go (what: let_go_what). Global, not inline, so that the verifier
 * checks it once: inline, the loop of release_driver_calls repeated it in every program that
 * lets held calls go, once per pending slot, and loading the threshold mode's iommu:map and
 * iommu:unmap programs kept the verifier busy for long. Keep the loop free of branches: one
 * that took the log2 of each page size there made the 6.1 verifier give up (a million
 * instructions processed). */
__noinline int let_go_driver_call(__u64 what, __u64 domain, __u64 iova, __u64 paddr, __u64 pgcount)
{
	__u32 call = what >> LET_GO_CALL_SHIFT & LET_GO_CALL_MASK;
	__u32 kind = call == IT_CALL_MAP ? IT_EV_DRIVER_MAP : IT_EV_DRIVER_UNMAP;
	__u32 probe_id = what >> LET_GO_PROBE_SHIFT & LET_GO_PROBE_MASK;
	__u64 pgsize = what & LET_GO_PGSIZE_MASK;

	if (what >> LET_GO_KEEP_SHIFT)
		record_driver(kind, probe_id, domain, iova, paddr, pgsize, pgcount,
			      pgsize * pgcount);
	else
		count_driver(kind, domain, iova, paddr, pgsize, pgcount, pgsize * pgcount);
	return 0;
}

/* Lets the driver calls held in dc go: as records when keep (the core call whose event this is
 * reached the threshold) and they lie in its range [iova, iova + size), else counted. Returns
 * whether any lay in the range. */
static __always_inline bool release_driver_calls(struct it_driver_call *dc, __u32 call, bool keep,
						 __u64 iova, __u64 size)
{
	__u32 n = dc->npending;
	bool inside = 0;

	for (__u32 i = 0; i < IT_PENDING_DRIVER_CALLS && i < n; i++) {
		struct it_driver_chunk *c = &dc->pending[i];
		bool in = c->iova - iova < size;

		inside |= in;
		let_go_driver_call(let_go_what(keep && in, call, c->probe_id, c->pgsize),
				   dc->domain, c->iova, c->paddr, c->pgcount);
	}
	dc->npending = 0;
	dc->big = 0;
	return inside;
}

/* The threshold mode's driver call where no core call program said its call's size: a record
 * when it alone reaches the threshold, or an earlier one of its call did; else held in
 * driver_calls until the call's event (a call of more driver calls than that holds: counted).
 * What is held for another thread or domain, or for a map call this one does not continue (the
 * driver calls of a map are contiguous), is from a call whose event did not come here (it
 * failed, or its thread moved to another CPU, or an interrupt mapped in between): counted. A
 * program that runs nested in another's hold or let-go on this CPU (an interrupt's call) leaves
 * the entry alone and records its call. */
static __always_inline int hold_driver_call(__u32 kind, __u32 probe_id, __u32 call, __u64 domain,
					    __u64 iova, __u64 paddr, __u64 pgsize, __u64 pgcount,
					    __u64 len)
{
	struct it_driver_call *dc = bpf_map_lookup_elem(&driver_calls, &call);
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), n;

	if (!dc)
		return 0;
	if (dc->busy) {
		record_driver(kind, probe_id, domain, iova, paddr, pgsize, pgcount, len);
		return 0;
	}
	dc->busy = 1;
	if (dc->tid != tid || dc->domain != domain ||
	    (call == IT_CALL_MAP && iova != dc->next_iova))
		release_driver_calls(dc, call, 0, 0, 0);
	note_driver_call(dc, tid, domain, iova, probe_id);
	dc->next_iova = iova + len;
	n = dc->npending;
	if (dc->big || len >= threshold_bytes) {
		dc->big = 1;
		record_driver(kind, probe_id, domain, iova, paddr, pgsize, pgcount, len);
	} else if (n >= IT_PENDING_DRIVER_CALLS) {
		count_driver(kind, domain, iova, paddr, pgsize, pgcount, len);
	} else {
		dc->pending[n].iova = iova;
		dc->pending[n].paddr = paddr;
		dc->pending[n].pgsize = pgsize;
		dc->pending[n].pgcount = pgcount;
		dc->pending[n].probe_id = probe_id;
		dc->npending = n + 1;
	}
	dc->busy = 0;
	return 0;
}

/* At a map or unmap event of kind call over [iova, iova + size): lets this thread's driver calls
 * held on this CPU (dc: event_driver_call) go, as records when keep. Another thread's stay (it
 * was moved off this CPU in its call; its next driver call or event here lets them go), as do
 * all when the event runs nested in a hold or let-go on this CPU. Returns whether the call's
 * driver calls ended here (held in its range, or recorded at once); when not, they were or will
 * be counted. */
static __always_inline bool end_held_driver_calls(struct it_driver_call *dc, __u32 call, bool keep,
						  __u64 iova, __u64 size)
{
	bool here;

	if (!dc || dc->tid != (__u32)bpf_get_current_pid_tgid())
		return 0;
	if (dc->busy)
		return 1;
	dc->busy = 1;
	here = dc->big;
	here |= release_driver_calls(dc, call, keep, iova, size);
	dc->busy = 0;
	return here;
}

static __always_inline int on_map(__u64 iova, __u64 paddr, __u64 size)
{
	struct it_driver_call *dc = event_driver_call(IT_CALL_MAP);
	struct it_event *e;
	__u32 flags, held_here = 1;
	__u64 id;

	if (holds_driver_calls(IT_CALL_MAP))
		held_here = end_held_driver_calls(dc, IT_CALL_MAP, !counted(size), iova, size);
	if (counted(size)) {
		aggregate(IT_EV_MAP, running_event_domain(dc, IT_CALL_MAP, iova, size), size, 0,
			  align_class(iova | paddr), size, 0);
		return 0;
	}
	e = reserve(IT_EV_MAP, tp_probe[IT_TP_MAP], &id);
	if (!e)
		return 0;
	e->map.domain = event_domain(dc, IT_CALL_MAP, id, iova, size, &flags);
	e->h.flags = flags | (held_here ? 0 : IT_F_DRIVER_CALLS_COUNTED);
	e->map.iova = iova;
	e->map.paddr = paddr;
	e->map.size = size;
	submit(e);
	return 0;
}

static __always_inline int on_unmap(__u64 iova, __u64 size, __u64 unmapped)
{
	struct it_driver_call *dc = event_driver_call(IT_CALL_UNMAP);
	struct it_event *e;
	__u32 flags;
	__u64 id;

	/* classed by what it took away when that is more than it asked for: VFIO type1 unmaps a
	 * page-sized request and the driver removes the whole large page around it (AMD-Vi: 4 KiB
	 * asked, 1 GiB unmapped), which is the unmap of a big mapping */
	__u64 extent = unmapped > size ? unmapped : size;
	__u32 held_here = 1;

	if (holds_driver_calls(IT_CALL_UNMAP))
		held_here =
			end_held_driver_calls(dc, IT_CALL_UNMAP, !counted(extent), iova, extent);
	if (counted(extent)) {
		aggregate(IT_EV_UNMAP, running_event_domain(dc, IT_CALL_UNMAP, iova, size), size, 0,
			  align_class(iova), unmapped, 0);
		return 0;
	}
	e = reserve(IT_EV_UNMAP, tp_probe[IT_TP_UNMAP], &id);
	if (!e)
		return 0;
	e->unmap.domain = event_domain(dc, IT_CALL_UNMAP, id, iova, size, &flags);
	e->h.flags = flags | (held_here ? 0 : IT_F_DRIVER_CALLS_COUNTED);
	e->unmap.iova = iova;
	e->unmap.size = size;
	e->unmap.unmapped_size = unmapped;
	submit(e);
	return 0;
}

static __always_inline void read_dev_name(char *dst, struct device *dev)
{
	const char *name = BPF_CORE_READ(dev, kobj.name);

	if (!name || bpf_probe_read_kernel_str(dst, IT_DEV_NAME_LEN, name) < 0)
		dst[0] = '\0';
}

/* attach and group events: the domain from the attach call when probed, else the group's */
static __always_inline int on_device(__u32 kind, __u32 tp, struct device *dev, __s32 group_id)
{
	struct iommu_domain *domain;
	struct it_event *e;
	__u64 call_dom, id;

	e = reserve(kind, tp_probe[tp], &id);
	if (!e)
		return 0;
	__builtin_memset(&e->device, 0, sizeof(e->device));
	read_dev_name(e->device.dev_name, dev);
	e->device.group_id = group_id;
	if (group_id < 0)
		e->device.group_id = dev ? BPF_CORE_READ(dev, iommu_group, id) : -1;
	call_dom = kind == IT_EV_ATTACH ? call_domain(IT_CALL_ATTACH, id) : 0;
	if (call_dom) {
		domain = (struct iommu_domain *)call_dom;
		e->h.flags = IT_F_DOMAIN_FROM_CALL;
	} else {
		domain = dev ? BPF_CORE_READ(dev, iommu_group, domain) : NULL;
		e->h.flags = domain ? IT_F_DOMAIN_FROM_GROUP : 0;
	}
	e->device.domain = (__u64)domain;
	e->device.domain_type = domain ? BPF_CORE_READ(domain, type) : 0;
	submit(e);
	return 0;
}

static __always_inline int on_fault(struct device *dev, __u64 iova, int flags)
{
	struct it_event *e = reserve(IT_EV_FAULT, tp_probe[IT_TP_FAULT], NULL);

	if (!e)
		return 0;
	e->fault.iova = iova;
	e->fault.flags = flags;
	e->fault.pad = 0;
	read_dev_name(e->fault.dev_name, dev);
	submit(e);
	return 0;
}

/* A descriptor carries no size of its own: counted in both aggregate and threshold modes. */
static __always_inline int on_qi_submit(__u64 qw0, __u64 qw1, __u64 qw2, __u64 qw3)
{
	struct it_event *e;

	if (capture_mode != IT_MODE_PER_EVENT) {
		aggregate(IT_EV_QI_SUBMIT, 0, 0, 0, 0, 0, 0);
		return 0;
	}
	e = reserve(IT_EV_QI_SUBMIT, tp_probe[IT_TP_QI_SUBMIT], NULL);
	if (!e)
		return 0;
	e->qi.qw[0] = qw0;
	e->qi.qw[1] = qw1;
	e->qi.qw[2] = qw2;
	e->qi.qw[3] = qw3;
	submit(e);
	return 0;
}

static __always_inline int on_cache_tag_flush(__u32 tp, struct cache_tag *tag, __u64 start,
					      __u64 end, __u64 addr, __u64 pages, __u64 mask)
{
	struct it_event *e;

	/* end is inclusive; counted by the flushed range's own size */
	if (counted(end - start + 1)) {
		aggregate(IT_EV_CACHE_TAG_FLUSH, 0, end - start + 1, 0, align_class(start),
			  end - start + 1, pages ? pages : 1ull << (mask & 63));
		return 0;
	}
	e = reserve(IT_EV_CACHE_TAG_FLUSH, tp_probe[tp], NULL);
	if (!e)
		return 0;
	e->flush.start = start;
	e->flush.end = end;
	e->flush.addr = addr;
	e->flush.pages = pages;
	e->flush.mask = mask;
	e->flush.np = tp == IT_TP_CACHE_TAG_FLUSH_NP;
	e->flush.domain_id = 0;
	e->flush.dev_name[0] = '\0';
	/* struct cache_tag exists only where the Intel driver is built (6.10 on) */
	if (bpf_core_type_exists(struct cache_tag) && tag) {
		e->flush.domain_id = BPF_CORE_READ(tag, domain_id);
		read_dev_name(e->flush.dev_name, BPF_CORE_READ(tag, dev));
	}
	submit(e);
	return 0;
}

/* A DMA API call names its device; the device's group holds the domain the call maps into. This
 * is how domains attached before the recording started are tied to devices. */
static __always_inline int on_device_call(struct device *dev, __u32 slot)
{
	struct domain_device pair = { .dev = (__u64)dev };
	struct iommu_domain *domain;
	struct it_event *e;
	__u8 one = 1;
	__u64 dom;

	if (!dev || slot >= IT_DEVICE_SLOTS)
		return 0;
	domain = BPF_CORE_READ(dev, iommu_group, domain);
	dom = (__u64)domain;
	if (!dom)
		return 0;
	pair.domain = dom;
	if (bpf_map_lookup_elem(&domain_devices_seen, &pair))
		return 0;
	bpf_map_update_elem(&domain_devices_seen, &pair, &one, BPF_ANY);
	report_domain(dom, device_slot_probe[slot]);
	e = reserve(IT_EV_DOMAIN_DEVICE, device_slot_probe[slot], NULL);
	if (!e) {
		bpf_map_delete_elem(&domain_devices_seen, &pair);
		return 0;
	}
	__builtin_memset(&e->device, 0, sizeof(e->device));
	e->h.flags = IT_F_DOMAIN_FROM_GROUP;
	e->device.domain = dom;
	e->device.group_id = BPF_CORE_READ(dev, iommu_group, id);
	e->device.domain_type = BPF_CORE_READ(domain, type);
	read_dev_name(e->device.dev_name, dev);
	submit(e);
	return 0;
}

/* call: the kind of IOMMU core call the driver call runs in (the threshold mode asks its size;
 * for driver_domains, a map_pages or unmap_pages call stands in for it) */
static __always_inline int on_driver(__u32 kind, __u32 probe_id, __u32 call, __u64 domain,
				     __u64 iova, __u64 paddr, __u64 pgsize, __u64 pgcount,
				     __u64 len)
{
	if (kind != IT_EV_DRIVER_MAP_RANGE && (driver_domains & (1u << call))) {
		if (holds_driver_calls(call))
			return hold_driver_call(kind, probe_id, call, domain, iova, paddr, pgsize,
						pgcount, len);
		enter_driver_call(call, domain, iova, probe_id);
	}
	if (driver_counted(call))
		count_driver(kind, domain, iova, paddr, pgsize, pgcount, len);
	else
		record_driver(kind, probe_id, domain, iova, paddr, pgsize, pgcount, len);
	return 0;
}

/* Lets every driver call of kind call held in dc go, counted. */
static __always_inline void release_all_held(struct it_driver_call *dc, __u32 call)
{
	if (dc)
		release_driver_calls(dc, call, 0, 0, 0);
}

/* Not attached: user space runs it on each CPU (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU)
 * once the probes are detached, so that the driver calls the threshold mode still holds there,
 * whose events will not come, are counted. */
SEC("raw_tp")
int release_held_driver_calls(void *ctx)
{
	__u32 call = IT_CALL_MAP;

	release_all_held(bpf_map_lookup_elem(&driver_calls, &call), call);
	call = IT_CALL_UNMAP;
	release_all_held(bpf_map_lookup_elem(&driver_calls, &call), call);
	return 0;
}

/* The same for the CPU ctx[0], from another: for a CPU taken offline during the capture, which
 * BPF_F_TEST_RUN_ON_CPU cannot run on and whose entries nothing changes any more. Counted in the
 * running CPU's classes. Loaded only where the kernel has bpf_map_lookup_percpu_elem (5.19). */
SEC("raw_tp")
int release_held_driver_calls_of(__u64 *ctx)
{
	__u32 cpu = ctx[0], call = IT_CALL_MAP;

	release_all_held(bpf_map_lookup_percpu_elem(&driver_calls, &call, cpu), call);
	call = IT_CALL_UNMAP;
	release_all_held(bpf_map_lookup_percpu_elem(&driver_calls, &call, cpu), call);
	return 0;
}

static long replay_one(__u64 i, void *ctx)
{
	__u64 n = *(__u64 *)ctx + i;

	if (IT_REPLAY_UNMAP(n))
		on_unmap(IT_REPLAY_IOVA(n), IT_REPLAY_SIZE, IT_REPLAY_SIZE);
	else
		on_map(IT_REPLAY_IOVA(n), IT_REPLAY_PADDR(n), IT_REPLAY_SIZE);
	return 0;
}

/* Not attached, and loaded only for the benchmark (bpf_capture_opts.replay): events first to
 * first + count - 1 of the storm of replay.h through the map and unmap tracepoints' own handlers,
 * in one BPF_PROG_TEST_RUN (ctx: first, count), so that a generator core can produce more events
 * per second than one test run per event would let it. */
SEC("raw_tp")
int replay_map_unmap(__u64 *ctx)
{
	__u64 first = ctx[0];
	__u32 count = ctx[1] < IT_REPLAY_MAX_BATCH ? ctx[1] : IT_REPLAY_MAX_BATCH;

	bpf_loop(count, replay_one, &first, 0);
	return 0;
}

/* Tracepoints: the same handler as tp_btf (typed, preferred) and raw_tp (BPF_PROG_TEST_RUN can
 * drive it, and older kernels without tp_btf attach it). */
/* ARGS() keeps an argument list in parentheses through the macro layers; UNPAREN opens it */
#define ARGS(...) (__VA_ARGS__)
#define UNPAREN(...) __VA_ARGS__
#define TRACEPOINT_AS(prog, name, args, call) \
	SEC("tp_btf/" #name) int BPF_PROG(btf_##prog, UNPAREN args) \
	{ \
		return call; \
	} \
	SEC("raw_tp/" #name) int BPF_PROG(raw_##prog, UNPAREN args) \
	{ \
		return call; \
	}
#define TRACEPOINT(name, args, call) TRACEPOINT_AS(name, name, args, call)

TRACEPOINT(map, ARGS(unsigned long iova, phys_addr_t paddr, size_t size), on_map(iova, paddr, size))
TRACEPOINT(unmap, ARGS(unsigned long iova, size_t size, size_t unmapped),
	   on_unmap(iova, size, unmapped))
TRACEPOINT(attach_device_to_domain, ARGS(struct device *dev),
	   on_device(IT_EV_ATTACH, IT_TP_ATTACH, dev, -1))
TRACEPOINT(add_device_to_group, ARGS(int group_id, struct device *dev),
	   on_device(IT_EV_GROUP_ADD, IT_TP_GROUP_ADD, dev, group_id))
TRACEPOINT(remove_device_from_group, ARGS(int group_id, struct device *dev),
	   on_device(IT_EV_GROUP_REMOVE, IT_TP_GROUP_REMOVE, dev, group_id))
TRACEPOINT(io_page_fault, ARGS(struct device *dev, unsigned long iova, int flags),
	   on_fault(dev, iova, flags))
TRACEPOINT(qi_submit, ARGS(void *iommu, u64 qw0, u64 qw1, u64 qw2, u64 qw3),
	   on_qi_submit(qw0, qw1, qw2, qw3))
TRACEPOINT(cache_tag_flush_range,
	   ARGS(struct cache_tag *tag, unsigned long start, unsigned long end, unsigned long addr,
		unsigned long pages, unsigned long mask),
	   on_cache_tag_flush(IT_TP_CACHE_TAG_FLUSH, tag, start, end, addr, pages, mask))
TRACEPOINT(cache_tag_flush_range_np,
	   ARGS(struct cache_tag *tag, unsigned long start, unsigned long end, unsigned long addr,
		unsigned long pages, unsigned long mask),
	   on_cache_tag_flush(IT_TP_CACHE_TAG_FLUSH_NP, tag, start, end, addr, pages, mask))
/* 7.x dropped the pages argument (2^mask pages are flushed); the plan picks the variant whose
 * argument count matches the kernel's BTF */
TRACEPOINT_AS(cache_tag_flush_range5, cache_tag_flush_range,
	      ARGS(struct cache_tag *tag, unsigned long start, unsigned long end,
		   unsigned long addr, unsigned long mask),
	      on_cache_tag_flush(IT_TP_CACHE_TAG_FLUSH, tag, start, end, addr, 0, mask))
TRACEPOINT_AS(cache_tag_flush_range_np5, cache_tag_flush_range_np,
	      ARGS(struct cache_tag *tag, unsigned long start, unsigned long end,
		   unsigned long addr, unsigned long mask),
	      on_cache_tag_flush(IT_TP_CACHE_TAG_FLUSH_NP, tag, start, end, addr, 0, mask))

/* The size argument of the domain call in slot (threshold mode only: the other modes do not
 * read it, and kernels before 5.17, without bpf_get_func_arg, still load them). */
static __always_inline __u64 fentry_call_size(void *ctx, __u32 slot)
{
	__u64 size = 0;

	if (capture_mode == IT_MODE_THRESHOLD && domain_slot_size_arg[slot])
		bpf_get_func_arg(ctx, domain_slot_size_arg[slot] - 1, &size);
	return size;
}

static __always_inline __u64 kprobe_call_size(struct pt_regs *ctx, __u32 slot)
{
	if (capture_mode != IT_MODE_THRESHOLD)
		return 0;
	switch (domain_slot_size_arg[slot]) {
	case 3:
		return PT_REGS_PARM3(ctx);
	case 4:
		return PT_REGS_PARM4(ctx);
	default:
		return 0;
	}
}

/* Function slots: each fentry/kprobe pair is pointed at one kernel function by user space. */
#define DOMAIN_SLOT(i) \
	SEC("fentry") int BPF_PROG(fe_domain_##i, void *domain) \
	{ \
		return on_domain_call((__u64)domain, fentry_call_size(ctx, i), i); \
	} \
	SEC("kprobe") int BPF_KPROBE(kp_domain_##i, void *domain) \
	{ \
		return on_domain_call((__u64)domain, kprobe_call_size(ctx, i), i); \
	}

/* The domain argument of an fentry driver slot as a number. The typed argument is a pointer to
 * struct iommu_domain, which the counting modes' slot hash may not combine (the verifier refuses
 * any arithmetic on a pointer but + and -); bpf_get_func_arg (5.17 on) gives the same value
 * untyped. The per-event mode only stores it and calls no helper, so it loads on older kernels
 * too, as the threshold mode's domain slots do not (fentry_call_size). */
static __always_inline __u64 fentry_domain(void *ctx, void *domain)
{
	__u64 value = 0;

	if (capture_mode == IT_MODE_PER_EVENT)
		return (__u64)domain;
	bpf_get_func_arg(ctx, 0, &value);
	return value;
}

/* map_pages(domain, iova, paddr, pgsize, pgcount, ...) */
#define MAP_SLOT(i) \
	SEC("fentry") \
	int BPF_PROG(fe_map_##i, void *domain, unsigned long iova, phys_addr_t paddr, \
		     size_t pgsize, size_t pgcount) \
	{ \
		return on_driver(IT_EV_DRIVER_MAP, map_slot_probe[i], IT_CALL_MAP, \
				 fentry_domain(ctx, domain), iova, paddr, pgsize, pgcount, \
				 pgsize * pgcount); \
	} \
	SEC("kprobe") \
	int BPF_KPROBE(kp_map_##i, void *domain, unsigned long iova, phys_addr_t paddr, \
		       size_t pgsize, size_t pgcount) \
	{ \
		return on_driver(IT_EV_DRIVER_MAP, map_slot_probe[i], IT_CALL_MAP, (__u64)domain, \
				 iova, paddr, pgsize, pgcount, pgsize * pgcount); \
	}

/* unmap_pages(domain, iova, pgsize, pgcount, gather) */
#define UNMAP_SLOT(i) \
	SEC("fentry") \
	int BPF_PROG(fe_unmap_##i, void *domain, unsigned long iova, size_t pgsize, \
		     size_t pgcount) \
	{ \
		return on_driver(IT_EV_DRIVER_UNMAP, unmap_slot_probe[i], IT_CALL_UNMAP, \
				 fentry_domain(ctx, domain), iova, 0, pgsize, pgcount, \
				 pgsize * pgcount); \
	} \
	SEC("kprobe") \
	int BPF_KPROBE(kp_unmap_##i, void *domain, unsigned long iova, size_t pgsize, \
		       size_t pgcount) \
	{ \
		return on_driver(IT_EV_DRIVER_UNMAP, unmap_slot_probe[i], IT_CALL_UNMAP, \
				 (__u64)domain, iova, 0, pgsize, pgcount, pgsize * pgcount); \
	}

/* map_range(pt_iommu, iova, paddr, len, ...): the leaf is chosen inside, so the record carries
 * the range and the domain of the enclosing iommu_map call; user space derives the pages. */
#define RANGE_SLOT(i) \
	SEC("fentry") \
	int BPF_PROG(fe_range_##i, void *pt, unsigned long iova, phys_addr_t paddr, size_t len) \
	{ \
		return on_driver(IT_EV_DRIVER_MAP_RANGE, range_slot_probe[i], IT_CALL_MAP, \
				 running_call_domain(IT_CALL_MAP), iova, paddr, 0, 0, len); \
	} \
	SEC("kprobe") \
	int BPF_KPROBE(kp_range_##i, void *pt, unsigned long iova, phys_addr_t paddr, size_t len) \
	{ \
		return on_driver(IT_EV_DRIVER_MAP_RANGE, range_slot_probe[i], IT_CALL_MAP, \
				 running_call_domain(IT_CALL_MAP), iova, paddr, 0, 0, len); \
	}

/* DMA API functions taking the device first */
#define DEVICE_SLOT(i) \
	SEC("fentry") int BPF_PROG(fe_device_##i, struct device *dev) \
	{ \
		return on_device_call(dev, i); \
	} \
	SEC("kprobe") int BPF_KPROBE(kp_device_##i, struct device *dev) \
	{ \
		return on_device_call(dev, i); \
	}

/* the slot programs, four to a line */
/* clang-format off */
DOMAIN_SLOT(0) DOMAIN_SLOT(1) DOMAIN_SLOT(2) DOMAIN_SLOT(3)
DOMAIN_SLOT(4) DOMAIN_SLOT(5) DOMAIN_SLOT(6) DOMAIN_SLOT(7)
DOMAIN_SLOT(8) DOMAIN_SLOT(9) DOMAIN_SLOT(10) DOMAIN_SLOT(11)
MAP_SLOT(0) MAP_SLOT(1) MAP_SLOT(2) MAP_SLOT(3)
UNMAP_SLOT(0) UNMAP_SLOT(1) UNMAP_SLOT(2) UNMAP_SLOT(3)
RANGE_SLOT(0) RANGE_SLOT(1) RANGE_SLOT(2)
DEVICE_SLOT(0) DEVICE_SLOT(1) DEVICE_SLOT(2) DEVICE_SLOT(3)
DEVICE_SLOT(4) DEVICE_SLOT(5) DEVICE_SLOT(6) DEVICE_SLOT(7)
	/* clang-format on */
