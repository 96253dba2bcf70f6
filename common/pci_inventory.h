/* The PCI devices of the machine (/sys/bus/pci/devices/BDF): ids, driver, IOMMU group and unit,
 * NUMA node, and memory BARs.
 *
 * BARs are the first six lines of the 'resource' file ("0xstart 0xend 0xflags"). Only memory
 * BARs are kept: an I/O-port BAR is neither a DMA target nor an mmap window, and the bars table
 * has no column to tell one apart, so I/O BARs are skipped everywhere (inventory, database,
 * `iommutrace devices`), with a debug line. Empty, unassigned (IORESOURCE_UNSET) and disabled
 * BARs are skipped too. */
#ifndef IOMMUTRACE_PCI_INVENTORY_H
#define IOMMUTRACE_PCI_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/sysfs_file.h"

#define PCI_NUM_BARS 6

struct pci_bar {
	unsigned index; /* 0..5 */
	uint64_t start; /* CPU physical address */
	uint64_t size;
	bool is_64bit;
	bool prefetchable;
};

struct pci_device {
	char bdf[13]; /* "0000:00:04.0" */
	int vendor_id; /* -1 when unknown */
	int device_id; /* -1 when unknown */
	int class_code; /* 24-bit class, subclass, prog-if; -1 when unknown */
	char driver[SYSFS_NAME_MAX + 1]; /* "" when no driver is bound (or unreadable) */
	int iommu_group; /* -1 when none */
	char iommu[SYSFS_NAME_MAX + 1]; /* unit translating for it ("dmar0"); "" when none */
	int numa_node; /* -1 when none or unknown */
	unsigned n_bars;
	struct pci_bar bars[PCI_NUM_BARS]; /* in index order */
};

/**
 * pci_devices_read() - Read every device under ROOT/sys/bus/pci/devices, sorted by BDF.
 * @devices: free with free()
 *
 * Entries whose name is not a canonical "dddd:bb:dd.f" address are skipped with a warning.
 * Unreadable or malformed files leave their fields unknown, with a warning.
 *
 * Return: 0, or -1 when out of memory (logged).
 */
int pci_devices_read(const char *root, struct pci_device **devices, size_t *n);

/**
 * pci_parse_resources() - Parse the text of a 'resource' file into dev->bars.
 * @path: for messages
 *
 * Malformed lines are skipped with a warning.
 */
void pci_parse_resources(const char *text, const char *path, struct pci_device *dev);

#endif
