#!/bin/bash
# `iommutrace snapshot` on this machine, which has no IOMMU: its bad usage in one line (exit 2),
# no privilege (exit 4, as nobody), and no IOMMU (exit 1, one line, no database left). Reading
# real tables is tested in the testbed (tests/vm/guest/snapshot, guest/sp_off).
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"

dir=$(mktemp -d /tmp/iommutrace-snapshot-XXXXXX)
trap 'rm -rf "$dir"' EXIT

# snap ARGS...: runs it; exit status in rc, stderr's lines in lines, its first line in first
snap() {
	rc=0
	"$bin" snapshot "$@" >"$dir/out" 2>"$dir/err" || rc=$?
	lines=$(wc -l <"$dir/err")
	first=$(head -n 1 "$dir/err")
}

snap
check "no -o: exit" 2 "$rc"
check "no -o: the line" "iommutrace: error: snapshot: -o FILE.db is needed: where the snapshot goes" "$first"
snap -o "$dir/a.db" --force --append
check "--force and --append: exit" 2 "$rc"
check "--force and --append: one line" 1 "$lines"
snap -o "$dir/a.db" --device 0000:00:zz.0
check "a bad --device: exit" 2 "$rc"
check "a bad --device: names it" 1 "$(grep -c "'0000:00:zz.0' is not a PCI address" "$dir/err")"
snap -o "$dir/a.db" extra
check "an operand: exit" 2 "$rc"

if [ -n "$(ls /sys/class/iommu 2>/dev/null)" ]; then
	echo "SKIP: this machine has an IOMMU: the no-IOMMU case is not tried"
else
	snap -o "$dir/a.db"
	check "no IOMMU: exit" 1 "$rc"
	check "no IOMMU: one line" 1 "$lines"
	check "no IOMMU: says so" 1 "$(grep -c 'no IOMMU on this machine' "$dir/err")"
fi
if [ "$(id -u)" = 0 ]; then
	rc=0
	as_nobody "$bin" snapshot -o "$dir/b.db" >"$dir/out" 2>"$dir/err" || rc=$?
	check "no privilege: exit" 4 "$rc"
	check "no privilege: one line naming what it needs" 1 "$(grep -c 'needs CAP_BPF' "$dir/err")"
fi
check_summary snapshot_cli
