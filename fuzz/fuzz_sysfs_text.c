/* Fuzz target: the parsers of text iommutrace reads from sysfs and procfs: a PCI device's
 * 'resource' file, the AMD IOMMU 'features' file and the kernel command line. The first byte
 * picks the kernel release the AMD parser is told (none, 5.x, 6.1, 6.7). */
#include <stdio.h>
#include "common/amd_cap.h"
#include "common/boot_options.h"
#include "common/pci_inventory.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const releases[] = { NULL, "5.15.0-1-amd64", "6.1.0-18-amd64",
						"6.7.12-amd64" };
	struct boot_option *opts = NULL;
	struct pci_device dev = { 0 };
	uint64_t efr;
	size_t n = 0;
	char *s;

	if (!size)
		return 0;
	s = fuzz_string(data + 1, size - 1);
	if (!s)
		return 0;
	pci_parse_resources(s, "fuzz/resource", &dev);
	amd_features_efr(s, releases[data[0] % 4], &efr);
	if (!boot_options_parse(s, &opts, &n))
		boot_options_free(opts, n);
	free(s);
	return 0;
}
