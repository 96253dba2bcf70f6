/* Binding, mapper and buffer for map and io (see device_setup.h). */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/sysfs_file.h"
#include "probes/device_setup.h"

int device_setup_open(struct device_setup *s, const struct device_setup_opts *o)
{
	bool other_bar =
		!o->borrow && o->buffer.kind == BUF_BAR && strcmp(o->buffer.bar_bdf, o->bdf);
	int bar_fd = -1;

	if (device_bind_vfio(&s->dev, o->sysfs_root, o->bdf, o->force) ||
	    (other_bar &&
	     device_bind_vfio(&s->bar_dev, o->sysfs_root, o->buffer.bar_bdf, o->force)) ||
	    *o->stop || mapper_open(&s->mapper, o->mapper, o->sysfs_root) ||
	    mapper_add_device(&s->mapper, o->bdf) ||
	    (other_bar && mapper_add_device(&s->mapper, o->buffer.bar_bdf)) || *o->stop)
		return -1;
	if (o->borrow) {
		s->buffer = *o->borrow;
		return 0;
	}
	if (o->buffer.kind == BUF_BAR) {
		bar_fd = mapper_device_fd(&s->mapper, o->buffer.bar_bdf);
		if (bar_fd < 0)
			return -1;
	}
	s->buffer.sysfs_root = o->sysfs_root;
	return buffer_create(&s->buffer, &o->buffer, o->size, o->offset, bar_fd);
}

static void wait_until_gone(const struct device_binding *dev)
{
	char path[PATH_MAX];
	struct stat st;

	if (sysfs_path(path, sizeof(path), dev->sysfs_root, "/sys/bus/pci/devices/%s", dev->bdf))
		return;
	for (int i = 0; i < 500 && stat(path, &st) == 0; i++)
		usleep(10000);
}

int device_setup_close(struct device_setup *s)
{
	int ret = 0;

	buffer_destroy(&s->buffer);
	mapper_close(&s->mapper);
	if (s->removal_requested)
		wait_until_gone(&s->dev);
	/* both, whatever the first one does */
	if (device_restore(&s->bar_dev))
		ret = -1;
	if (device_restore(&s->dev))
		ret = -1;
	return ret;
}
