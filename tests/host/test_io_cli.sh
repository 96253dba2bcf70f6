#!/bin/bash
# `iommutrace io` on this machine, which has no NVMe: bad input is refused in one line before any
# device is touched, writes need --allow-write and an explicit --nsid, and a device that is not an
# NVMe controller is refused by its PCI class. (The I/O itself is tested in the testbed:
# tests/vm/guest/io*.) Only the host bridge 0000:00:00.0, which has no driver, is ever named.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
use_idle_device io

"$bin" io --help >/dev/null
check "--help exit" 0 $?
check "--help names the write workloads" 1 "$("$bin" io --help | grep -c 'randread (default')"
# usage: exit 2 and one line, whatever the device
many=""
for i in $(seq 0 32); do many="$many --device 0000:00:$(printf %02x $((i % 32))).$((i / 32))"; done
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086 # args is a list of words
	"$bin" io $args 2>"$err"
	check "io $args: exit" 2 $?
	check "io $args: one line" 1 "$(wc -l <"$err")"
	check "io $args: says why" 1 "$(grep -c -- "$want" "$err")"
done <<LIST
--qd 4|needs --device
--device $dev --workload seqwrite|needs --allow-write and the namespace named with --nsid
--device $dev --workload randwrite --allow-write|needs --allow-write and the namespace named with --nsid
--device $dev --workload randwrite --nsid 1|needs --allow-write and the namespace named with --nsid
--device $dev --workload seqwrite --allow-write --nsid 2 --verify|read it back afterwards
--device $dev --workload write|bad --workload 'write'
--device $dev --device $dev|given twice
--device $dev --device 0000:00:01.0 --buffer bar:0000:00:02.0/2 --size 2M --mapper iommufd|share a bar: window through --engine vfio --mapper type1
--device $dev --qd 1,65535|bad --qd
--device $dev --qd 0|bad --qd
--device $dev --bs 1000|multiple of 512 bytes
--device $dev --bs 1M --qd 8 --size 2M|smaller than bs x qd
--device $dev --window 3K|bad --window
--device $dev --offset 4K|only for bar buffers
--device $dev --buffer udmabuf|is a dma-buf
--device $dev --nsid 0|bad --nsid
--device $dev --append|give -o FILE
--device $dev -o /tmp/iommutrace-never.db --append --replace|give one
$many|at most 32
LIST
"$bin" io --device $dev --time 250ms 2>"$err"
check "not an NVMe controller: exit" 1 $?
check "not an NVMe controller: one line naming the PCI class" 1 "$(grep -c 'is not an NVMe controller (PCI class' "$err")"
# without root: vfio and uio refused in one line naming the capabilities; uring needs only the
# namespace's node, which it then fails to find on a device that is not an NVMe controller
for engine in vfio uio; do
	as_nobody "$bin" io --device $dev --engine $engine --time 250ms 2>"$err"
	check "io --engine $engine without root: exit" 4 $?
	check "io --engine $engine without root: one line naming what it lacks" 1 \
		"$(grep -c "^iommutrace: error: iommutrace io --engine $engine needs CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_IPC_LOCK (.*); this process lacks CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_IPC_LOCK: run it as root$" "$err")"
done
as_nobody "$bin" io --device $dev --engine uring --time 250ms 2>"$err"
check "io --engine uring without root: not a privilege refusal" 1 $?
"$bin" io --device 0000:00:1f.7 --time 250ms 2>"$err"
check "missing device: exit" 1 $?
check "missing device: one line" 1 "$(grep -c 'no PCI device 0000:00:1f.7' "$err")"
check "$dev still without a driver" no "$([ -e /sys/bus/pci/devices/$dev/driver ] && echo yes || echo no)"
check "$dev driver_override unchanged" "$override_before" "$(cat /sys/bus/pci/devices/$dev/driver_override)"

check_summary "io cli"
