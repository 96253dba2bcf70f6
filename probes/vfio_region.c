/* A VFIO device's regions, PCI command register and request interrupt (see vfio_region.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/log.h"
#include "probes/iommufd_uapi.h"
#include "probes/vfio_region.h"

void *vfio_region_mmap(int device_fd, unsigned index, uint64_t offset, uint64_t size,
		       uint64_t *region_size)
{
	struct vfio_region_info info = { .argsz = sizeof(info), .index = index };
	void *p;

	if (ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, &info)) {
		log_error("VFIO region %u: %s", index, strerror(errno));
		return NULL;
	}
	*region_size = info.size;
	if (!(info.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
		log_error("VFIO region %u cannot be mmap()ed", index);
		return NULL;
	}
	if (offset > info.size || size > info.size - offset) {
		log_error("window of %#llx bytes at %#llx does not fit in region %u of %#llx bytes",
			  (unsigned long long)size, (unsigned long long)offset, index,
			  (unsigned long long)info.size);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, device_fd, info.offset + offset);
	if (p == MAP_FAILED) {
		log_error("mmap of VFIO region %u at %#llx: %s", index, (unsigned long long)offset,
			  strerror(errno));
		return NULL;
	}
	return p;
}

/* Sets bits in the device's PCI command register, through the VFIO config region. */
static int set_command_bits(int device_fd, uint16_t bits, const char *what)
{
	struct vfio_region_info info = { .argsz = sizeof(info),
					 .index = VFIO_PCI_CONFIG_REGION_INDEX };
	uint16_t cmd;

	if (ioctl(device_fd, VFIO_DEVICE_GET_REGION_INFO, &info) ||
	    pread(device_fd, &cmd, sizeof(cmd), (off_t)info.offset + PCI_COMMAND) != sizeof(cmd)) {
		log_error("reading the PCI command register through VFIO: %s", strerror(errno));
		return -1;
	}
	cmd |= bits;
	if (pwrite(device_fd, &cmd, sizeof(cmd), (off_t)info.offset + PCI_COMMAND) != sizeof(cmd)) {
		log_error("enabling %s through VFIO: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

int vfio_pci_enable_bus_master(int device_fd)
{
	return set_command_bits(device_fd, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER,
				"bus mastering");
}

int vfio_pci_enable_memory(int device_fd)
{
	return set_command_bits(device_fd, PCI_COMMAND_MEMORY, "memory decoding");
}

int vfio_request_eventfd(int device_fd)
{
	struct {
		struct vfio_irq_set set;
		int32_t fd;
	} irq = { .set = { .argsz = sizeof(irq),
			   .index = VFIO_PCI_REQ_IRQ_INDEX,
			   .count = 1,
			   .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER } };

	irq.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (irq.fd < 0 || ioctl(device_fd, VFIO_DEVICE_SET_IRQS, &irq)) {
		log_debug("no VFIO request interrupt: %s", strerror(errno));
		if (irq.fd >= 0)
			close(irq.fd);
		return -1;
	}
	return irq.fd;
}

int vfio_region_export_dmabuf(int device_fd, unsigned index, uint64_t offset, uint64_t size,
			      const char *unsupported_hint)
{
	struct {
		struct vfio_device_feature feature;
		struct it_vfio_device_feature_dma_buf dma_buf;
		struct it_vfio_region_dma_range range;
	} arg = {
		.feature = { .argsz = sizeof(arg),
			     .flags = VFIO_DEVICE_FEATURE_GET | IT_VFIO_DEVICE_FEATURE_DMA_BUF },
		.dma_buf = { .region_index = index,
			     .open_flags = O_RDWR | O_CLOEXEC,
			     .nr_ranges = 1 },
		.range = { .offset = offset, .length = size },
	};
	int fd = ioctl(device_fd, VFIO_DEVICE_FEATURE, &arg);

	if (fd >= 0)
		return fd;
	if (errno == ENOTTY || errno == EOPNOTSUPP)
		log_error("this kernel's vfio-pci cannot export a BAR as a dma-buf "
			  "(VFIO_DEVICE_FEATURE_DMA_BUF, Linux 6.19 and later), %s",
			  unsupported_hint);
	else
		log_error("exporting %#llx bytes at %#llx of VFIO region %u as a dma-buf: %s",
			  (unsigned long long)size, (unsigned long long)offset, index,
			  strerror(errno));
	return -1;
}
