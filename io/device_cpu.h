/* Where a device's worker thread runs: a CPU of the device's NUMA node (sysfs numa_node and
 * local_cpulist), among the CPUs this process may use, spread over the devices that share the
 * node. */
#ifndef IOMMUTRACE_DEVICE_CPU_H
#define IOMMUTRACE_DEVICE_CPU_H

#include <sched.h> /* cpu_set_t: the build defines _GNU_SOURCE */

/**
 * cpulist_parse() - Parse a kernel CPU list ("0-3,8,10-11") into @set.
 *
 * Return: 0, or -1 when malformed.
 */
int cpulist_parse(const char *s, cpu_set_t *set);
/**
 * cpuset_nth() - CPU number @n (counting from 0, wrapping) of @set.
 *
 * Return: the CPU, or -1 when @set is empty.
 */
int cpuset_nth(const cpu_set_t *set, unsigned n);
/**
 * device_cpu_pick() - The NUMA node and a CPU of device @bdf, read under ROOT/sys.
 * @root: as for sysfs_path(): NULL for the live system
 * @index: which device it is on its node (the index-th)
 * @node: set to the device's NUMA node (-1: none)
 * @cpu: set to a CPU local to it that this process may run on (-1: none known; the thread is not
 *       pinned)
 *
 * Never fails: a missing or unreadable sysfs entry means "no locality", logged at debug level.
 */
void device_cpu_pick(const char *root, const char *bdf, unsigned index, int *node, int *cpu);

#endif
