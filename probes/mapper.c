/* Dispatch to the VFIO type1 or the iommufd mapper (see mapper.h). */
#include <linux/vfio.h>
#include <string.h>
#include "common/log.h"
#include "probes/mapper.h"

static const char *const names[] = { [MAPPER_TYPE1] = "type1", [MAPPER_IOMMUFD] = "iommufd" };

#define DEFAULT_IOVA (1ull << 30)
#define DEFAULT_IOVA_HIGH (4ull << 30)
#define MSI_WINDOW_START 0xfee00000ull

uint64_t mapper_default_iova(uint64_t size)
{
	return DEFAULT_IOVA + size > MSI_WINDOW_START ? DEFAULT_IOVA_HIGH : DEFAULT_IOVA;
}

int mapper_parse(const char *s, enum mapper_kind *kind)
{
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if (!strcmp(s, names[k])) {
			*kind = k;
			return 0;
		}
	}
	return -1;
}

const char *mapper_name(enum mapper_kind kind)
{
	return names[kind];
}

int mapper_available(enum mapper_kind kind)
{
	return kind == MAPPER_IOMMUFD ? iommufd_available() : 0;
}

int mapper_open(struct mapper *m, enum mapper_kind kind, const char *sysfs_root)
{
	m->kind = kind;
	return kind == MAPPER_TYPE1 ? vfio_type1_open(&m->type1, sysfs_root) :
				      iommufd_open(&m->iommufd, sysfs_root);
}

int mapper_add_device(struct mapper *m, const char *bdf)
{
	return m->kind == MAPPER_TYPE1 ? vfio_type1_add_device_group(&m->type1, bdf) :
					 iommufd_add_device(&m->iommufd, bdf);
}

int mapper_device_fd(struct mapper *m, const char *bdf)
{
	return m->kind == MAPPER_TYPE1 ? vfio_type1_device_fd(&m->type1, bdf) :
					 iommufd_device_fd(&m->iommufd, bdf);
}

uint64_t mapper_pgsizes(struct mapper *m)
{
	uint64_t bitmap = 0;

	if (m->kind == MAPPER_TYPE1 && vfio_type1_pgsizes(&m->type1, &bitmap))
		return 0;
	return bitmap;
}

int mapper_map(struct mapper *m, const struct buffer *b, uint64_t iova)
{
	if (m->kind == MAPPER_TYPE1)
		return vfio_type1_map(&m->type1, b->vaddr, iova, b->size);
	if (b->spec.kind == BUF_BAR)
		return iommufd_map_bar(&m->iommufd, b->fd,
				       VFIO_PCI_BAR0_REGION_INDEX + b->spec.bar_index,
				       b->bar_offset, iova, b->size);
	if (b->spec.kind == BUF_MEMFD)
		return iommufd_map_file(&m->iommufd, b->fd, 0, iova, b->size);
	return iommufd_map(&m->iommufd, b->vaddr, iova, b->size);
}

int mapper_unmap(struct mapper *m, uint64_t iova, uint64_t size)
{
	return m->kind == MAPPER_TYPE1 ? vfio_type1_unmap(&m->type1, iova, size) :
					 iommufd_unmap(&m->iommufd, iova, size);
}

void mapper_close(struct mapper *m)
{
	vfio_type1_close(&m->type1);
	iommufd_close(&m->iommufd);
}
