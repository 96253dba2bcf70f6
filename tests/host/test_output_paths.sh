#!/bin/bash
# Output paths are not ours to clobber: `import -o` and `record -o` refuse, in one line and with
# nothing written, a link (to a file or dangling), a device, a FIFO, a folder, the names SQLite
# treats specially (empty, :memory:, file: URIs), a name too long for its helper files, and helper
# files (-wal, -journal) that are links or left from another database. Two imports aimed at one
# new name (or two recordings): one wins, whole, the other fails in one line. An import stopped by SIGINT, SIGTERM or
# SIGHUP leaves nothing; a SIGKILLed one nothing under the target name. `record` needs root (BPF).
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
fixture=$(realpath "$(dirname "$0")/../fixtures/ftrace_iommu.txt")
dir=$(mktemp -d /tmp/iommutrace-paths-XXXXXX)
err=$(mktemp /tmp/iommutrace-paths-err-XXXXXX)
trap 'rm -rf "$dir" "$err"' EXIT
cd "$dir" || exit 1
echo keep >victim

# refused WHAT MESSAGE CMD...: exit 1, the one line of error MESSAGE (a grep -E pattern), and
# the folder as it was (the victim untouched)
refused() {
	local what=$1 message=$2 before
	shift 2
	before=$(ls -A | sort | tr '\n' ' ')
	timeout 20 "$bin" "$@" >/dev/null 2>"$err"
	check "$what: exit" 1 $?
	check "$what: one line" 1 "$(wc -l <"$err")"
	check "$what: says why" 1 "$(grep -cE "$message" "$err")"
	check "$what: nothing written" "$before" "$(ls -A | sort | tr '\n' ' ')"
	check "$what: the victim untouched" keep "$(cat victim)"
}

# each refusal for import, then for record
outputs() {
	local cmd=$1
	shift
	ln -s victim link.db
	refused "$cmd -o a link to a file" "link.db is a symbolic link: iommutrace does not write through links" "$@" -o link.db
	refused "$cmd --force -o a link to a file" "link.db is a symbolic link" "$@" -o link.db --force
	rm link.db
	ln -s nowhere/x.db dangling.db
	refused "$cmd -o a dangling link" "dangling.db is a symbolic link" "$@" -o dangling.db
	rm dangling.db
	# a device node of our own (c 1 3, the null device): a regression replaces it, not /dev/null
	if mknod null.db c 1 3 2>/dev/null; then
		refused "$cmd -o a character device" "null.db is a character device, not a file" "$@" -o null.db --force
		rm null.db
	else
		echo "SKIP: $cmd -o a device: mknod needs root"
		skipped=1
	fi
	mkfifo fifo.db
	refused "$cmd -o a FIFO" "fifo.db is a FIFO, not a file" "$@" -o fifo.db --force
	rm fifo.db
	mkdir folder.db
	refused "$cmd -o a folder" "folder.db is a directory, not a file" "$@" -o folder.db --force
	rmdir folder.db
	refused "$cmd -o ''" "'' is not a file name to SQLite \(an empty name" "$@" -o ''
	refused "$cmd -o :memory:" "':memory:' is not a file name to SQLite \(a database in memory" "$@" -o :memory:
	refused "$cmd -o file:x.db" "'file:x.db' is not a file name to SQLite \(a URI\)" "$@" -o file:x.db
	refused "$cmd -o a 250-byte name" "the name is too long" "$@" -o "$(printf 'n%.0s' $(seq 247)).db"
	ln -s victim h.db-wal
	refused "$cmd: a -wal that is a link" "h.db-wal is a symbolic link" "$@" -o h.db --force
	rm h.db-wal
	echo stale >h.db-journal
	refused "$cmd: a -journal left from another database" "h.db-journal is left from an earlier database" "$@" -o h.db
	rm h.db-journal
}

outputs import import "$fixture"
if [ "$(id -u)" = 0 ]; then
	outputs record record
	# two recordings aimed at one new name: the name is claimed as the capture starts
	"$bin" record -o rec.db -- sleep 1 >out1 2>err1 & p1=$!
	"$bin" record -o rec.db -- sleep 1 >out2 2>err2 & p2=$!
	wait $p1; s1=$?
	wait $p2; s2=$?
	check "record race: one recording succeeded" 1 "$(( (s1 == 0) + (s2 == 0) ))"
	# as it claims the name, or (if the winner has written by then) as it opens it
	check "record race: the other failed in one line" 1 "$(cat err1 err2 | grep -cE 'error: rec.db (was created by another process meanwhile: nothing written to it|exists; use --force)')"
	check "record race: the winner's database is whole" "ok|1" "$(sqlite3 rec.db 'pragma integrity_check' 'select complete from sessions' | tr '\n' '|' | sed 's/|$//')"
	rm -f rec.db out1 out2 err1 err2
else
	echo "SKIP: record -o: needs root (BPF); its refusals are not checked"
	skipped=1
fi

# two imports of one trace to one new name, at once: one wins, the other says so
python3 - "$dir/big.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    for i in range(200000):
        iova = 0x100000 + i * 0x1000
        out.write("  qemu-3333 [000] .... %d.%06d: map: IOMMU: iova=0x%016x paddr=0x%016x size=4096\n"
                  % (1 + i // 1000000, i % 1000000, iova, 0x123456000 + i * 0x1000))
PY
"$bin" import big.txt -o race.db >out1 2>err1 & p1=$!
"$bin" import big.txt -o race.db >out2 2>err2 & p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
check "race: one import succeeded" 1 "$(( (s1 == 0) + (s2 == 0) ))"
check "race: the other failed in one line" 1 "$(cat err1 err2 | grep -c 'race.db was created by another process meanwhile: nothing replaced')"
check "race: the winner's database is whole" "ok|200000" "$(sqlite3 race.db 'pragma integrity_check' 'select count(*) from maps' | tr '\n' '|' | sed 's/|$//')"
check "race: nothing else left" "big.txt err1 err2 out1 out2 race.db victim" "$(ls -A | sort | tr '\n' ' ' | sed 's/ $//')"
rm -f race.db out1 out2 err1 err2

# stopped by a signal: nothing of it is left; SIGKILL: nothing under the target name
for sig in INT TERM HUP; do
	"$bin" import big.txt -o stopped.db >/dev/null 2>"$err" &
	p=$!
	for _ in $(seq 100); do compgen -G 'stopped.db.partial-*/db' >/dev/null && break; sleep 0.02; done
	kill -$sig $p
	wait $p
	check "SIG$sig: exit" 1 $?
	check "SIG$sig: one line" "iommutrace: error: import stopped by a signal: nothing written to stopped.db" "$(cat "$err")"
	check "SIG$sig: nothing left" "" "$(ls -A | grep stopped)"
done
"$bin" import big.txt -o killed.db >/dev/null 2>&1 &
p=$!
for _ in $(seq 100); do compgen -G 'killed.db.partial-*/db' >/dev/null && break; sleep 0.02; done
{ kill -KILL $p; wait $p; } 2>/dev/null
check "SIGKILL: nothing under the target name" "" "$(ls -A | grep -x 'killed.db\(-wal\|-shm\|-journal\)\?')"

check_summary "output paths" || exit 1
[ -z "${skipped:-}" ] || exit 77
