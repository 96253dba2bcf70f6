// SPDX-License-Identifier: GPL-2.0
/* IMPORT_DMABUF: a dma-buf attached and mapped on behalf of a PCI device, as a peer-to-peer capable
 * dynamic importer (an RDMA NIC, a GPU) attaches it, so that its pages or BAR land in that device's
 * IOMMU domain. */
#include "iommutrace_probe.h"
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* The exporter is about to move or revoke the buffer: a dynamic importer must stop using its
 * mapping before returning (vfio-pci waits for that before it revokes a BAR), so unmap it now, with
 * dmabuf->resv held as the exporter calls this. */
static void dmabuf_import_invalidate(struct dma_buf_attachment *attach)
{
	struct probe_mapping *m = attach->importer_priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (!m->import.sgt)
		return;
	dma_buf_unmap_attachment(attach, m->import.sgt, DMA_BIDIRECTIONAL);
	WRITE_ONCE(m->import.sgt, NULL);
	pr_info("%s: the exporter %s moved or revoked an imported dma-buf: unmapped\n",
		pci_name(m->importer), attach->dmabuf->exp_name);
}

static const struct dma_buf_attach_ops dmabuf_import_ops = {
	.allow_peer2peer = true,
	/* renamed by ef246da8e63c ("dma-buf: Rename .move_notify() callback to a clearer
	 * identifier", 7.1); Kbuild probes which name these headers have */
#ifdef IOMMUTRACE_HAVE_INVALIDATE_MAPPINGS
	.invalidate_mappings = dmabuf_import_invalidate,
#else
	.move_notify = dmabuf_import_invalidate,
#endif
};

/* A copy of the mapping's DMA segments, so that GET_SEGMENTS reads them without dmabuf->resv (which
 * ranks below mmap_lock and so cannot be held across copy_to_user()). */
static int snapshot_segments(struct dmabuf_import *imp)
{
	struct scatterlist *sg;
	unsigned int i;

	imp->segments = kvmalloc_array(imp->sgt->nents, sizeof(*imp->segments), GFP_KERNEL);
	if (!imp->segments)
		return -ENOMEM;
	for_each_sgtable_dma_sg(imp->sgt, sg, i) {
		imp->segments[i].dma_addr = sg_dma_address(sg);
		imp->segments[i].length_bytes = sg_dma_len(sg);
	}
	imp->segments_count = imp->sgt->nents;
	return 0;
}

/* Attach the dma-buf DMABUF_FD for m->importer and map it; on success M holds a reference to the
 * dma-buf and the attachment until dmabuf_import_undo(). */
int dmabuf_import_map(struct probe_mapping *m, int dmabuf_fd)
{
	struct dmabuf_import *imp = &m->import;
	struct sg_table *sgt;
	int err;

	m->kind = PROBE_DMABUF_IMPORT;
	imp->dmabuf = dma_buf_get(dmabuf_fd);
	if (IS_ERR(imp->dmabuf)) {
		pr_info("fd %d is not a dma-buf\n", dmabuf_fd);
		return PTR_ERR(imp->dmabuf);
	}
	imp->attach = dma_buf_dynamic_attach(imp->dmabuf, &m->importer->dev, &dmabuf_import_ops, m);
	if (IS_ERR(imp->attach)) {
		err = PTR_ERR(imp->attach);
		/* vfio-pci refuses a peer it has no P2PDMA path to (no shared upstream bridge and a
		 * host bridge off the whitelist, as QEMU's q35) */
		pr_info("%s: the exporter %s refused the attachment: %d\n", pci_name(m->importer),
			imp->dmabuf->exp_name, err);
		goto put;
	}
	err = dma_resv_lock_interruptible(imp->dmabuf->resv, NULL);
	if (err)
		goto detach;
	sgt = dma_buf_map_attachment(imp->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		err = PTR_ERR(sgt);
		pr_info("%s: mapping the %s dma-buf failed: %d\n", pci_name(m->importer),
			imp->dmabuf->exp_name, err);
	} else {
		imp->sgt = sgt;
		err = snapshot_segments(imp);
		if (err) {
			dma_buf_unmap_attachment(imp->attach, sgt, DMA_BIDIRECTIONAL);
			imp->sgt = NULL;
		}
	}
	dma_resv_unlock(imp->dmabuf->resv);
	if (err)
		goto detach;
	pr_debug("%s: imported %zu bytes from %s as %u DMA segments\n", pci_name(m->importer),
		 imp->dmabuf->size, imp->dmabuf->exp_name, imp->segments_count);
	return 0;

detach:
	dma_buf_detach(imp->dmabuf, imp->attach);
put:
	dma_buf_put(imp->dmabuf);
	return err;
}

/* Copy the import's DMA segments from FIRST on, at most CAPACITY of them, to user memory at
 * SEGMENTS_PTR. -ESTALE once the exporter has invalidated the mapping. */
int dmabuf_import_copy_segments(const struct probe_mapping *m, u32 first, u32 capacity,
				u64 segments_ptr)
{
	const struct dmabuf_import *imp = &m->import;
	u32 n;

	/* a lockless look: the segments stay readable after an invalidation, only stale */
	if (!READ_ONCE(imp->sgt))
		return -ESTALE;
	if (first > imp->segments_count) {
		pr_info("segment %u asked of an import of %u\n", first, imp->segments_count);
		return -EINVAL;
	}
	n = min(capacity, imp->segments_count - first);
	if (copy_to_user(u64_to_user_ptr(segments_ptr), imp->segments + first,
			 array_size(n, sizeof(*imp->segments))))
		return -EFAULT;
	return 0;
}

void dmabuf_import_undo(struct probe_mapping *m)
{
	struct dmabuf_import *imp = &m->import;

	dma_resv_lock(imp->dmabuf->resv, NULL);
	if (imp->sgt)
		dma_buf_unmap_attachment(imp->attach, imp->sgt, DMA_BIDIRECTIONAL);
	imp->sgt = NULL;
	dma_resv_unlock(imp->dmabuf->resv);
	dma_buf_detach(imp->dmabuf, imp->attach);
	dma_buf_put(imp->dmabuf);
	kvfree(imp->segments);
}
