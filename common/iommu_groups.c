/* Reads /sys/kernel/iommu_groups/N/type. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "iommu_groups.h"
#include "log.h"

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

int iommu_groups_read(const char *root, struct iommu_group **groups, size_t *n)
{
	char dir[PATH_MAX];
	struct iommu_group *list = NULL;
	size_t count = 0;
	struct dirent *de;
	DIR *d;
	int ret = -1;

	*groups = NULL;
	*n = 0;
	if (sysfs_path(dir, sizeof(dir), root, "/sys/kernel/iommu_groups")) {
		sysfs_report(root, errno);
		return 0;
	}
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			log_debug("%s: missing; no IOMMU groups", dir);
		else
			log_warn("%s: %s; no IOMMU groups read", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		struct iommu_group *grown;
		long id;

		if (de->d_name[0] == '.')
			continue;
		if (!group_name(de->d_name, &id)) {
			log_warn("%s: skipping an entry that is not a group number", dir);
			continue;
		}
		if (count >= SIZE_MAX / sizeof(*list) - 1)
			goto cleanup;
		grown = realloc(list, (count + 1) * sizeof(*list));
		if (!grown)
			goto cleanup;
		list = grown;
		list[count].id = (int)id;
		read_type(dir, &list[count++]);
	}
	if (count)
		qsort(list, count, sizeof(*list), compare_groups);
	*groups = list;
	*n = count;
	list = NULL;
	ret = 0;
cleanup:
	if (ret)
		log_error("reading IOMMU groups: out of memory");
	closedir(d);
	free(list);
	return ret;
}

const struct iommu_group *iommu_groups_find(const struct iommu_group *groups, size_t n, int id)
{
	struct iommu_group key = { .id = id };

	if (!n)
		return NULL;
	return bsearch(&key, groups, n, sizeof(*groups), compare_groups);
}
