/* Reads the whole machine inventory under a root directory. */
#include <stdlib.h>
#include <string.h>
#include "common/inventory.h"

int inventory_read(const char *root, struct inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	if (!root)
		root = "/";
	if (boot_options_read(root, &inv->boot_options, &inv->n_boot_options) ||
	    iommu_units_read(root, &inv->iommus, &inv->n_iommus) ||
	    pci_devices_read(root, &inv->devices, &inv->n_devices) ||
	    iommu_groups_read(root, &inv->groups, &inv->n_groups) ||
	    gpu_bar1_read(inv->devices, inv->n_devices, !strcmp(root, "/"), &inv->gpus,
			  &inv->n_gpus)) {
		inventory_free(inv);
		return -1;
	}
	return 0;
}

void inventory_free(struct inventory *inv)
{
	boot_options_free(inv->boot_options, inv->n_boot_options);
	free(inv->iommus);
	free(inv->devices);
	free(inv->groups);
	free(inv->gpus);
	memset(inv, 0, sizeof(*inv));
}
