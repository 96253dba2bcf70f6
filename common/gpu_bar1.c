/* NVIDIA GPUs' BAR1 from the inventory, and its use from NVML (see gpu_bar1.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/gpu_bar1.h"
#include "common/log.h"
#include "common/nvml.h"

bool gpu_is_nvidia(const struct pci_device *d)
{
	return d->vendor_id == PCI_VENDOR_NVIDIA && d->class_code >= 0 &&
	       (d->class_code >> 16) == 0x03;
}

static void take_bar1(const struct pci_device *d, struct gpu_bar1 *g)
{
	for (unsigned i = 0; i < d->n_bars; i++) {
		if (d->bars[i].index != 1)
			continue;
		g->assigned = true;
		g->start = d->bars[i].start;
		g->size = d->bars[i].size;
	}
}

/* Each GPU's BAR1 use, or why there is none; NVML is opened once for all. */
static void ask_nvml(struct gpu_bar1 *gpus, size_t n)
{
	char err[sizeof(gpus[0].nvml_status)];
	struct nvml *nvml = nvml_open(err, sizeof(err));

	for (size_t i = 0; i < n; i++) {
		struct gpu_bar1 *g = &gpus[i];
		struct nvml_bar1 b;

		if (!nvml) {
			snprintf(g->nvml_status, sizeof(g->nvml_status), "%s", err);
		} else if (nvml_bar1(nvml, g->bdf, &b, g->nvml_status, sizeof(g->nvml_status)) ==
			   0) {
			g->have_nvml = true;
			g->nvml_total = b.total;
			g->nvml_used = b.used;
			g->nvml_free = b.free;
			snprintf(g->nvml_status, sizeof(g->nvml_status), "ok");
		}
		if (!g->have_nvml)
			log_debug("%s: BAR1 use unknown: %s", g->bdf, g->nvml_status);
	}
	nvml_close(nvml);
}

int gpu_bar1_read(const struct pci_device *devices, size_t n_devices, bool query_nvml,
		  struct gpu_bar1 **gpus, size_t *n_gpus)
{
	size_t n = 0;

	*gpus = NULL;
	*n_gpus = 0;
	for (size_t i = 0; i < n_devices; i++)
		n += gpu_is_nvidia(&devices[i]);
	if (!n)
		return 0;
	*gpus = calloc(n, sizeof(**gpus));
	if (!*gpus) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < n_devices; i++) {
		struct gpu_bar1 *g = &(*gpus)[*n_gpus];

		if (!gpu_is_nvidia(&devices[i]))
			continue;
		memcpy(g->bdf, devices[i].bdf, sizeof(g->bdf));
		g->device_id = devices[i].device_id;
		take_bar1(&devices[i], g);
		snprintf(g->nvml_status, sizeof(g->nvml_status),
			 "not asked (a --root tree, not the live system)");
		(*n_gpus)++;
	}
	if (query_nvml)
		ask_nvml(*gpus, *n_gpus);
	return 0;
}
