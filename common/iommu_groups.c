/* Reads /sys/kernel/iommu_groups/N/type. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/iommu_groups.h"
#include "common/array.h"
#include "common/log.h"

static void read_type(const char *groups_dir, struct iommu_group *g)
{
	char path[PATH_MAX];

	g->domain_type[0] = '\0';
	if (sysfs_path(path, sizeof(path), groups_dir, "/%d/type", g->id)) {
		sysfs_report(groups_dir, errno);
		return;
	}
	if (sysfs_read_text(path, g->domain_type, sizeof(g->domain_type))) {
		sysfs_report(path, errno);
		g->domain_type[0] = '\0';
		return;
	}
	if (!sysfs_name_ok(g->domain_type)) {
		sysfs_report(path, EINVAL);
		g->domain_type[0] = '\0';
	}
}

/* A group number as the kernel spells it: "03" next to "3" would make a second group 3. */
static bool group_name(const char *name, long *id)
{
	char canonical[24];

	if (sysfs_parse_long(name, 0, INT_MAX, id))
		return false;
	snprintf(canonical, sizeof(canonical), "%ld", *id);
	return !strcmp(canonical, name);
}

static int compare_groups(const void *a, const void *b)
{
	int x = ((const struct iommu_group *)a)->id, y = ((const struct iommu_group *)b)->id;

	return (x > y) - (x < y);
}

struct group_list {
	struct iommu_group *items;
	size_t n;
};

static int add_group(const char *groups_dir, const char *name, void *ctx)
{
	struct group_list *list = ctx;
	struct iommu_group *grown;
	long id;

	if (!group_name(name, &id)) {
		log_warn("%s: skipping an entry that is not a group number", groups_dir);
		return 0;
	}
	grown = array_grow(list->items, list->n, sizeof(*grown));
	if (!grown)
		return -1;
	list->items = grown;
	grown[list->n].id = (int)id;
	read_type(groups_dir, &grown[list->n++]);
	return 0;
}

int iommu_groups_read(const char *root, struct iommu_group **groups, size_t *n)
{
	struct group_list list = { 0 };

	*groups = NULL;
	*n = 0;
	if (sysfs_for_each_entry(root, "/sys/kernel/iommu_groups", "IOMMU groups", add_group,
				 &list)) {
		free(list.items);
		return -1;
	}
	if (list.n)
		qsort(list.items, list.n, sizeof(*list.items), compare_groups);
	*groups = list.items;
	*n = list.n;
	return 0;
}

const struct iommu_group *iommu_groups_find(const struct iommu_group *groups, size_t n, int id)
{
	struct iommu_group key = { .id = id };

	if (!n)
		return NULL;
	return bsearch(&key, groups, n, sizeof(*groups), compare_groups);
}
