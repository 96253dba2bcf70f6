/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Event records shared by the BPF programs and user space: fixed-width fields only, no pointers.
 * The same record is produced by the ring buffer, the tracefs fallback and the importers, so
 * everything downstream of capture (the event writer, the database) sees one format. */
#ifndef IOMMUTRACE_EVENTS_H
#define IOMMUTRACE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define IT_COMM_LEN 16
#define IT_DEV_NAME_LEN 32

enum it_event_kind {
	IT_EV_MAP = 1, /* iommu:map */
	IT_EV_UNMAP, /* iommu:unmap */
	IT_EV_ATTACH, /* iommu:attach_device_to_domain */
	IT_EV_GROUP_ADD, /* iommu:add_device_to_group */
	IT_EV_GROUP_REMOVE, /* iommu:remove_device_from_group */
	IT_EV_FAULT, /* iommu:io_page_fault */
	IT_EV_DRIVER_MAP, /* driver map_pages(domain, iova, paddr, pgsize, pgcount) */
	IT_EV_DRIVER_UNMAP, /* driver unmap_pages(domain, iova, pgsize, pgcount) */
	IT_EV_DRIVER_MAP_RANGE, /* driver map_range(pt, iova, paddr, len): leaf chosen inside */
	IT_EV_DOMAIN, /* first sight of a domain: its type and page-size bitmap */
	IT_EV_QI_SUBMIT, /* intel_iommu:qi_submit: one invalidation descriptor */
	IT_EV_CACHE_TAG_FLUSH, /* intel_iommu:cache_tag_flush_range(_np) */
	IT_EV_DOMAIN_DEVICE, /* a device seen using a domain through the DMA API */
	IT_EV_KIND_MAX,
};

/* Identifies which kernel function or tracepoint produced a record; the user side turns it back
 * into a name through the probe plan (tracer/probe_plan.h). */
struct it_event_header {
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u32 kind; /* enum it_event_kind */
	__u32 cpu;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 probe_id; /* index into the probe plan */
	__u32 flags; /* IT_F_* */
	char comm[IT_COMM_LEN];
};

/* The domain of a map/unmap/attach came from the thread's last IOMMU core call (probe) */
#define IT_F_DOMAIN_FROM_CALL (1u << 0)
/* The domain came from dev->iommu_group->domain at the time of the event */
#define IT_F_DOMAIN_FROM_GROUP (1u << 1)
/* The domain of a map/unmap came from the driver's map_pages/unmap_pages call its thread made
 * last on its CPU, inside the event's IOVA range (where the core calls are not probed) */
#define IT_F_DOMAIN_FROM_DRIVER (1u << 2)
/* Threshold mode, driver calls held: a map/unmap recorded whose driver calls were not held for
 * it on its CPU (its thread moved, or something else let them go): they are counted, so no
 * pages are derived for it */
#define IT_F_DRIVER_CALLS_COUNTED (1u << 3)

struct it_map {
	__u64 domain;
	__u64 iova;
	__u64 paddr;
	__u64 size;
};

struct it_unmap {
	__u64 domain;
	__u64 iova;
	__u64 size;
	__u64 unmapped_size;
};

struct it_device {
	__u64 domain;
	__s32 group_id;
	__u32 domain_type;
	char dev_name[IT_DEV_NAME_LEN];
};

struct it_fault {
	__u64 iova;
	__s32 flags;
	__u32 pad;
	char dev_name[IT_DEV_NAME_LEN];
};

/* map_pages / unmap_pages / map_range: paddr unused for unmap; pgsize/pgcount 0 for map_range */
struct it_driver {
	__u64 domain;
	__u64 iova;
	__u64 paddr;
	__u64 pgsize;
	__u64 pgcount;
	__u64 len;
};

struct it_domain {
	__u64 domain;
	__u64 pgsize_bitmap;
	__u32 type;
	__u32 pad;
};

struct it_qi {
	__u64 qw[4];
};

struct it_cache_tag_flush {
	__u64 start;
	__u64 end;
	__u64 addr;
	__u64 pages; /* 0: the kernel does not pass it (7.x) */
	__u64 mask;
	__u32 domain_id;
	__u32 np; /* 1: the _np (non-present) variant */
	char dev_name[IT_DEV_NAME_LEN];
};

struct it_event {
	struct it_event_header h;
	union {
		struct it_map map;
		struct it_unmap unmap;
		struct it_device device; /* attach, group add/remove, domain-device */
		struct it_fault fault;
		struct it_driver driver;
		struct it_domain domain;
		struct it_qi qi;
		struct it_cache_tag_flush flush;
	};

/* The bytes one record takes in the ring buffer: the record and the buffer's 8-byte header,
 * rounded up to 8 (the handlers wake the reader by this count; tests fill the buffer by it) */
#define IT_RECORD_BYTES ((sizeof(struct it_event) + 8 + 7) & ~7ull)
};

/* What the programs do with map/unmap/driver/invalidation calls (rodata capture_mode) */
enum it_capture_mode {
	IT_MODE_PER_EVENT, /* one ring buffer record each */
	IT_MODE_AGGREGATE, /* counted in the aggregates hash */
	IT_MODE_THRESHOLD, /* a record when the IOMMU core call is >= threshold, else counted */
};

/* The value of domain_by_call: the IOMMU core call of a kind a thread entered last, its domain
 * and, where the function has one and the threshold mode reads it, its size (0: unknown);
 * reported: a domain this thread's calls have seen reported (its IT_EV_DOMAIN record sent), so
 * that its next calls into the same domain need not ask domains_seen (0: none). */
struct it_call_state {
	__u64 domain;
	__u64 size;
	__u64 reported;
};

/* Driver calls the threshold mode holds per CPU until the event of their core call says its
 * size (struct it_driver_call); a core call's driver calls beyond these are counted at once */
#define IT_PENDING_DRIVER_CALLS 8

/* A driver map_pages/unmap_pages call held back (paddr 0 for unmaps) */
struct it_driver_chunk {
	__u64 iova;
	__u64 paddr;
	__u64 pgsize;
	__u64 pgcount;
	__u32 probe_id;
	__u32 pad;
};

/* The value of driver_calls (per CPU, indexed by enum it_domain_call), for the kinds whose
 * domain the driver calls give (driver_domains): the last driver map_pages/unmap_pages call of
 * that kind on this CPU, made by thread tid, starting at iova, into domain; reported as in
 * it_call_state, for this CPU's calls. In the threshold mode also the driver calls of the core
 * call in progress, held until its event decides between rows and counts (npending of them in
 * pending), and big: one of them alone reached the threshold, so the call's driver calls are
 * records at once. */
struct it_driver_call {
	__u64 domain;
	__u64 iova;
	__u64 reported;
	__u64 next_iova; /* where the held map call's next driver call starts */
	__u32 tid;
	__u32 npending;
	__u32 big;
	__u32 busy; /* a program holds or lets go here (one nested in it keeps off) */
	struct it_driver_chunk pending[IT_PENDING_DRIVER_CALLS];
};

/* alignment classes above this (1 GiB) are counted as this: no IOMMU page is larger */
#define IT_AGG_ALIGN_CAP 30

/* The key of the aggregates hash: one class of calls. */
struct it_agg_key {
	__u64 domain; /* 0: unknown (no domain probe) or none (invalidations) */
	__u64 pgsize; /* driver map_pages/unmap_pages: the page size; else 0 */
	__u32 op; /* enum it_event_kind of the record the call would have made */
	__u32 size_log2; /* floor(log2(the call's length in bytes)); 0 when it has none */
	__u32 align_log2; /* trailing zero bits of iova|paddr (maps), of iova (unmaps), capped */
	__u32 pad;
};

/* Per CPU, cumulative from load (never reset nor deleted: user space takes differences). */
struct it_agg_value {
	__u64 count; /* calls */
	__u64 bytes; /* bytes mapped, unmapped or flushed */
	__u64 pages; /* page-table entries (driver records), pages flushed; else 0 */
};

/* The counting fast path: IT_AGG_SLOTS slots, direct-mapped by it_agg_slot_of(key), each naming
 * one class (agg_slot_keys, written by user space alone) and counting it per CPU
 * (agg_slot_counts, written by the programs alone). An array lookup is an index, far cheaper
 * than hashing and comparing the key in the per-CPU hash. A class is counted in the hash until
 * user space, at a flush, publishes it in its free slot: the key with ready 0, then again with
 * ready 1 (the second write changes no byte of the key, and x86 keeps stores in order, so a program
 * never sees a ready slot with a key half written). A slot, once published, names its class for
 * the rest of the capture; a class whose slot another holds stays in the hash. */
#define IT_AGG_SLOTS 256

struct it_agg_slot_key {
	struct it_agg_key key;
	__u64 ready; /* 1: key is whole and counted in agg_slot_counts */
};

/* The slot of a class: a multiplicative hash of the key's words, its top 8 bits. */
static inline __u32 it_agg_slot_of(const struct it_agg_key *k)
{
	const __u64 golden = 0x9e3779b97f4a7c15ull;
	__u64 h = k->domain ^ k->pgsize * golden ^
		  ((__u64)k->op << 48 | (__u64)k->size_log2 << 40 | (__u64)k->align_log2 << 32);

	return (__u32)((h * golden) >> 56) & (IT_AGG_SLOTS - 1);
}

/* Page-table snapshots (bpf/snapshot.bpf.c): the walk of one domain's table, run a slice at a
 * time from a kprobe on iommu_group_show_type, which the tool triggers by reading the group's
 * "type" file; leaves come out as runs of one page size, contiguous in IOVA and physical address,
 * with the same permissions. */
#define IT_SNAP_MAX_LEVELS 5
enum it_snap_domain_kind {
	IT_SNAP_TRANSLATED = 1, /* a table was read */
	IT_SNAP_IDENTITY, /* passthrough: no table */
	IT_SNAP_BLOCKED, /* no DMA: no table */
	IT_SNAP_UNREADABLE, /* paging, but in a format this walker does not read */
	IT_SNAP_NO_DOMAIN, /* the group has no domain */
};

/* Why a walk stopped short */
enum it_snap_error {
	IT_SNAP_OK = 0,
	IT_SNAP_READ_FAILED, /* a table entry could not be read */
	IT_SNAP_DOMAIN_CHANGED, /* the group's domain is another one than when the walk began */
	IT_SNAP_BAD_LEVELS, /* the domain's address width gives no level count the walker knows */
};

/* The table format a walk read */
enum it_snap_format {
	IT_SNAP_FORMAT_VTD =
		1, /* struct dmar_domain pgd and agaw (the legacy intel-iommu driver) */
	IT_SNAP_FORMAT_VTD_PT, /* the generic page table's vtdss (or x86_64) in struct dmar_domain */
};

/* The change counters of a walk (map_seq's keys) */
enum it_snap_seq { IT_SNAP_SEQ_STARTED, IT_SNAP_SEQ_ENDED, IT_SNAP_SEQ_LOST };

/* What the walk is asked to do, set by user space before each slice */
enum it_snap_command { IT_SNAP_START = 1, IT_SNAP_CONTINUE };

struct it_snap_run {
	__u64 iova, phys, pgsize, count;
	__u32 level; /* 1: 4 KiB leaves */
	__u32 perms; /* bit 0 read, bit 1 write */
};

/* The walk's state, one array element; user space reads the summary fields */
struct it_snap_walk {
	/* set by user space */
	__u32 command; /* enum it_snap_command */
	__u32 budget; /* table entries looked at per slice */
	/* set by the walk */
	__u64 domain, group; /* kernel pointers: identities only */
	__u64 seq_started, seq_ended, seq_lost; /* the change counters when the walk began */
	__u64 in_flight_at_start; /* driver calls into the domain writing when the walk began */
	__u64 direct_map; /* page_offset_base: a table's physical address plus it is its address */
	__u32 kind; /* enum it_snap_domain_kind */
	__u32 format; /* enum it_snap_format, when translated */
	__u32 domain_type; /* iommu_domain.type */
	__u64 pgsize_bitmap;
	__u32 top, done, error; /* top: the level count; error: enum it_snap_error */
	__u32 level; /* the level being read */
	/* by level, 1 to IT_SNAP_MAX_LEVELS (8 slots: an index masked with 7 is in bounds) */
	__u64 table[8]; /* physical address of each level's table */
	__u64 base[8]; /* IOVA of each level's table's first entry */
	__u32 idx[8]; /* next entry at each level */
	__u64 entries, leaves, runs, tables,
		dropped; /* dropped: runs the ring buffer had no room for */
	struct it_snap_run open; /* the run being extended; count 0: none */
};

#endif
