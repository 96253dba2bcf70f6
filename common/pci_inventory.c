/* Reads /sys/bus/pci/devices/BDF: ids, driver, IOMMU group and unit, NUMA node, BARs. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/array.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/pci_inventory.h"

/* Resource flags of include/linux/ioport.h (IORESOURCE_*), as the 'resource' file shows them. */
#define PCI_RES_IO 0x00000100ull
#define PCI_RES_MEM 0x00000200ull
#define PCI_RES_PREFETCH 0x00002000ull
#define PCI_RES_MEM_64 0x00100000ull
#define PCI_RES_DISABLED 0x10000000ull
#define PCI_RES_UNSET 0x20000000ull

/* The resource file has one line per struct resource of the device: 6 BARs, the ROM, bridge
 * windows and SR-IOV BARs, each "0x%016llx 0x%016llx 0x%016llx\n" (57 bytes): 17 lines or so. */
#define RESOURCE_FILE_MAX 4096

/* Splits the next line off *text into line; false at the end. A line that does not fit comes
 * back empty, which no parser accepts. */
static bool next_line(const char **text, char *line, size_t len)
{
	const char *nl;
	size_t n;

	if (!**text)
		return false;
	nl = strchr(*text, '\n');
	n = nl ? (size_t)(nl - *text) : strlen(*text);
	if (n >= len)
		n = 0;
	memcpy(line, *text, n);
	line[n] = '\0';
	*text = nl ? nl + 1 : *text + strlen(*text);
	return true;
}

/* "0xstart 0xend 0xflags" separated by single spaces */
static bool parse_resource_line(char *line, uint64_t *start, uint64_t *end, uint64_t *flags)
{
	char *second = strchr(line, ' ');
	char *third = second ? strchr(second + 1, ' ') : NULL;

	if (!third)
		return false;
	*second++ = '\0';
	*third++ = '\0';
	return !sysfs_parse_hex(line, start) && !sysfs_parse_hex(second, end) &&
	       !sysfs_parse_hex(third, flags);
}

void pci_parse_resources(const char *text, const char *path, struct pci_device *dev)
{
	char line[128];

	dev->n_bars = 0;
	for (unsigned index = 0; index < PCI_NUM_BARS && next_line(&text, line, sizeof(line));
	     index++) {
		struct pci_bar *bar = &dev->bars[dev->n_bars];
		uint64_t start, end, flags;

		if (!parse_resource_line(line, &start, &end, &flags)) {
			log_warn("%s: BAR%u line malformed; BAR skipped", path, index);
			continue;
		}
		if (!(flags & (PCI_RES_IO | PCI_RES_MEM)))
			continue;
		if ((flags & PCI_RES_IO) && (flags & PCI_RES_MEM)) {
			log_warn("%s: BAR%u is both I/O and memory; BAR skipped", path, index);
			continue;
		}
		if (flags & PCI_RES_IO) {
			log_debug("%s: BAR%u is an I/O-port BAR; not recorded", path, index);
			continue;
		}
		if (flags & (PCI_RES_UNSET | PCI_RES_DISABLED)) {
			log_debug("%s: BAR%u is unassigned or disabled; not recorded", path, index);
			continue;
		}
		/* end is inclusive: a BAR ending at 2^64 - 1 and starting at 0 would have size
		 * 2^64, which no BAR has */
		if (end < start || (start == 0 && end == UINT64_MAX)) {
			log_warn("%s: BAR%u range 0x%llx-0x%llx is impossible; BAR skipped", path,
				 index, (unsigned long long)start, (unsigned long long)end);
			continue;
		}
		bar->index = index;
		bar->start = start;
		bar->size = end - start + 1;
		bar->is_64bit = flags & PCI_RES_MEM_64;
		bar->prefetchable = flags & PCI_RES_PREFETCH;
		dev->n_bars++;
	}
}

/* A hex id file (vendor, device, class) no larger than max; -1 (reported) when unusable. */
static int read_id(const char *dev_dir, const char *file, uint64_t max)
{
	char path[PATH_MAX];
	uint64_t v;

	if (sysfs_path(path, sizeof(path), dev_dir, "/%s", file)) {
		sysfs_report(dev_dir, errno);
		return -1;
	}
	if (sysfs_read_hex(path, &v)) {
		sysfs_report(path, errno);
		return -1;
	}
	if (v > max) {
		sysfs_report(path, ERANGE);
		return -1;
	}
	return (int)v;
}

/* Basename of a symlink of the device into out; "" when it is missing (normal: no driver, no
 * IOMMU) or unusable (reported). */
static void read_link(const char *dev_dir, const char *link, char *out, size_t len)
{
	char path[PATH_MAX];

	out[0] = '\0';
	if (sysfs_path(path, sizeof(path), dev_dir, "/%s", link)) {
		sysfs_report(dev_dir, errno);
		return;
	}
	if (sysfs_link_name(path, out, len)) {
		if (errno != ENOENT)
			sysfs_report(path, errno);
		out[0] = '\0';
	}
}

static int read_group(const char *dev_dir)
{
	char name[SYSFS_NAME_MAX + 1];
	long id;

	read_link(dev_dir, "iommu_group", name, sizeof(name));
	if (!name[0])
		return -1;
	if (sysfs_parse_long(name, 0, INT_MAX, &id)) {
		log_warn("%s/iommu_group: links to '%s', not a group number; left unknown", dev_dir,
			 name);
		return -1;
	}
	return (int)id;
}

static int read_numa_node(const char *dev_dir)
{
	char path[PATH_MAX];
	long node;

	if (sysfs_path(path, sizeof(path), dev_dir, "/numa_node")) {
		sysfs_report(dev_dir, errno);
		return -1;
	}
	/* -1 is the kernel's "no node"; NODES_SHIFT allows at most 1024 nodes */
	if (sysfs_read_long(path, -1, 1023, &node)) {
		sysfs_report(path, errno);
		return -1;
	}
	return (int)node;
}

static void read_bars(const char *dev_dir, struct pci_device *dev)
{
	char path[PATH_MAX], text[RESOURCE_FILE_MAX];

	dev->n_bars = 0;
	if (sysfs_path(path, sizeof(path), dev_dir, "/resource")) {
		sysfs_report(dev_dir, errno);
		return;
	}
	if (sysfs_read_text(path, text, sizeof(text))) {
		sysfs_report(path, errno);
		return;
	}
	pci_parse_resources(text, path, dev);
}

/* The unit translating for the device. On the AMD IOMMU's own PCI function, 'iommu' is not that
 * link but a directory holding the unit it implements (iommu/ivhd0): no translating unit. */
static void read_iommu_unit(const char *dev_dir, struct pci_device *dev)
{
	char path[PATH_MAX];
	struct stat st;

	if (sysfs_path(path, sizeof(path), dev_dir, "/iommu") == 0 && lstat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		log_debug("%s: a directory: this device is an IOMMU unit itself", path);
		return;
	}
	read_link(dev_dir, "iommu", dev->iommu, sizeof(dev->iommu));
}

static void read_device(const char *devices_dir, const char *bdf, struct pci_device *dev)
{
	char dir[PATH_MAX];

	memset(dev, 0, sizeof(*dev));
	strcpy(dev->bdf, bdf);
	dev->vendor_id = dev->device_id = dev->class_code = -1;
	dev->iommu_group = dev->numa_node = -1;
	if (sysfs_path(dir, sizeof(dir), devices_dir, "/%s", bdf)) {
		sysfs_report(devices_dir, errno);
		return;
	}
	dev->vendor_id = read_id(dir, "vendor", 0xffff);
	dev->device_id = read_id(dir, "device", 0xffff);
	dev->class_code = read_id(dir, "class", 0xffffff);
	read_link(dir, "driver", dev->driver, sizeof(dev->driver));
	dev->iommu_group = read_group(dir);
	read_iommu_unit(dir, dev);
	dev->numa_node = read_numa_node(dir);
	read_bars(dir, dev);
}

static int compare_devices(const void *a, const void *b)
{
	/* canonical BDFs have fixed width, so byte order is address order */
	return strcmp(((const struct pci_device *)a)->bdf, ((const struct pci_device *)b)->bdf);
}

struct device_list {
	struct pci_device *items;
	size_t n;
};

static int add_device(const char *devices_dir, const char *name, void *ctx)
{
	struct device_list *list = ctx;
	struct pci_device *grown;
	char bdf[13];

	/* only the kernel's spelling, so that two entries never name one device */
	if (parse_bdf(name, bdf) || strcmp(bdf, name)) {
		log_warn("%s: skipping an entry that is not a dddd:bb:dd.f address", devices_dir);
		return 0;
	}
	grown = array_grow(list->items, list->n, sizeof(*grown));
	if (!grown)
		return -1;
	list->items = grown;
	read_device(devices_dir, bdf, &grown[list->n++]);
	return 0;
}

int pci_devices_read(const char *root, struct pci_device **devices, size_t *n)
{
	struct device_list list = { 0 };

	*devices = NULL;
	*n = 0;
	if (sysfs_for_each_entry(root, "/sys/bus/pci/devices", "PCI devices", add_device, &list)) {
		free(list.items);
		return -1;
	}
	if (list.n)
		qsort(list.items, list.n, sizeof(*list.items), compare_devices);
	*devices = list.items;
	*n = list.n;
	return 0;
}
