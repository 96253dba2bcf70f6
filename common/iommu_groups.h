/* The IOMMU groups of the machine (/sys/kernel/iommu_groups/N) and the type of each group's
 * default domain as sysfs names it: DMA, DMA-FQ, identity, blocked, unmanaged, ... */
#ifndef IOMMUTRACE_IOMMU_GROUPS_H
#define IOMMUTRACE_IOMMU_GROUPS_H

#include <stddef.h>
#include "common/sysfs_file.h"

struct iommu_group {
	int id;
	char domain_type[SYSFS_NAME_MAX + 1]; /* "" when unknown (no 'type' file before 5.11) */
};

/**
 * iommu_groups_read() - Read every group under ROOT/sys/kernel/iommu_groups, sorted by id.
 * @groups: free with free()
 *
 * No such directory means no groups.
 *
 * Return: 0, or -1 when out of memory (logged).
 */
int iommu_groups_read(const char *root, struct iommu_group **groups, size_t *n);

/**
 * iommu_groups_find() - The group with this @id in a sorted list.
 *
 * Return: the group, or NULL.
 */
const struct iommu_group *iommu_groups_find(const struct iommu_group *groups, size_t n, int id);

#endif
