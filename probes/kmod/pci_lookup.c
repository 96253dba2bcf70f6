// SPDX-License-Identifier: GPL-2.0
/* The PCI devices a caller names: a function by domain:bus:device.function, and a range of one of
 * its memory BARs as the CPU physical address a DMA mapping of it starts at. */
#include "iommutrace_probe.h"
#include <linux/err.h>
#include <linux/ioport.h>
#include <linux/mm.h>

/* The device at ADDR with a reference held (pci_dev_put() it), or ERR_PTR -EINVAL / -ENODEV. */
struct pci_dev *probe_pci_get(const struct iommutrace_probe_pci_addr *addr)
{
	struct pci_dev *pdev;

	if (addr->pad || addr->device > 31 || addr->function > 7 || addr->domain > INT_MAX) {
		pr_info("bad PCI address " PROBE_BDF_FMT " (pad %u)\n", PROBE_BDF_ARGS(addr),
			addr->pad);
		return ERR_PTR(-EINVAL);
	}
	pdev = pci_get_domain_bus_and_slot(addr->domain, addr->bus,
					   PCI_DEVFN(addr->device, addr->function));
	if (!pdev) {
		pr_info("no PCI device " PROBE_BDF_FMT "\n", PROBE_BDF_ARGS(addr));
		return ERR_PTR(-ENODEV);
	}
	return pdev;
}

/* The CPU physical address of [offset_bytes, +length_bytes) inside PEER's BAR bar_index, which must
 * be an assigned memory BAR holding the whole range; offset and length page-aligned, length
 * nonzero. Anything else is refused with -EINVAL, so that no caller maps an arbitrary address. */
int probe_bar_phys(struct pci_dev *peer, u32 bar_index, u64 offset_bytes, u64 length_bytes,
		   phys_addr_t *phys)
{
	resource_size_t bar_bytes;
	unsigned long flags;

	if (bar_index >= PCI_STD_NUM_BARS) {
		pr_info("%s: no BAR %u\n", pci_name(peer), bar_index);
		return -EINVAL;
	}
	flags = pci_resource_flags(peer, bar_index);
	bar_bytes = pci_resource_len(peer, bar_index);
	if (!(flags & IORESOURCE_MEM) || (flags & IORESOURCE_UNSET) || !bar_bytes) {
		pr_info("%s: BAR %u is not an assigned memory BAR\n", pci_name(peer), bar_index);
		return -EINVAL;
	}
	if (!length_bytes || !IS_ALIGNED(length_bytes, PAGE_SIZE) ||
	    !IS_ALIGNED(offset_bytes, PAGE_SIZE)) {
		pr_info("%s: BAR %u offset %#llx length %#llx: the range must be nonzero and page-aligned\n",
			pci_name(peer), bar_index, offset_bytes, length_bytes);
		return -EINVAL;
	}
	if (offset_bytes > bar_bytes || length_bytes > bar_bytes - offset_bytes) {
		pr_info("%s: BAR %u offset %#llx length %#llx runs past the BAR's %#llx bytes\n",
			pci_name(peer), bar_index, offset_bytes, length_bytes, (u64)bar_bytes);
		return -EINVAL;
	}
	*phys = pci_resource_start(peer, bar_index) + offset_bytes;
	/* dma_map_resource() is for memory without struct pages and WARNs on a pfn_valid()
	 * address: a BAR given struct pages (pci_p2pdma_add_resource()) is its exporter's to map */
	if (pfn_valid(PHYS_PFN(*phys))) {
		pr_info("%s: BAR %u at %pa has struct pages: not mapping it as a resource\n",
			pci_name(peer), bar_index, phys);
		return -EINVAL;
	}
	return 0;
}
