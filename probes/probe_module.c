/* The probe module's ioctls (see probe_module.h and probes/kmod/iommutrace_probe_uapi.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "common/log.h"
#include "probes/kmod/iommutrace_probe_uapi.h"
#include "probes/probe_module.h"

int probe_module_open(struct probe_module *m)
{
	m->fd = open(IOMMUTRACE_PROBE_DEVICE, O_RDWR | O_CLOEXEC);
	if (m->fd >= 0)
		return 0;
	if (errno == ENOENT)
		log_error("%s does not exist: the iommutrace probe module is not loaded (build it with "
			  "'make -C probes/kmod KDIR=/lib/modules/$(uname -r)/build', then insmod "
			  "probes/kmod/iommutrace_probe.ko)",
			  IOMMUTRACE_PROBE_DEVICE);
	else
		log_error("cannot open %s: %s", IOMMUTRACE_PROBE_DEVICE, strerror(errno));
	return -1;
}

/* "DDDD:BB:DD.F" (validated by the caller) as the module takes it. */
static void pci_addr(const char *bdf, struct iommutrace_probe_pci_addr *a)
{
	unsigned domain = 0, bus = 0, dev = 0, fn = 0;

	sscanf(bdf, "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
	*a = (struct iommutrace_probe_pci_addr){ .domain = domain,
						 .bus = (__u8)bus,
						 .device = (__u8)dev,
						 .function = (__u8)fn };
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
			  errno == EINVAL ? " (the kernel log has the module's reason: dmesg)" :
					    "");
		return -1;
	}
	*phys = r.phys_addr;
	*dma = r.dma_addr;
	*handle = r.handle;
	return 0;
}

/* The import's segments from first on, into out (room for the rest). */
static int get_segments(struct probe_module *m, uint32_t handle, uint32_t first, uint32_t count,
			struct probe_segment *out)
{
	struct iommutrace_probe_get_segments g = { .handle = handle,
						   .first_segment = first,
						   .segments_capacity = count - first,
						   .segments_ptr = (uintptr_t)(out + first) };

	if (ioctl(m->fd, IOMMUTRACE_PROBE_GET_SEGMENTS, &g)) {
		log_error("reading the DMA segments of import %u: %s%s", handle, strerror(errno),
			  errno == ESTALE ?
				  " (the exporter moved or revoked the buffer meanwhile)" :
				  "");
		return -1;
	}
	return 0;
}

/* Why an import failed, for the error line. */
static const char *import_hint(int err, int bar_exporter)
{
	if (bar_exporter && (err == EINVAL || err == EOPNOTSUPP || err == EPERM))
		return ": the kernel finds no peer-to-peer DMA path between the two devices (P2PDMA "
		       "needs them to share an upstream PCIe switch, or a host bridge on its whitelist; "
		       "dmesg names the reason); map the window with --buffer bar:BDF/INDEX, which "
		       "goes through dma_map_resource as a GPU driver does";
	if (err == EBADF)
		return ": the fd is not a dma-buf";
	return " (the kernel log has the module's reason: dmesg)";
}

int probe_module_import_dmabuf(struct probe_module *m, const char *importer, int dmabuf_fd,
			       int bar_exporter, struct probe_import *out)
{
	enum { FIRST_READ = 64 }; /* most imports fit; the rest is read after */
	struct probe_segment *segs = calloc(FIRST_READ, sizeof(*segs)), *more;
	struct iommutrace_probe_import_dmabuf a = { .dmabuf_fd = dmabuf_fd,
						    .segments_capacity = FIRST_READ,
						    .segments_ptr = (uintptr_t)segs };

	_Static_assert(sizeof(struct probe_segment) == sizeof(struct iommutrace_probe_dma_segment),
		       "segments are copied as the module writes them");
	memset(out, 0, sizeof(*out));
	if (!segs) {
		log_error("out of memory");
		return -1;
	}
	pci_addr(importer, &a.importer);
	if (ioctl(m->fd, IOMMUTRACE_PROBE_IMPORT_DMABUF, &a)) {
		log_error("importing the dma-buf as %s: %s%s", importer, strerror(errno),
			  import_hint(errno, bar_exporter));
		free(segs);
		return -1;
	}
	out->handle = a.handle;
	out->dmabuf_size = a.dmabuf_size_bytes;
	out->nsegments = a.segments_count;
	snprintf(out->exporter, sizeof(out->exporter), "%.*s", (int)sizeof(a.exporter), a.exporter);
	out->segments = segs;
	if (a.segments_count <= FIRST_READ)
		return 0;
	more = realloc(segs, a.segments_count * sizeof(*segs));
	if (!more) {
		log_error("out of memory for %u DMA segments", a.segments_count);
		goto undo;
	}
	out->segments = more;
	if (!get_segments(m, a.handle, FIRST_READ, a.segments_count, more))
		return 0;
undo:
	probe_module_release(m, a.handle);
	free(out->segments);
	out->segments = NULL;
	return -1;
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
