/* The BAR1 aperture of each NVIDIA GPU (PCI vendor 0x10de, class display controller): where GPU
 * memory shows up for the CPU and for peer devices, and therefore the physical addresses a GPU
 * buffer has when it is mapped for an NVMe. Its place and size come from sysfs (the inventory's
 * BARs); how much of it is in use only NVML knows, which is asked when present, on the live
 * system only. */
#ifndef IOMMUTRACE_GPU_BAR1_H
#define IOMMUTRACE_GPU_BAR1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/pci_inventory.h"

#define PCI_VENDOR_NVIDIA 0x10de

struct gpu_bar1 {
	char bdf[13];
	int device_id;
	bool assigned; /* BAR1 has an address (sysfs); else start and size are 0 */
	uint64_t start, size;
	bool have_nvml; /* total, used and free come from NVML */
	uint64_t nvml_total, nvml_used, nvml_free;
	char nvml_status[160]; /* "ok", or why NVML gave nothing */
};

/**
 * gpu_is_nvidia() - Whether @d is an NVIDIA GPU: the vendor, and class 0x03 (display controller:
 * VGA or 3D controller).
 */
bool gpu_is_nvidia(const struct pci_device *d);
/**
 * gpu_bar1_read() - The GPUs among @devices, with their BAR1.
 * @query_nvml: ask NVML; else each nvml_status says it was not asked
 * @gpus: free with free()
 *
 * Return: 0, or -1 when out of memory (logged).
 */
int gpu_bar1_read(const struct pci_device *devices, size_t n_devices, bool query_nvml,
		  struct gpu_bar1 **gpus, size_t *n_gpus);

#endif
