/* A CPU for each device's worker (see device_cpu.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sysfs_file.h"
#include "io/device_cpu.h"

int cpulist_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p || lo >= CPU_SETSIZE)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtoul(++p, &end, 10);
			if (end == p || hi < lo || hi >= CPU_SETSIZE)
				return -1;
			p = end;
		}
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

int cpuset_nth(const cpu_set_t *set, unsigned n)
{
	int count = CPU_COUNT(set);

	if (!count)
		return -1;
	n %= (unsigned)count;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && n-- == 0)
			return c;
	return -1;
}

void device_cpu_pick(const char *root, const char *bdf, unsigned index, int *node, int *cpu)
{
	char path[PATH_MAX], text[1024];
	cpu_set_t local, allowed;
	long n;

	*node = -1;
	*cpu = -1;
	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/numa_node", bdf) == 0 &&
	    sysfs_read_long(path, -1, 1 << 20, &n) == 0)
		*node = (int)n;
	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/local_cpulist", bdf) ||
	    sysfs_read_text(path, text, sizeof(text)) || cpulist_parse(text, &local)) {
		log_debug("%s: no local CPU list (%s); its worker is not pinned", bdf, path);
		return;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		CPU_AND(&local, &local, &allowed);
	*cpu = cpuset_nth(&local, index);
}
