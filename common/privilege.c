/* Capability checks through capget(2); no libcap needed. */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "privilege.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

bool privilege_can_trace_bpf(char *missing, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(missing, len, "capabilities unreadable");
		return false;
	}
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return true;
	snprintf(missing, len, "%s%s%s (or CAP_SYS_ADMIN)",
		 has_cap(data, CAP_BPF) ? "" : "CAP_BPF",
		 !has_cap(data, CAP_BPF) && !has_cap(data, CAP_PERFMON) ? " and " : "",
		 has_cap(data, CAP_PERFMON) ? "" : "CAP_PERFMON");
	return false;
}
