/* The probe module's ioctls (see probe_module.h and probes/kmod/iommutrace_probe_uapi.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "common/log.h"
#include "kmod/iommutrace_probe_uapi.h"
#include "probe_module.h"

int probe_module_open(struct probe_module *m)
{
	m->fd = open(IOMMUTRACE_PROBE_DEVICE, O_RDWR | O_CLOEXEC);
	if (m->fd >= 0)
		return 0;
	if (errno == ENOENT)
		log_error("%s does not exist: the iommutrace probe module is not loaded (build it with "
			  "'make -C probes/kmod KDIR=/lib/modules/$(uname -r)/build', then insmod "
			  "probes/kmod/iommutrace_probe.ko)", IOMMUTRACE_PROBE_DEVICE);
	else
		log_error("cannot open %s: %s", IOMMUTRACE_PROBE_DEVICE, strerror(errno));
	return -1;
}

/* "DDDD:BB:DD.F" (validated by the caller) as the module takes it. */
static void pci_addr(const char *bdf, struct iommutrace_probe_pci_addr *a)
{
	unsigned domain = 0, bus = 0, dev = 0, fn = 0;

	sscanf(bdf, "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
	*a = (struct iommutrace_probe_pci_addr){ .domain = domain, .bus = (__u8)bus,
						 .device = (__u8)dev, .function = (__u8)fn };
}

int probe_module_map_resource(struct probe_module *m, const char *importer, const char *peer,
			      unsigned bar_index, uint64_t offset, uint64_t size, uint64_t *phys,
			      uint64_t *dma, uint32_t *handle)
{
	struct iommutrace_probe_map_resource r = { .bar_index = bar_index,
						   .bar_offset_bytes = offset,
						   .length_bytes = size };

	pci_addr(importer, &r.importer);
	pci_addr(peer, &r.peer);
	if (ioctl(m->fd, IOMMUTRACE_PROBE_MAP_RESOURCE, &r)) {
		log_error("dma_map_resource of %#llx bytes at BAR%u+%#llx of %s for %s: %s%s",
			  (unsigned long long)size, bar_index, (unsigned long long)offset, peer,
			  importer, strerror(errno),
			  errno == EINVAL ? " (the kernel log has the module's reason: dmesg)" : "");
		return -1;
	}
	*phys = r.phys_addr;
	*dma = r.dma_addr;
	*handle = r.handle;
	return 0;
}

int probe_module_release(struct probe_module *m, uint32_t handle)
{
	struct iommutrace_probe_release r = { .handle = handle };

	if (ioctl(m->fd, IOMMUTRACE_PROBE_RELEASE, &r)) {
		log_error("releasing probe mapping %u: %s", handle, strerror(errno));
		return -1;
	}
	return 0;
}

void probe_module_close(struct probe_module *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}
