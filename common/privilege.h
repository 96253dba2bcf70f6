/* Which capabilities this process has, for the commands that need some (record: CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN on kernels without them). */
#ifndef IOMMUTRACE_PRIVILEGE_H
#define IOMMUTRACE_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>

/* True when the effective set can load and attach tracing BPF programs; otherwise writes the
 * missing capabilities ("CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)") into missing. */
bool privilege_can_trace_bpf(char *missing, size_t len);

#endif
