/* The machine inventory stored with each session and shown by `iommutrace devices`: the IOMMU
 * options the kernel was booted with, the IOMMU units and their capabilities, the PCI devices
 * with their BARs, the IOMMU groups with their default domain types, and each NVIDIA GPU's BAR1
 * (with its use from NVML, asked on the live system only).
 *
 * Everything is read under a root directory ("/" on the live system; tests build fixture trees)
 * and needs no privilege. A missing part (no IOMMU, no PCI) is an empty list, not an error; a
 * malformed file leaves its field unknown with a warning (see the readers' headers). */
#ifndef IOMMUTRACE_INVENTORY_H
#define IOMMUTRACE_INVENTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "common/boot_options.h"
#include "common/gpu_bar1.h"
#include "common/iommu_groups.h"
#include "common/iommu_units.h"
#include "common/pci_inventory.h"

struct inventory {
	struct boot_option *boot_options;
	size_t n_boot_options;
	struct iommu_unit *iommus;
	size_t n_iommus;
	struct pci_device *devices;
	size_t n_devices;
	struct iommu_group *groups;
	size_t n_groups;
	struct gpu_bar1 *gpus;
	size_t n_gpus;
};

/**
 * inventory_read() - Fill *@inv from @root.
 * @root: NULL means "/"
 *
 * Release @inv with inventory_free() in either case.
 *
 * Return: 0, or -1 when out of memory (logged), with *@inv then empty.
 */
int inventory_read(const char *root, struct inventory *inv);
void inventory_free(struct inventory *inv);

/**
 * inventory_store() - Insert @inv as rows of @session_id into boot_options, iommus, devices, bars,
 * iommu_groups and gpu_bar1, with prepared statements.
 *
 * Registers and the page-size bitmap are stored as SQLite's signed 64-bit INTEGER: a value with
 * bit 63 set reads back negative (cast to uint64_t, or printf('%x') in SQL, gives the register).
 *
 * Context: runs inside the caller's transaction: it neither begins nor commits one, so a failure
 * leaves the caller to roll back.
 * Return: 0, or -1 with the database error logged.
 */
int inventory_store(sqlite3 *db, int64_t session_id, const struct inventory *inv);

#endif
