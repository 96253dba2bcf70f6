/* Capability checks through capget(2); no libcap needed. */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>
#include "common/log.h"
#include "common/privilege.h"

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
	snprintf(missing, len, "%s%s%s (or CAP_SYS_ADMIN)", has_cap(data, CAP_BPF) ? "" : "CAP_BPF",
		 !has_cap(data, CAP_BPF) && !has_cap(data, CAP_PERFMON) ? " and " : "",
		 has_cap(data, CAP_PERFMON) ? "" : "CAP_PERFMON");
	return false;
}

int privilege_require(const char *what, unsigned mask, const char *why)
{
	static const struct {
		unsigned bit;
		int cap;
		const char *name;
	} caps[] = {
		{ PRIV_SYS_ADMIN, CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
		{ PRIV_DAC_OVERRIDE, CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
		{ PRIV_IPC_LOCK, CAP_IPC_LOCK, "CAP_IPC_LOCK" },
	};
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	char needed[128] = "", missing[128] = "";
	bool readable = !syscall(SYS_capget, &hdr, data);

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (!(mask & caps[i].bit))
			continue;
		snprintf(needed + strlen(needed), sizeof(needed) - strlen(needed), "%s%s",
			 needed[0] ? ", " : "", caps[i].name);
		if (!readable || !has_cap(data, caps[i].cap))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", missing[0] ? ", " : "", caps[i].name);
	}
	if (!missing[0])
		return 0;
	log_error("iommutrace %s needs %s (%s); this process lacks %s: run it as root", what,
		  needed, why, readable ? missing : "them (capabilities unreadable)");
	return -1;
}
