#!/bin/bash
# `iommutrace restore` on this machine, over a binding journal in a temporary IOMMUTRACE_RUN_DIR
# whose entries name only PCI addresses this machine does not have (0000:00:1f.4-7): so no device
# is ever rebound here. (Putting real devices back after a SIGKILL is tested in the testbed:
# tests/vm/guest/restore.) Needs no root.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"

for bdf in 0000:00:1f.4 0000:00:1f.5 0000:00:1f.6 0000:00:1f.7; do
	if [ -e /sys/bus/pci/devices/$bdf ]; then
		echo "SKIP: this machine has a PCI device $bdf, which these tests name as absent"
		exit 77
	fi
done
run=$(mktemp -d /tmp/iommutrace-restore-XXXXXX)
out=$(mktemp)
err=$(mktemp)
trap 'rm -rf "$run" "$out" "$err"' EXIT
export IOMMUTRACE_RUN_DIR=$run
journal=$run/bindings
boot_id=$(cat /proc/sys/kernel/random/boot_id)
other_boot=00000000-1111-2222-3333-444444444444
# a pid that no longer runs
sh -c 'exit 0' &
dead=$!
wait $dead
# this shell's start time (/proc/PID/stat field 22; fields 3 on follow the command name's ')')
own_start=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)

# entry BDF DRIVER OVERRIDE BOUND_TO PID START BOOT_ID
entry() {
	mkdir -p "$journal"
	printf 'bdf=%s\ndriver=%s\ndriver_override=%s\nbound_to=%s\npid=%s\npid_start_ticks=%s\nboot_id=%s\n' \
		"$@" >"$journal/$1"
}

# restore ARGS...: runs it, stdout in $out, stderr in $err, exit status in $rc
restore() {
	rc=0
	"$bin" restore "$@" >"$out" 2>"$err" || rc=$?
}

# the journal's files and contents, to tell whether anything changed
snapshot() { (cd "$journal" 2>/dev/null && ls -A && cat ./* ./.[!.]* 2>/dev/null) | md5sum; }

"$bin" restore --help >/dev/null
check "--help exit" 0 $?
for args in "--bogus" "-n" "extra" "--dry-run=yes"; do
	restore $args
	check "restore $args: exit" 2 $rc
	check "restore $args: one line" 1 "$(wc -l <"$err")"
done

restore
check "empty journal: exit" 0 $rc
check "empty journal: its line" "nothing to restore: no entries in $journal" "$(cat "$out")"
check "empty journal: nothing on stderr" "" "$(cat "$err")"
mkdir -p "$journal"
restore --dry-run
check "empty journal folder, dry run: exit" 0 $rc
check "empty journal folder, dry run: its line" "nothing to restore: no entries in $journal" "$(cat "$out")"

# a device that is no longer in the system: its entry dropped
entry 0000:00:1f.7 nvme "" vfio-pci $dead 1 "$boot_id"
before=$(snapshot)
restore --dry-run
check "absent device, dry run: exit" 0 $rc
check "absent device, dry run: its line" \
	"0000:00:1f.7: no longer in the system; would drop its entry" "$(cat "$out")"
check "absent device, dry run: nothing changed" "$before" "$(snapshot)"
restore
check "absent device: exit" 0 $rc
check "absent device: its line" "0000:00:1f.7: no longer in the system; entry dropped" "$(cat "$out")"
check "absent device: nothing on stderr" "" "$(cat "$err")"
check "absent device: entry removed" no "$([ -e "$journal/0000:00:1f.7" ] && echo yes || echo no)"

# an entry of an earlier boot: dropped, whatever it names
entry 0000:00:1f.6 nvme vfio-pci uio_pci_generic $$ "$own_start" $other_boot
restore --dry-run
check "earlier boot, dry run: its line" "0000:00:1f.6: entry of an earlier boot; would drop it" "$(cat "$out")"
check "earlier boot, dry run: entry kept" yes "$([ -e "$journal/0000:00:1f.6" ] && echo yes || echo no)"
restore
check "earlier boot: exit" 0 $rc
check "earlier boot: its line" "0000:00:1f.6: entry of an earlier boot; dropped" "$(cat "$out")"
check "earlier boot: entry removed" no "$([ -e "$journal/0000:00:1f.6" ] && echo yes || echo no)"

# an entry whose process still runs (this shell, by pid and start time): left alone
entry 0000:00:1f.5 "" "" vfio-pci $$ "$own_start" "$boot_id"
restore
check "running owner: exit" 0 $rc
check "running owner: its line" \
	"0000:00:1f.5: left alone: the iommutrace that bound it to vfio-pci (pid $$) still runs" "$(cat "$out")"
check "running owner: entry kept" yes "$([ -e "$journal/0000:00:1f.5" ] && echo yes || echo no)"
# the same pid with another start time is a reused pid: the owner is gone
entry 0000:00:1f.5 "" "" vfio-pci $$ $((own_start + 1)) "$boot_id"
restore --dry-run
check "reused pid, dry run: the device is looked for" \
	"0000:00:1f.5: no longer in the system; would drop its entry" "$(cat "$out")"
rm "$journal/0000:00:1f.5"

# a malformed entry: named in one line and left; the others go on; exit 1
printf 'bdf=0000:00:1f.4\ndriver=nvme\n' >"$journal/0000:00:1f.4"
entry 0000:00:1f.7 "" "" vfio-pci $dead 1 "$boot_id"
entry 0000:00:1f.6 "" "" vfio-pci $dead 1 $other_boot
printf 'half an entry' >"$journal/.0000:00:1f.5.tmp-1"
before=$(snapshot)
restore --dry-run
check "mixed, dry run: exit" 1 $rc
check "mixed, dry run: nothing changed" "$before" "$(snapshot)"
restore
check "mixed: exit" 1 $rc
check "mixed: one line per entry, in BDF order" \
	"0000:00:1f.6: entry of an earlier boot; dropped
0000:00:1f.7: no longer in the system; entry dropped" "$(cat "$out")"
check "mixed: the malformed entry named in one line" \
	"iommutrace: error: $journal/0000:00:1f.4: not a binding journal entry (malformed); left as it is" \
	"$(cat "$err")"
check "mixed: what is left" ".0000:00:1f.5.tmp-1 0000:00:1f.4 " "$(ls -A "$journal" | tr '\n' ' ')"

# without root: a dry run reads the journal; a restore with entries is refused in one line
rm -f "$journal"/* "$journal"/.[!.]*
entry 0000:00:1f.7 nvme "" vfio-pci $dead 1 "$boot_id"
chmod 755 "$run" "$journal"
chmod 644 "$journal/0000:00:1f.7"
rc=0
as_nobody "$bin" restore --dry-run >"$out" 2>"$err" || rc=$?
check "dry run without root: exit" 0 $rc
check "dry run without root: its line" \
	"0000:00:1f.7: no longer in the system; would drop its entry" "$(cat "$out")"
rc=0
as_nobody "$bin" restore >"$out" 2>"$err" || rc=$?
check "restore without root: exit" 4 $rc
check "restore without root: one line" \
	"iommutrace: error: iommutrace restore needs CAP_DAC_OVERRIDE (it writes the devices' driver bindings in sysfs, which are root's); this process lacks CAP_DAC_OVERRIDE: run it as root" \
	"$(cat "$err")"
check "restore without root: the entry stays" yes "$([ -e "$journal/0000:00:1f.7" ] && echo yes || echo no)"

check_summary "restore cli"
