/* SPDX-License-Identifier: GPL-2.0 */
/* Inside iommutrace_probe.ko: what one open file of /dev/iommutrace-probe has mapped, and the
 * operations each kind of mapping provides to the ioctls in main.c. */
#ifndef IOMMUTRACE_PROBE_H
#define IOMMUTRACE_PROBE_H

/* first of a source file's includes: pr_fmt must be set before printk.h is read */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/pci.h>
#include <linux/types.h>
#include "iommutrace_probe_uapi.h"

#define PROBE_BDF_FMT "%04x:%02x:%02x.%x"
#define PROBE_BDF_ARGS(a) (a)->domain, (a)->bus, (a)->device, (a)->function

/* An attachment of a dma-buf as the importer, mapped until dmabuf_import_undo(). */
struct dmabuf_import {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	/* NULL once unmapped: by dmabuf_import_undo(), or when the exporter moved the buffer.
	 * Written with dmabuf->resv held, as the exporter calls the importer's callback so. */
	struct sg_table *sgt;
	/* the DMA segments of sgt as mapped, for GET_SEGMENTS */
	struct iommutrace_probe_dma_segment *segments;
	u32 segments_count;
};

/* A BAR range of a peer mapped with dma_map_resource() until bar_map_undo(). */
struct bar_map {
	struct pci_dev *peer;
	dma_addr_t dma_addr;
	size_t length_bytes;
};

enum probe_mapping_kind {
	PROBE_DMABUF_IMPORT,
	PROBE_BAR_MAP,
};

/* One thing to undo at RELEASE or close, made on behalf of `importer` (a reference held). */
struct probe_mapping {
	enum probe_mapping_kind kind;
	struct pci_dev *importer;
	union {
		struct dmabuf_import import;
		struct bar_map bar;
	};
};

/* pci_lookup.c */
struct pci_dev *probe_pci_get(const struct iommutrace_probe_pci_addr *addr);
int probe_bar_phys(struct pci_dev *peer, u32 bar_index, u64 offset_bytes, u64 length_bytes,
		   phys_addr_t *phys);

/* dmabuf_import.c */
int dmabuf_import_map(struct probe_mapping *m, int dmabuf_fd);
int dmabuf_import_copy_segments(const struct probe_mapping *m, u32 first, u32 capacity,
				u64 segments_ptr);
void dmabuf_import_undo(struct probe_mapping *m);

/* bar_map.c */
int bar_map_map(struct probe_mapping *m, struct pci_dev *peer, phys_addr_t phys,
		u64 length_bytes);
void bar_map_undo(struct probe_mapping *m);

#endif
