#!/bin/bash
# `iommutrace map` on this machine: bad input is refused in one line before any device is touched.
# (The mappings themselves are tested in the testbed: tests/vm/guest/map.) Only the host bridge
# 0000:00:00.0, which has no driver, is ever named here.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
use_idle_device map

"$bin" map --help >/dev/null
check "--help exit" 0 $?
for args in "--device 00:00 --buffer anon --size 4K" "--device $dev --buffer anon --size 0x" \
	    "--device $dev --buffer nonsense --size 4K" "--device $dev --buffer anon" \
	    "--device $dev --buffer hugetlb2m --size 3M" "--bogus" \
	    "--device $dev --buffer anon --size 4K --mapper vfio" \
	    "--device $dev --buffer anon --size 4K --replace" \
	    "--device $dev --buffer anon --size 4K --append" \
	    "--device $dev --buffer anon --size 4K -o /tmp/x.db --append --replace"; do
	"$bin" map $args 2>"$err"
	check "map $args: exit" 2 $?
	check "map $args: one line" 1 "$(wc -l <"$err")"
done
if [ ! -e /dev/iommu ]; then
	"$bin" map --device $dev --buffer anon --size 4K --mapper iommufd 2>"$err"
	check "iommufd without /dev/iommu: exit" 1 $?
	check "iommufd without /dev/iommu: one line naming it" 1 "$(grep -c '/dev/iommu does not exist' "$err")"
fi
for args in "--device $dev --import-as $dev --buffer bar:0000:00:01.0/0 --size 4K" \
	    "--import-as $dev --buffer anon --size 4K" \
	    "--import-as $dev --buffer bar:0000:00:01.0/0 --size 4K --iova 0x40000000" \
	    "--import-as $dev --buffer udmabuf --size 4K --mapper type1" \
	    "--import-as $dev --buffer bar:$dev/0 --size 4K" \
	    "--import-as $dev --buffer dmabuf-bar:$dev/0 --size 4K" \
	    "--import-as $dev --buffer gpu:x --size 4K" "--import-as $dev --buffer gpu-vm --size 4K" \
	    "--import-as $dev --buffer udmabuf:hugetlb3m --size 2M" \
	    "--import-as $dev --buffer udmabuf:hugetlb2m --size 4K" \
	    "--import-as $dev --buffer vgem --size 4K --offset 4K" \
	    "--import-as $dev --buffer gpu --size 4K --repeat 0" \
	    "--device $dev --buffer udmabuf --size 4K" "--device $dev --buffer gpu --size 4K" \
	    "--device $dev --buffer dmabuf-bar:0000:00:01.0/0 --size 4K"; do
	"$bin" map $args 2>"$err"
	check "map $args: exit" 2 $?
	check "map $args: one line" 1 "$(wc -l <"$err")"
done
if [ ! -e /dev/iommutrace-probe ]; then
	"$bin" map --import-as $dev --buffer bar:0000:00:01.0/0 --size 4K 2>"$err"
	check "import-as without the probe module: exit" 1 $?
	check "import-as without the probe module: one line saying how to load it" 1 \
		"$(grep -c 'the iommutrace probe module is not loaded (build it with' "$err")"
fi
# The dma-buf is made before the module is opened, so a machine without either says which is
# missing first, in one line.
if ! grep -qs 0x10de /sys/bus/pci/devices/*/vendor; then
	"$bin" map --import-as $dev --buffer gpu --size 2M 2>"$err"
	check "gpu buffer without a GPU: exit" 1 $?
	check "gpu buffer without a GPU: one line naming libcuda or CUDA" 1 \
		"$(grep -c 'libcuda\|CUDA' "$err")"
	check "gpu buffer without a GPU: nothing else said" 1 "$(wc -l <"$err")"
fi
if [ ! -e /dev/udmabuf ]; then
	"$bin" map --import-as $dev --buffer udmabuf --size 2M 2>"$err"
	check "udmabuf without /dev/udmabuf: exit" 1 $?
	check "udmabuf without /dev/udmabuf: one line naming it" 1 "$(grep -c '/dev/udmabuf does not exist' "$err")"
fi
if ! grep -qs vgem /sys/class/drm/card*/device/uevent /sys/class/drm/card*/device/modalias; then
	"$bin" map --import-as $dev --buffer vgem --size 2M 2>"$err"
	check "vgem without vgem: exit" 1 $?
	check "vgem without vgem: one line saying to load it" 1 "$(grep -c "modprobe vgem" "$err")"
fi
# without root: refused in one line naming the capabilities, before any device is looked at
as_nobody "$bin" map --device $dev --buffer anon --size 4K 2>"$err"
check "map without root: exit" 4 $?
check "map without root: one line naming what it needs and lacks" 1 \
	"$(grep -c "^iommutrace: error: iommutrace map needs CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_IPC_LOCK (.*); this process lacks CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_IPC_LOCK: run it as root$" "$err")"
check "map without root: nothing else" 1 "$(wc -l <"$err")"
as_nobody "$bin" map --import-as $dev --buffer udmabuf --size 4K 2>"$err"
check "map --import-as without root: exit" 4 $?
check "map --import-as without root: one line" 1 "$(grep -c "iommutrace map --import-as needs CAP_SYS_ADMIN, CAP_DAC_OVERRIDE (" "$err")"
as_nobody "$bin" map --device $dev --buffer anon 2>"$err"
check "usage errors come first, also without root" 2 $?
"$bin" map --device 0000:00:1f.7 --buffer anon --size 4K 2>"$err"
check "missing device: exit" 1 $?
check "missing device: one line" 1 "$(grep -c 'no PCI device 0000:00:1f.7' "$err")"
if [ ! -e /sys/bus/pci/devices/$dev/iommu_group ]; then
	"$bin" map --device $dev --buffer anon --size 4K 2>"$err"
	check "no IOMMU group: exit" 1 $?
	check "no IOMMU group: one line" 1 "$(grep -c "$dev has no IOMMU group" "$err")"
fi
if [ ! -e /sys/bus/pci/devices/$dev/iommu_group ]; then
	db=$(mktemp -u /tmp/iommutrace-map-XXXXXX.db)
	"$bin" map --device $dev --buffer anon --size 4K -o "$db" >/dev/null 2>&1
	check "map -o of a failing mapping: its exit status" 1 $?
	check "map -o: the session is complete, with the map's status" "1|1|command-exit" \
		"$(sqlite3 "$db" "SELECT complete, command_exit_status, end_reason FROM sessions")"
	check "map -o: the run's parameters stored, nothing mapped or measured" \
		"type1|$dev|anon|4096|1073741824|0|0||" \
		"$(sqlite3 "$db" "SELECT mapper, device, buffer_kind, size_bytes, iova, iova_given, maps_done, phys_runs, expected_pgsize_bitmap FROM map_runs")"
	"$bin" map --device $dev --buffer anon --size 4K -o "$db" 2>"$err"
	check "map -o over an existing file: exit" 1 $?
	check "map -o over an existing file: one line naming --replace" 1 "$(grep -c "$db exists; use --replace" "$err")"
	"$bin" map --device $dev --buffer anon --size 8K -o "$db" --replace >/dev/null 2>&1
	check "map -o --replace: a new database with the new run" "1|8192" \
		"$(sqlite3 "$db" "SELECT count(*), max(size_bytes) FROM map_runs")"
	rm -f "$db"
fi
# A device with a binding journal entry (in a temporary IOMMUTRACE_RUN_DIR) is refused in one line
# before anything of it changes: held by an iommutrace that runs (this shell stands in, by pid
# and start time), left by one that ended (restore first), or a malformed entry.
run=$(mktemp -d /tmp/iommutrace-map-run-XXXXXX)
mkdir "$run/bindings"
sh -c 'exit 0' &
dead=$!
wait $dead
own_start=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
# refused_with PID START MESSAGE: given an entry of process PID (started at START), map refuses
# $dev with MESSAGE
refused_with() {
	printf 'bdf=%s\ndriver=\ndriver_override=\nbound_to=vfio-pci\npid=%s\npid_start_ticks=%s\nboot_id=%s\n' \
		$dev "$1" "$2" "$(cat /proc/sys/kernel/random/boot_id)" >"$run/bindings/$dev"
	IOMMUTRACE_RUN_DIR=$run "$bin" map --device $dev --buffer anon --size 4K 2>"$err"
	check "journal entry of pid $1: exit" 1 $?
	check "journal entry of pid $1: one line" "iommutrace: error: $dev $3" "$(cat "$err")"
}
refused_with $dead 1 "was bound to vfio-pci by an iommutrace (pid $dead) that ended without putting it back: run 'iommutrace restore' first"
refused_with $$ "$own_start" "is in use by another iommutrace (pid $$), which bound it to vfio-pci"
echo 'bdf=' >"$run/bindings/$dev"
IOMMUTRACE_RUN_DIR=$run "$bin" map --device $dev --buffer anon --size 4K 2>"$err"
check "malformed journal entry: exit" 1 $?
check "malformed journal entry: one line" "iommutrace: error: $dev: its binding journal entry $run/bindings/$dev is malformed: check the device's driver and driver_override, then remove the entry" "$(cat "$err")"
check "malformed journal entry: left as it was" "bdf=" "$(cat "$run/bindings/$dev")"
rm -rf "$run"
check "$dev still without a driver" no "$([ -e /sys/bus/pci/devices/$dev/driver ] && echo yes || echo no)"
check "$dev driver_override unchanged" "$override_before" "$(cat /sys/bus/pci/devices/$dev/driver_override)"

check_summary "map cli"
