#!/bin/bash
# `iommutrace record` on this machine, as root: what it writes, how it stops, how it refuses bad
# input. The machine may have no IOMMU traffic at all; what is checked is what must hold anyway.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: record tests need root (CAP_BPF, CAP_PERFMON, tracefs)"
	exit 77
fi
dir=$(mktemp -d /tmp/iommutrace-record-XXXXXX)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/check.sh"
q() { sqlite3 -batch -noheader "$1" "$2"; }
# Our BPF programs still loaded: the kernel frees an exited process's programs after an RCU grace
# period, so allow it up to 5 s before counting.
bpf_left() {
	local left i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		left=$(bpftool prog show 2>/dev/null | grep -c -E 'raw_map|btf_map')
		[ "$left" = 0 ] && break
		sleep 0.5
	done
	echo "$left"
}

# a one-second recording: one complete session with the PCI inventory and the probe table
"$bin" record -d 1 -o "$dir/a.db" >"$dir/out" 2>"$dir/err"
check "record -d 1 exits 0" 0 $?
check "session complete, stopped by duration" "1|record|duration" \
	"$(q "$dir/a.db" "SELECT complete, kind, end_reason FROM sessions")"
check "session capture" "bpf" "$(q "$dir/a.db" "SELECT capture FROM sessions")"
check "session lasted about 1 s" 1 \
	"$(q "$dir/a.db" "SELECT (end_mono_ns - start_mono_ns) BETWEEN 900000000 AND 3000000000 FROM sessions")"
check "kernel release stored" "$(uname -r)" "$(q "$dir/a.db" "SELECT kernel_release FROM sessions")"
check "every PCI device stored" "$(ls /sys/bus/pci/devices | wc -l)" \
	"$(q "$dir/a.db" "SELECT COUNT(*) FROM devices")"
first=$(ls /sys/bus/pci/devices | sort | head -1)
check "vendor of $first" "$(printf %d "$(cat /sys/bus/pci/devices/$first/vendor)")" \
	"$(q "$dir/a.db" "SELECT vendor_id FROM devices WHERE bdf = '$first'")"
check "iommu:map attached" 1 \
	"$(q "$dir/a.db" "SELECT attached FROM probes WHERE target = 'iommu:map'")"
check "summary line" 1 "$(grep -c '^recorded .* events in .* through bpf into' "$dir/out")"
check "no BPF program left loaded" 0 "$(bpf_left)"

# an existing database is refused without --force, kept intact, and replaced with it
before=$(md5sum <"$dir/a.db")
"$bin" record -d 1 -o "$dir/a.db" 2>"$dir/err"
check "existing file refused: exit 1" 1 $?
check "existing file refused: one line" 1 "$(wc -l <"$dir/err")"
check "existing file untouched" "$before" "$(md5sum <"$dir/a.db")"
"$bin" record -d 0.2 -f -o "$dir/a.db" >/dev/null 2>&1
check "--force replaces" "0|1" "$?|$(q "$dir/a.db" "SELECT COUNT(*) FROM sessions")"

# --append adds a session to an iommutrace database (or makes a new one), nothing else
"$bin" record -d 0.2 --append -o "$dir/a.db" >/dev/null 2>&1
check "--append adds a session" "0|1,2|2" \
	"$?|$(q "$dir/a.db" "SELECT group_concat(session_id) FROM sessions")|$(q "$dir/a.db" "SELECT COUNT(*) FROM map_pieces_state")"
"$bin" record -d 0.2 --append -o "$dir/new.db" >/dev/null 2>&1
check "--append to a missing file makes it" "0|1" "$?|$(q "$dir/new.db" "SELECT COUNT(*) FROM sessions")"
"$bin" record -d 0.2 --append --force -o "$dir/a.db" 2>"$dir/err"
check "--append with --force: exit 2, one line" "2|1" "$?|$(wc -l <"$dir/err")"
echo "not a database" >"$dir/text.db"
"$bin" record -d 0.2 --append -o "$dir/text.db" 2>"$dir/err"
check "--append to a foreign file: exit 1, one line naming it" "1|1" \
	"$?|$(grep -c 'text.db is not an iommutrace database' "$dir/err")"
check "the foreign file untouched" "not a database" "$(cat "$dir/text.db")"

# bad input: one line, exit 2 (usage) or 1 (runtime)
"$bin" record -d abc -o "$dir/b.db" 2>"$dir/err"
check "bad duration exit" 2 $?
check "bad duration one line" 1 "$(wc -l <"$dir/err")"
"$bin" record -d -5 -o "$dir/b.db" 2>/dev/null
check "negative duration exit" 2 $?
"$bin" record -d 1 2>/dev/null
check "missing -o exit" 2 $?
"$bin" record -d 1 -o /proc/nonexistent/x.db 2>"$dir/err"
check "unwritable path exit" 1 $?
check "unwritable path one line" 1 "$(wc -l <"$dir/err")"
"$bin" record --bogus 2>/dev/null
check "unknown option exit" 2 $?
"$bin" record -o "$dir/b.db" stray 2>/dev/null
check "command without -- refused" 2 $?
check "nothing created on bad input" no "$([ -e "$dir/b.db" ] && echo yes || echo no)"

# a traced command: recording ends when it exits, its status is stored
"$bin" record -o "$dir/c.db" -- sh -c 'exit 3' >/dev/null 2>&1
check "command exit: record exits 0" 0 $?
check "command exit stored" "command-exit|3|sh -c exit 3" \
	"$(q "$dir/c.db" "SELECT end_reason, command_exit_status, command FROM sessions")"
"$bin" record -o "$dir/d.db" -- /nonexistent/program 2>"$dir/err"
check "unrunnable command exit" 1 $?
check "unrunnable command message" 1 "$(grep -c "cannot run '/nonexistent/program'" "$dir/err")"

# SIGINT and SIGTERM: a complete session
for sig in INT TERM; do
	"$bin" record -o "$dir/sig$sig.db" >/dev/null 2>&1 &
	pid=$!
	sleep 1.5
	kill -$sig $pid
	wait $pid
	check "SIG$sig exit" 0 $?
	check "SIG$sig session" "1|signal" \
		"$(q "$dir/sig$sig.db" "SELECT complete, end_reason FROM sessions")"
done

# SIGKILL: the session stays readable, marked incomplete
"$bin" record -o "$dir/kill.db" >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -KILL $pid
wait $pid 2>/dev/null
check "killed recorder: database readable, session incomplete" "0|ok" \
	"$(q "$dir/kill.db" "SELECT complete || '|' || (SELECT * FROM pragma_integrity_check) FROM sessions")"
check "no BPF program left after SIGKILL" 0 "$(bpf_left)"

# --list-probes: the iommu tracepoints attach here
"$bin" record --list-probes >"$dir/probes" 2>&1
check "--list-probes exit" 0 $?
check "--list-probes shows iommu:map attached" 1 \
	"$(grep -c -E '^tracepoint +iommu:map +(tp_btf|raw_tp) +yes' "$dir/probes")"

# --tracepoints-only: the iommu:* tracepoints through eBPF, no vendor tracepoint, no domain or
# driver probe
"$bin" record --tracepoints-only --list-probes >"$dir/tp-probes" 2>&1
check "--tracepoints-only --list-probes exit" 0 $?
check "--tracepoints-only plans the tracepoints alone" "9|0" \
	"$(grep -c '^tracepoint ' "$dir/tp-probes")|$(grep -c -E '^(domain|driver|device)' "$dir/tp-probes")"
check "--tracepoints-only leaves the vendor tracepoints out" 3 \
	"$(grep -c -E '^tracepoint +intel_iommu:.* no +left out: --tracepoints-only' "$dir/tp-probes")"
check "--list-probes without it plans the domain probes" 1 \
	"$(grep -c -m1 '^domain' "$dir/probes")"
"$bin" record --tracepoints-only -d 0.5 -o "$dir/tp.db" >/dev/null 2>"$dir/err"
check "--tracepoints-only record exit" 0 $?
check "--tracepoints-only session: eBPF, complete" "bpf|1" \
	"$(q "$dir/tp.db" "SELECT capture, complete FROM sessions")"
check "no BPF program left after --tracepoints-only" 0 "$(bpf_left)"

# tracefs capture
"$bin" record --tracefs -d 0.5 -o "$dir/t.db" >/dev/null 2>"$dir/err"
check "tracefs record exit" 0 $?
check "tracefs session" "tracefs|1" "$(q "$dir/t.db" "SELECT capture, complete FROM sessions")"
check "tracefs instance removed" 0 "$(ls /sys/kernel/tracing/instances 2>/dev/null | grep -c iommutrace)"

# without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN: says what is missing, falls back to tracefs
setpriv --bounding-set=-bpf,-perfmon,-sys_admin -- "$bin" record -d 0.5 -o "$dir/nocap.db" \
	>/dev/null 2>"$dir/err"
check "no-capability record exit" 0 $?
check "no-capability warning names the capabilities" 1 \
	"$(grep -c 'eBPF needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN).*falling back to tracefs' "$dir/err")"
check "no-capability session" "tracefs|1" "$(q "$dir/nocap.db" "SELECT capture, complete FROM sessions")"

# capture modes: threshold (2 MiB) by default, stored with the session; bad combinations refused
# in one line before anything is created
"$bin" record -d 0.3 -o "$dir/mode.db" >"$dir/out" 2>&1
check "default mode stored" "threshold|2097152|1000000000|4096" \
	"$(q "$dir/mode.db" "SELECT mode, threshold_bytes, flush_interval_ns, aggregate_entries FROM capture_settings")"
check "default mode: summary counts aggregated calls" 1 "$(grep -c '^calls counted instead of recorded: ' "$dir/out")"
"$bin" record -d 0.3 --threshold 64K --flush-interval 250ms -o "$dir/mode64k.db" >/dev/null 2>&1
check "--threshold and --flush-interval stored" "0|threshold|65536|250000000" \
	"$?|$(q "$dir/mode64k.db" "SELECT mode, threshold_bytes, flush_interval_ns FROM capture_settings")"
for mode in per-event aggregate; do
	"$bin" record -d 0.3 --mode $mode -o "$dir/mode-$mode.db" >/dev/null 2>&1
	check "--mode $mode stored" "0|$mode" "$?|$(q "$dir/mode-$mode.db" "SELECT mode FROM capture_settings")"
done
check "per-event: no threshold stored" "NULL" \
	"$(q "$dir/mode-per-event.db" "SELECT IFNULL(threshold_bytes, 'NULL') FROM capture_settings")"
refuse_mode() {
	local what=$1 want=$2
	shift 2
	"$bin" record -d 0.3 -o "$dir/bad-mode.db" "$@" >/dev/null 2>"$dir/err"
	check "$what: exit 2, one line" "2|1" "$?|$(wc -l <"$dir/err")"
	check "$what: says why" 1 "$(grep -c -- "$want" "$dir/err")"
	check "$what: nothing created" no "$([ -e "$dir/bad-mode.db" ] && echo yes || echo no)"
}
refuse_mode "unknown mode" "give per-event, aggregate or threshold" --mode sampled
refuse_mode "--threshold with per-event" "drop it or --mode per-event" --mode per-event --threshold 1M
refuse_mode "--threshold with aggregate" "drop it or --mode aggregate" --threshold 1M --mode aggregate
refuse_mode "zero threshold" "bad threshold" --threshold 0
refuse_mode "--flush-interval with per-event" "--flush-interval stores counts" --mode per-event --flush-interval 2s
refuse_mode "bad flush interval" "bad flush interval" --flush-interval 10us
refuse_mode "--tracefs with aggregate" "needs eBPF capture" --tracefs --mode aggregate
"$bin" record --tracefs -d 0.3 -o "$dir/tmode.db" >/dev/null 2>"$dir/err"
check "tracefs: default mode stored as per-event, no warning" "0|per-event|0" \
	"$?|$(q "$dir/tmode.db" "SELECT mode FROM capture_settings")|$(grep -c warning "$dir/err")"

check_summary "record cli"
