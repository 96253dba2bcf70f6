#!/bin/bash
# `iommutrace import` of what is no trace, or a damaged one: trace.dat files on which libtracecmd
# crashes or loops, /dev/zero, /dev/urandom, an endless pipe of random bytes, a trace.dat asked for from a
# pipe. Each ends within seconds with exit 1 and one line on stderr, and leaves nothing under the
# -o name (nor its private folder). A pipe of ftrace text is imported. Needs no privilege.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
repo=$(realpath "$(dirname "$0")/../..")
dir=$(mktemp -d /tmp/iommutrace-bad-input-XXXXXX)
writer=
trap '[ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$dir"' EXIT
db=$dir/out.db

# refused WHAT PATTERN ARGS...: import ARGS exits 1 within 30 s, one line on stderr matching PATTERN, nothing
# left under the output's names
refused() {
	local what=$1 pattern=$2
	shift 2
	timeout 30 "$bin" import "$@" -o "$db" >/dev/null 2>"$dir/err"
	check "$what: exit" 1 $?
	check "$what: one line" 1 "$(wc -l <"$dir/err")"
	check "$what: says why" 1 "$(grep -c -- "$pattern" "$dir/err")"
	check "$what: nothing left" "" "$(cd "$dir" && ls out.db* 2>/dev/null)"
}

crashed='this trace.dat is corrupt: libtracecmd crashed reading its header, event formats or data'
regressions=$repo/tests/fuzz/regressions/tracedat
refused "trace.dat with a page size of 0" "$crashed (Floating point exception)" \
	"$regressions/page-size-0.dat"
refused "trace.dat with a broken field line" "$crashed (Segmentation fault)" \
	"$regressions/iommu-field-line-1932-00.dat"
refused "trace.dat with a '%' in a print fmt" "$crashed (Floating point exception)" \
	"$regressions/iommu-print-fmt-percent-1497-25.dat"
# iommu:map's format cut short by its length: the warnings about its fields are not repeated
# before the refusal
cp "$repo/tests/fuzz/corpus/tracedat/trace.dat" "$dir/cut-format.dat"
printf '\377' | dd of="$dir/cut-format.dat" bs=1 seek=2067 conv=notrunc status=none
refused "trace.dat with a format cut short" "reading its records failed (truncated or corrupt)" \
	"$dir/cut-format.dat"

# one on which libtracecmd loops, opening its header (found by make fuzz): stopped after 10 s
refused "trace.dat on which libtracecmd loops" \
	"this trace.dat is corrupt: libtracecmd read nothing from it for 10 s" \
	"$regressions/options-loop.dat"
refused /dev/zero "no ftrace event line in its first 4 MiB" /dev/zero
refused /dev/urandom "no ftrace event line in its first 4 MiB" /dev/urandom
# a pipe that never ends, read once (a second open would wait for a writer that died of SIGPIPE)
mkfifo "$dir/pipe"
cat /dev/urandom >"$dir/pipe" 2>/dev/null &
writer=$!
refused "an endless pipe" "no ftrace event line in its first 4 MiB" "$dir/pipe"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
writer=
# a trace.dat asked for from what is not a file; ftrace text through a pipe is imported
refused "--format dat of a pipe" "is not a regular file: a trace.dat is read from a file" \
	--format dat "$dir/pipe"
"$bin" import /dev/stdin -o "$dir/stdin.db" <"$repo/tests/fixtures/ftrace_iommu.txt" >"$dir/out" 2>&1
check "ftrace text on standard input: exit" 0 $?
check "ftrace text on standard input: its events" 1 "$(grep -c '^imported 13 IOMMU events from /dev/stdin' "$dir/out")"
rm -f "$dir/stdin.db"

# a trace whose end is garbage: refused naming the last line that parsed (line 30 of the
# fixture; its line 31 does not parse)
{ cat "$repo/tests/fixtures/ftrace_iommu.txt"; head -c 5000000 /dev/urandom; } >"$dir/tail.txt"
refused "a trace followed by garbage" "no ftrace event line in the 4 MiB after line 30:" \
	"$dir/tail.txt"

check_summary "test_import_bad_input"
