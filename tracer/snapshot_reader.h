/* Reading the IOMMU's live translation tables for snapshots: loads bpf/snapshot.bpf.c (a kprobe on
 * iommu_group_show_type and two iommu:* tracepoint counters), and walks one IOMMU group's current
 * domain at a time by reading the group's sysfs "type" file, a slice of table entries per read.
 * Functions log one line on failure and return -1. */
#ifndef IOMMUTRACE_SNAPSHOT_READER_H
#define IOMMUTRACE_SNAPSHOT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/iommutrace.h"

struct snapshot_reader;

/* What one group's walk found. */
struct snapshot_domain {
	uint64_t domain; /* the kernel's pointer, an identity only; 0: no domain */
	enum it_snap_domain_kind kind;
	enum it_snap_format format; /* of a translated domain's table */
	uint32_t domain_type; /* iommu_domain.type */
	uint64_t pgsize_bitmap;
	unsigned levels; /* of the table read */
	uint64_t entries, leaves, tables;
	struct it_snap_run *runs; /* leaves as runs, in IOVA order; the caller frees */
	size_t nruns;
	/* false: maps or unmaps ran during every attempt, so the table may have changed while it
	 * was read; the runs are those of the last attempt */
	bool consistent;
	/* the maps and unmaps counted were the domain's own (the VT-d driver's calls); false: any
	 * domain's (the iommu:* tracepoints), so an inconsistent read may be a quiet one */
	bool changes_by_domain;
	unsigned attempts;
};

/**
 * snapshot_reader_open() - Load and attach the walk.
 * @vtd: the machine's IOMMU is Intel VT-d: paging domains are read as its tables; otherwise
 *       they are reported IT_SNAP_UNREADABLE, unread
 *
 * Return: the reader, or NULL (said: no kprobe on iommu_group_show_type, no BTF, ...).
 */
struct snapshot_reader *snapshot_reader_open(bool vtd);
/**
 * snapshot_reader_read() - Walk the current domain of IOMMU group @group_id.
 * @root: ROOT/sys is where the group's type file is (as for sysfs_path(): NULL, the live system)
 * @d: filled in; d->runs is allocated (free it), NULL when there are none
 *
 * A walk during which maps or unmaps ran is tried again, up to three times.
 *
 * Return: 0, or -1 (said) when the table could not be read: an entry that does not read, the
 * group's domain replaced during the walk, a level count it does not know.
 */
int snapshot_reader_read(struct snapshot_reader *r, const char *root, int group_id,
			 struct snapshot_domain *d);
void snapshot_reader_close(struct snapshot_reader *r);

/* "translated", "identity", "blocked", "unreadable", "none" */
const char *snapshot_kind_name(enum it_snap_domain_kind kind);
/* "vtd" (the legacy intel-iommu tables), "vtd-pt" (the generic page table's) */
const char *snapshot_format_name(enum it_snap_format format);

#endif
