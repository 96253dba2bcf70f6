// SPDX-License-Identifier: GPL-2.0
/* MAP_RESOURCE: a peer's BAR range mapped for the importer with dma_map_resource(), the call a GPU
 * driver's dma-buf exporter makes for a peer importer (NVIDIA's for BAR1) and BaM makes. */
#include "iommutrace_probe.h"
#include <linux/dma-mapping.h>

/* Map LENGTH_BYTES at PHYS (a range of PEER's BAR, checked by probe_bar_phys()) for m->importer;
 * on success M holds PEER's reference until bar_map_undo(). */
int bar_map_map(struct probe_mapping *m, struct pci_dev *peer, phys_addr_t phys,
		u64 length_bytes)
{
	dma_addr_t dma_addr;
	int err;

	dma_addr = dma_map_resource(&m->importer->dev, phys, length_bytes, DMA_BIDIRECTIONAL, 0);
	err = dma_mapping_error(&m->importer->dev, dma_addr);
	if (err) {
		pr_info("dma_map_resource of %#llx bytes at %pa for %s failed: %d\n", length_bytes,
			&phys, pci_name(m->importer), err);
		return err;
	}
	m->kind = PROBE_BAR_MAP;
	m->bar.peer = peer;
	m->bar.dma_addr = dma_addr;
	m->bar.length_bytes = length_bytes;
	pr_debug("%s: %#llx bytes of %s at %pa mapped at %pad\n", pci_name(m->importer),
		 length_bytes, pci_name(peer), &phys, &dma_addr);
	return 0;
}

void bar_map_undo(struct probe_mapping *m)
{
	dma_unmap_resource(&m->importer->dev, m->bar.dma_addr, m->bar.length_bytes,
			   DMA_BIDIRECTIONAL, 0);
	pci_dev_put(m->bar.peer);
}
