/* The uio engine, the IOMMU-off case: the NVMe bound to uio_pci_generic, BAR0 mapped through its
 * sysfs resource file, bus mastering set in its config space, and the user-space driver of
 * nvme_io.h given physical addresses read from /proc/self/pagemap. Only hugetlb buffers: their
 * pages stay where they are, which an unpinned anonymous page need not. A device whose DMA the
 * IOMMU translates is refused: physical addresses would not reach memory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/log.h"
#include "common/sysfs_file.h"
#include "probes/backing.h"
#include "probes/device_binding.h"
#include "probes/dma_area.h"
#include "io/engine.h"
#include "io/nvme_io.h"

#define UIO_DRIVER "uio_pci_generic"
#define BAR0_MAP_BYTES 0x2000
#define DMA_AREA_BYTES (2ull << 20)

struct uio_engine {
	struct device_binding dev;
	struct buffer buffer;
	struct backing backing; /* the buffer's physical runs */
	struct dma_area dma;
	struct nvme_io io;
	int bar0_fd;
	void *bar0;
};

/* The physical address of the buffer's byte at offset: from the run that holds it. */
static uint64_t data_phys(void *ctx, uint64_t offset)
{
	const struct backing *b = &((struct uio_engine *)ctx)->backing;
	size_t lo = 0, hi = b->nruns;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (b->runs[mid].offset <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return b->runs[lo].paddr + (offset - b->runs[lo].offset);
}

/* ROOT/sys/bus/pci/devices/BDF/FILE; -1 (logged) when the root makes it too long */
static int device_file(char path[PATH_MAX], const char *root, const char *bdf, const char *file)
{
	if (!sysfs_path(path, PATH_MAX, root, "/sys/bus/pci/devices/%s/%s", bdf, file))
		return 0;
	log_error("%s: its sysfs path under %s is too long", bdf, root);
	return -1;
}

/* The IOMMU must be off for the device, or pass its DMA through untranslated. */
static int check_untranslated(const char *root, const char *bdf)
{
	char path[PATH_MAX], type[SYSFS_NAME_MAX + 1];

	if (device_file(path, root, bdf, "iommu_group"))
		return -1;
	if (access(path, F_OK))
		return 0;
	if (device_file(path, root, bdf, "iommu_group/type") ||
	    sysfs_read_text(path, type, sizeof(type)))
		snprintf(type, sizeof(type), "unknown");
	if (!strcmp(type, "identity"))
		return 0;
	log_error("%s's DMA goes through the IOMMU (domain type %s): the uio engine gives the "
		  "device physical addresses, which needs the IOMMU off or in passthrough "
		  "(iommu=pt); use --engine vfio",
		  bdf, type);
	return -1;
}

static int set_bus_master(const char *root, const char *bdf)
{
	char path[PATH_MAX];
	uint16_t cmd;
	int fd, rc = -1;

	if (device_file(path, root, bdf, "config"))
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && pread(fd, &cmd, sizeof(cmd), PCI_COMMAND) == sizeof(cmd)) {
		cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
		rc = pwrite(fd, &cmd, sizeof(cmd), PCI_COMMAND) == sizeof(cmd) ? 0 : -1;
	}
	if (rc)
		log_error("enabling bus mastering in %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

static int map_bar0(struct uio_engine *u, const char *root, const char *bdf)
{
	char path[PATH_MAX];

	if (device_file(path, root, bdf, "resource0"))
		return -1;
	u->bar0_fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (u->bar0_fd < 0) {
		log_error("opening %s: %s", path, strerror(errno));
		return -1;
	}
	u->bar0 = mmap(NULL, BAR0_MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, u->bar0_fd, 0);
	if (u->bar0 == MAP_FAILED) {
		u->bar0 = NULL;
		log_error("mmap of %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int uio_open(struct io_engine *e, const struct io_target *t)
{
	struct uio_engine *u = calloc(1, sizeof(*u));

	if (!u) {
		log_error("out of memory");
		return -1;
	}
	u->buffer = (struct buffer)BUFFER_INIT;
	u->dma = (struct dma_area)DMA_AREA_INIT;
	u->bar0_fd = -1;
	u->io.request_fd = -1;
	u->io.stop = t->stop;
	snprintf(u->io.bdf, sizeof(u->io.bdf), "%s", t->bdf);
	snprintf(u->io.driver, sizeof(u->io.driver), UIO_DRIVER);
	u->io.sysfs_root = t->sysfs_root;
	u->io.data_dma = data_phys;
	u->io.data_ctx = u;
	e->priv = u;
	if (t->buffer.kind != BUF_HUGETLB2M && t->buffer.kind != BUF_HUGETLB1G) {
		log_error("the uio engine reads into hugetlb buffers only (--buffer hugetlb2m or "
			  "hugetlb1g): without an IOMMU the device writes to physical pages, which "
			  "must not move");
		return -1;
	}
	if (nvme_io_dma_bytes(t->max_qd, t->max_bs) > DMA_AREA_BYTES) {
		log_error("the uio engine keeps its queues and PRP lists in one 2 MiB hugetlb page "
			  "(physically contiguous), and qd %u with --bs %u needs more: lower --qd or "
			  "--bs",
			  t->max_qd, t->max_bs);
		return -1;
	}
	if (check_untranslated(t->sysfs_root, t->bdf) ||
	    device_bind(&u->dev, t->sysfs_root, t->bdf, UIO_DRIVER, t->force) || *t->stop ||
	    set_bus_master(t->sysfs_root, t->bdf) || map_bar0(u, t->sysfs_root, t->bdf) ||
	    buffer_create(&u->buffer, &t->buffer, t->buffer_size, 0, -1) ||
	    backing_read(u->buffer.vaddr, u->buffer.size, &u->backing) ||
	    dma_area_create(&u->dma, NULL, DMA_AREA_BYTES, 0) ||
	    nvme_io_open(&u->io, u->bar0, &u->dma, t->nsid, t->max_qd, t->max_bs))
		return -1;
	nvme_io_describe(&u->io, e);
	e->buffer = u->buffer.vaddr;
	e->buffer_size = u->buffer.size;
	return 0;
}

static int uio_run(struct io_engine *e, const struct io_point *p, struct io_result *r)
{
	struct uio_engine *u = e->priv;

	return nvme_io_run(&u->io, p, e->buffer, r) ? -1 : 0;
}

static int uio_close(struct io_engine *e)
{
	struct uio_engine *u = e->priv;
	int ret;

	if (!u)
		return 0;
	/* no DMA may follow once the memory is freed */
	nvme_io_close(&u->io);
	dma_area_destroy(&u->dma);
	backing_free(&u->backing);
	buffer_destroy(&u->buffer);
	if (u->bar0)
		munmap(u->bar0, BAR0_MAP_BYTES);
	if (u->bar0_fd >= 0)
		close(u->bar0_fd);
	ret = device_restore(&u->dev);
	free(u);
	e->priv = NULL;
	return ret;
}

const struct io_engine_ops io_engine_uio = {
	.name = "uio",
	.open = uio_open,
	.run = uio_run,
	.close = uio_close,
};
