/* Which capabilities this process has, for the commands that need some. What each subcommand
 * needs (docs/robustness.md, "Privileges"):
 *   record:  CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (else it falls back to tracefs);
 *   map, io --engine vfio|uio:  CAP_SYS_ADMIN (physical addresses from pagemap, PCI config and
 *            resources), CAP_DAC_OVERRIDE (sysfs binding files, /dev/vfio groups: root's),
 *            CAP_IPC_LOCK (pinning DMA buffers beyond RLIMIT_MEMLOCK);
 *   restore (not --dry-run, with entries):  CAP_DAC_OVERRIDE;
 *   io --engine uring:  read (and, with --allow-write, write) access to the namespace's node;
 *   devices, import, report, audit:  none beyond the files named. */
#ifndef IOMMUTRACE_PRIVILEGE_H
#define IOMMUTRACE_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>

/**
 * privilege_can_trace_bpf() - Whether the effective set can load and attach tracing BPF programs.
 * @missing: otherwise set to the missing capabilities ("CAP_BPF and CAP_PERFMON (or
 *           CAP_SYS_ADMIN)")
 */
bool privilege_can_trace_bpf(char *missing, size_t len);

/* Bits of privilege_require's mask */
#define PRIV_SYS_ADMIN (1u << 0)
#define PRIV_DAC_OVERRIDE (1u << 1)
#define PRIV_IPC_LOCK (1u << 2)

/**
 * privilege_require() - Check that the effective set holds every capability of @mask.
 * @why: what the capabilities are for
 *
 * Return: 0 when it does; otherwise -1, having said in one line that `iommutrace @what` needs
 * them (@why), which ones this process lacks, and to run it as root.
 */
int privilege_require(const char *what, unsigned mask, const char *why);

#endif
