/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by the BPF programs and the probe plan: how many fentry/kprobe slots each role has, the
 * kinds of IOMMU core call a domain slot can stand for, and the tracepoint indexes. */
#ifndef IOMMUTRACE_PROBE_SLOTS_H
#define IOMMUTRACE_PROBE_SLOTS_H

#define IT_DOMAIN_SLOTS 12
#define IT_MAP_SLOTS 4
#define IT_UNMAP_SLOTS 4
#define IT_RANGE_SLOTS 3
#define IT_DEVICE_SLOTS 8

enum it_domain_call {
	IT_CALL_NONE = 0,
	IT_CALL_MAP,
	IT_CALL_UNMAP,
	IT_CALL_ATTACH,
};

enum it_tracepoint {
	IT_TP_MAP,
	IT_TP_UNMAP,
	IT_TP_ATTACH,
	IT_TP_GROUP_ADD,
	IT_TP_GROUP_REMOVE,
	IT_TP_FAULT,
	IT_TP_QI_SUBMIT,
	IT_TP_CACHE_TAG_FLUSH,
	IT_TP_CACHE_TAG_FLUSH_NP,
	IT_TP_COUNT,
};

#endif
