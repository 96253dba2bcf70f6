/* Where a device's worker thread runs: a CPU of the device's NUMA node (sysfs numa_node and
 * local_cpulist), among the CPUs this process may use, spread over the devices that share the
 * node. */
#ifndef IOMMUTRACE_DEVICE_CPU_H
#define IOMMUTRACE_DEVICE_CPU_H

#include <sched.h>	/* cpu_set_t: the build defines _GNU_SOURCE */

/* Parses a kernel CPU list ("0-3,8,10-11") into set; -1 when malformed. */
int cpulist_parse(const char *s, cpu_set_t *set);
/* The nth CPU (counting from 0, wrapping) of set; -1 when set is empty. */
int cpuset_nth(const cpu_set_t *set, unsigned n);
/* For the index-th device on its node: *node gets the device's NUMA node (-1: none) and *cpu a
 * CPU local to it that this process may run on (-1: none known; the thread is not pinned), read
 * under ROOT/sys (root as for sysfs_path: NULL for the live system). Never fails: a missing or
 * unreadable sysfs entry means "no locality", logged at debug level. */
void device_cpu_pick(const char *root, const char *bdf, unsigned index, int *node, int *cpu);

#endif
