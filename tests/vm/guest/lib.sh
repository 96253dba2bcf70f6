# shellcheck shell=sh
# Shared by the guest scenarios: pass/fail counting, checks on databases and on the exit status and
# output of a command, and the driver binding of a device before and after a run.
# shellcheck disable=SC3043 # busybox ash has local

failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# expect DB WHAT EXPECTED SQL: the query's value (rows joined by newlines) must equal EXPECTED
expect() {
	local got
	got=$(sqlite3 "$1" "$4")
	if [ "$got" = "$3" ]; then pass "$2 = $3"; else fail "$2: expected $3, got '$got'"; fi
}

# check NAME COMMAND...: passes when COMMAND succeeds
check() {
	local name="$1"
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# run_expect NAME STATUS ARGS...: the command's exit status must be STATUS; a failure says why in
# one line. Its output stays in /tmp/out.
run_expect() {
	local name="$1" want="$2" rc=0
	shift 2
	"$@" >/tmp/out 2>&1 || rc=$?
	sed 's/^/    /' /tmp/out
	if [ "$rc" = "$want" ]; then pass "$name: exit $rc"; else fail "$name: exit $rc, expected $want"; fi
	[ "$want" = 0 ] || check "$name: one line of error" [ "$(wc -l </tmp/out)" = 1 ]
	# `record -- COMMAND` exits 0 when it recorded, whatever COMMAND did: a run expected to succeed
	# must not hide a COMMAND that failed
	if [ "$want" = 0 ] && grep -q '^iommutrace: command exited with status [1-9]' /tmp/out; then
		fail "$name: the recorded command failed ($(grep -m 1 '^iommutrace: command exited' /tmp/out))"
	fi
}

# pages_agree DB: the driver pages recorded in the map run's IOVA range are the pages the leaf rule
# expects from the buffer's physical runs, size for size. Where the pages are observed (the driver's
# map_pages is told each page size) that is a test of the rule; where they are derived (7.1+: the
# driver's map_range sees a range, and the tracer splits it by the same leaf rule) it is only a
# consistency check, said so. Either way, what does not depend on the rule: the driver's pages, in
# the map's domain, cover exactly the IOVA ranges the map command mapped, byte for byte.
pages_agree() {
	local kind="observed pages"
	sqlite3 "$1" "select pgsize_bytes, expected_pages, seen_pages, source from map_pages_check_view" |
		sed 's/^/    pages: /'
	[ "$(sqlite3 "$1" "select count(*) > 0 from driver_maps where op = 'map' and source = 'derived'")" = 0 ] ||
		kind="consistency only: derived pages follow the leaf rule by construction"
	expect "$1" "page sizes where the driver's pages and the leaf rule's differ (of at least one; $kind)" \
		"0|1" "select count(*) filter (where not agrees), count(*) > 0 from map_pages_check_view"
	expect "$1" "map runs whose driver pages do not cover their IOVA ranges byte for byte" "0|1" "
		with runs as (select r.*, case when r.dma_segments is null then r.size_bytes * r.maps_done
			else (select sum(length_bytes) from map_dma_segments g where g.session_id = r.session_id) end as mapped,
			(select sum(d.pgsize_bytes * d.pgcount) from driver_maps d where d.session_id = r.session_id
			 and d.op = 'map' and (d.domain_ptr is null or d.domain_ptr in (select domain_ptr from
			  domain_devices_view v where v.session_id = r.session_id and v.device = r.device))
			 and case when r.dma_segments is null then d.iova >= r.iova and d.iova + d.pgsize_bytes * d.pgcount <= r.iova + r.size_bytes
			  else exists (select 1 from map_dma_segments g where g.session_id = r.session_id and d.iova >= g.dma_addr
			   and d.iova + d.pgsize_bytes * d.pgcount <= g.dma_addr + g.length_bytes) end) as paged
			from map_runs r)
		select count(*) filter (where paged is not mapped), count(*) > 0 from runs"
}

# driver_of BDF: the driver the device is bound to, or nothing
driver_of() {
	[ -L "/sys/bus/pci/devices/$1/driver" ] && basename "$(readlink "/sys/bus/pci/devices/$1/driver")"
}

# binding_key BDF: a shell variable name suffix for the device
binding_key() { echo "$1" | tr ':.' '__'; }

# remember_binding BDF: notes the device's driver and driver_override for check_restored
remember_binding() {
	local key drv ovr
	key=$(binding_key "$1")
	drv=$(driver_of "$1")
	ovr=$(cat "/sys/bus/pci/devices/$1/driver_override")
	eval "ORIG_DRIVER_$key=\$drv ORIG_OVERRIDE_$key=\$ovr"
	echo "$1: driver '${drv:-none}', driver_override '$ovr', kernel $(uname -r)"
}

# check_restored BDF WHAT: the device is bound as remember_binding found it
check_restored() {
	local key drv ovr want_drv want_ovr
	key=$(binding_key "$1")
	eval "want_drv=\$ORIG_DRIVER_$key want_ovr=\$ORIG_OVERRIDE_$key"
	drv=$(driver_of "$1")
	ovr=$(cat "/sys/bus/pci/devices/$1/driver_override")
	if [ "$drv" = "$want_drv" ] && [ "$ovr" = "$want_ovr" ]; then
		pass "$2: $1 restored (driver '${drv:-none}', override '$ovr')"
	else
		fail "$2: $1 is on '${drv:-none}' with override '$ovr', was on '${want_drv:-none}' with '$want_ovr'"
	fi
}

# The page sizes of a map are observed from the driver's map_pages, except from 7.1, where the
# drivers choose the leaf inside {vtdss,amdv1,x86_64}_map_range: they are derived there.
driver_pages_source() {
	if awk '$3 ~ /^(vtdss|amdv1|x86_64)_map_range$/ { found = 1; exit } END { exit !found }' /proc/kallsyms; then
		echo derived
	else
		echo observed
	fi
}

# nvme_disk BDF [NSID]: the block device (/dev/nvmeXnY) of namespace NSID (default 1) of the NVMe
# controller at BDF, found through sysfs: the nvme driver probes controllers asynchronously, so
# nvme0 need not be the first slot. With native multipath the controller holds the hidden path
# nvmeScCnH, whose disk is the subsystem's nvmeSnH. Prints nothing when there is none.
nvme_disk() {
	local ns=${2:-1} d
	for d in /sys/bus/pci/devices/"$1"/nvme/nvme*/nvme*n*; do
		[ -f "$d/nsid" ] && [ "$(cat "$d/nsid")" = "$ns" ] || continue
		basename "$d" | sed 's/^nvme\([0-9]*\)c[0-9]*n\([0-9]*\)$/nvme\1n\2/; s#^#/dev/#'
		return 0
	done
}

# nvme_back WHAT [BDF]: the NVMe controller at BDF (default $NVME_DEV) is on its driver again as
# remember_binding found it (check_restored), and the kernel reads its namespace 1. The driver
# probes and scans namespaces asynchronously, slowly under TCG on a loaded host: the read is tried
# for up to 60 s, and a failure says whether the disk never appeared or how its read failed.
nvme_back() {
	local i=0 bdf=${2:-$NVME_DEV} disk err=
	while :; do
		disk=$(nvme_disk "$bdf")
		if [ -n "$disk" ] && [ -b "$disk" ]; then
			err=$(dd if="$disk" of=/dev/null bs=4k count=1 iflag=direct 2>&1 >/dev/null) && break
		fi
		[ $i -ge 600 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	check_restored "$bdf" "$1"
	if [ $i -lt 600 ]; then
		pass "$1: the kernel reads $bdf again ($disk, after $((i / 10)).$((i % 10)) s)"
	elif [ -z "$disk" ] || [ ! -b "$disk" ]; then
		fail "$1: the kernel reads $bdf again: no block device for its namespace 1 after 60 s;" \
			"kernel: $(dmesg | grep -i nvme | tail -n 1)"
	else
		fail "$1: the kernel reads $bdf again: reading $disk failed for 60 s:" \
			"$(printf '%s' "$err" | grep -v records | head -n 1); kernel: $(dmesg | grep -i nvme | tail -n 1)"
	fi
}
