#!/bin/bash
# iommutrace under valgrind (memcheck): import (ftrace text and trace.dat), report, audit align,
# audit bar, restore, and, as root with BPF, record for one second and a record killed by SIGINT
# (the signal path). Each must end with no definite or indirect leak, no invalid access and no
# use of uninitialised memory; tests/valgrind.supp holds only reports about valgrind's model of
# the bpf() syscall. The binary is the plain build ($IOMMUTRACE), not SAN=1: valgrind and ASan do
# not mix, so under SAN=1 this test skips.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/check.sh"

if ! command -v valgrind >/dev/null; then
	echo "SKIP: valgrind is not installed (make deps installs it)"
	exit 77
fi
if nm -D "$bin" 2>/dev/null | grep -q __asan_init; then
	echo "SKIP: $bin is an ASan build (SAN=1); valgrind needs the plain one"
	exit 77
fi
tmp=$(mktemp -d /tmp/iommutrace-valgrind-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# what memcheck reported, less its notices about bpf() commands it does not model
reports() {
	grep -v -e '^$' -e 'WARNING: unhandled eBPF command' "$tmp/vg.log" | head -20
}

# vg NAME EXPECTED_STATUS ARGS...: runs iommutrace ARGS under memcheck. The child that reads a
# trace.dat first ends without freeing its parent's memory: its own reports are not shown, but an
# error memcheck finds in it makes it exit 99, which fails the import (exit 1).
vg() {
	local name=$1 want=$2 rc
	shift 2
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		--child-silent-after-fork=yes --suppressions="$root/tests/valgrind.supp" --log-file="$tmp/vg.log" -q \
		"$bin" "$@" >"$tmp/out" 2>&1
	rc=$?
	check "$name: exit status" "$want" "$rc"
	check "$name: valgrind reports" "" "$(reports)"
}

vg "import ftrace text" 0 import "$root/tests/fixtures/ftrace_iommu.txt" -o "$tmp/text.db"
vg "import trace.dat" 0 import "$root/tests/fuzz/corpus/tracedat/trace.dat" -o "$tmp/dat.db"
head -c 3000 "$root/tests/fuzz/corpus/tracedat/trace.dat" >"$tmp/cut.dat"
vg "import a truncated trace.dat" 1 import "$tmp/cut.dat" -o "$tmp/bad.db"
vg "report" 0 report "$tmp/text.db"
vg "report --json" 0 report --json "$tmp/dat.db"
vg "audit align" 0 audit align "$tmp/text.db"
vg "audit bar" 0 audit bar "$tmp/text.db"
vg "report of a missing file" 1 report "$tmp/missing.db"
IOMMUTRACE_RUN_DIR=$tmp/run vg "restore, empty journal" 0 restore

if [ "$(id -u)" = 0 ] && "$bin" record --list-probes >/dev/null 2>&1; then
	vg "record 1s" 0 record -d 1s -o "$tmp/rec.db"
	vg "record of a traced command" 0 record -o "$tmp/cmd.db" -- true
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		--suppressions="$root/tests/valgrind.supp" --log-file="$tmp/vg.log" -q \
		"$bin" record -o "$tmp/sig.db" >"$tmp/out" 2>&1 &
	pid=$!
	# valgrind starts slowly: wait until the session exists, then interrupt
	for _ in $(seq 300); do
		[ -s "$tmp/sig.db" ] && sqlite3 "$tmp/sig.db" 'select 1 from sessions' >/dev/null 2>&1 && break
		sleep 0.1
	done
	kill -INT $pid
	wait $pid
	check "record ended by SIGINT: exit status" 0 $?
	check "record ended by SIGINT: valgrind reports" "" "$(reports)"
else
	echo "note: record not run under valgrind (needs root and BPF)"
fi
check_summary valgrind
