#!/bin/bash
# A database is untrusted input, and so is the medium under it: report and audit read a database on
# read-only media (from a copy in memory, said in one line); a trace that starts at 0 keeps its start;
# sizes beyond what SQLite's signed integers hold are refused, never stored negative; an import onto
# a disk that fills at any stage fails in one line and leaves no file. Needs root (mounts tmpfs).
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: the read-only and full-disk checks mount tmpfs: they need root"
	exit 77
fi
fixture=$(realpath "$(dirname "$0")/../fixtures/ftrace_iommu.txt")
dir=$(mktemp -d /tmp/iommutrace-media-XXXXXX)
mnt=$dir/mnt
mkdir "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$dir"' EXIT
err=$dir/err
out=$dir/out

"$bin" import "$fixture" -o "$dir/trace.db" >/dev/null 2>&1
check "import the fixture" 0 $?
"$bin" report "$dir/trace.db" >"$dir/report.rw"
"$bin" audit align "$dir/trace.db" >"$dir/align.rw"

# read_only WHAT: report and audit align of $mnt/t.db give what they give on a writable copy, with
# one line on stderr, and leave the file and its directory as they were
read_only() {
	local what=$1 before
	before=$(ls -l --time-style=full-iso "$mnt" | md5sum; md5sum <"$mnt/t.db")
	"$bin" report "$mnt/t.db" >"$out" 2>"$err"
	check "$what: report exit" 0 $?
	check "$what: report as on a writable file" "" "$(diff "$dir/report.rw" "$out" | grep -v "$mnt\|$dir" | grep '^[<>]')"
	check "$what: one line on stderr" 1 "$(wc -l <"$err")"
	check "$what: says it read a copy" 1 "$(grep -c 'is read-only (.*): analysed from a copy in memory; nothing written to it' "$err")"
	"$bin" audit align "$mnt/t.db" >"$out" 2>"$err"
	check "$what: audit align exit" 0 $?
	check "$what: audit align as on a writable file" "" "$(diff "$dir/align.rw" "$out" | grep -v "$mnt\|$dir" | grep '^[<>]')"
	check "$what: the file and its directory unchanged" "$before" \
		"$(ls -l --time-style=full-iso "$mnt" | md5sum; md5sum <"$mnt/t.db")"
}

# a read-only mount: an old schema that needs migrating, map lifetimes to compute
mount -t tmpfs -o size=16m tmpfs "$mnt"
cp "$dir/trace.db" "$mnt/t.db"
sqlite3 "$mnt/t.db" "UPDATE meta SET value = '6' WHERE key = 'schema_version';
	DROP TABLE map_pieces_state; DROP TABLE map_pieces"
mount -o remount,ro "$mnt"
read_only "read-only mount"
umount "$mnt"

# a WAL database (a recorder killed: its -wal holds committed rows) in a directory that is read-only
mount -t tmpfs -o size=16m tmpfs "$mnt"
cp "$dir/trace.db" "$mnt/t.db"
sqlite3 "$mnt/t.db" "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
	UPDATE sessions SET command = 'kept in the wal'" >/dev/null
python3 - "$mnt/t.db" <<'EOF'
import os, sqlite3, sys
# a connection left open when the process dies: the -wal and -shm stay, uncheckpointed
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("UPDATE sessions SET command = 'kept in the wal'")
os._exit(0)
EOF
check "WAL: a -wal beside it" 1 "$(ls "$mnt" | grep -c '^t.db-wal$')"
sqlite3 "$dir/trace.db" "UPDATE sessions SET command = 'kept in the wal'"
"$bin" report "$dir/trace.db" >"$dir/report.rw"
"$bin" audit align "$dir/trace.db" >"$dir/align.rw"
mount -o remount,ro "$mnt"
read_only "WAL, read-only directory"
umount "$mnt"

# a file this user may not write, in a directory it may not write
if command -v setpriv >/dev/null; then
	mkdir "$dir/locked"
	cp "$dir/trace.db" "$dir/locked/t.db"
	chmod 0444 "$dir/locked/t.db"
	chmod 0555 "$dir/locked"
	chmod 0755 "$dir"
	as_nobody "$bin" report "$dir/locked/t.db" >"$out" 2>"$err"
	check "no write permission: report exit" 0 $?
	check "no write permission: says it read a copy" 1 "$(grep -c 'is read-only (Permission denied): analysed from a copy' "$err")"
	check "no write permission: one line on stderr" 1 "$(wc -l <"$err")"
fi

# A boot-time trace: its first event at 0.000000. The session starts at 0 and lasts 2 s.
cat >"$dir/boot.txt" <<'EOF'
       swapper/0-1       [000] .....     0.000000: map: IOMMU: iova=0x0000000000001000 - 0x0000000000002000 paddr=0x0000000000005000 size=4096
       swapper/0-1       [000] .....     1.000000: unmap: IOMMU: iova=0x0000000000001000 - 0x0000000000002000 size=4096 unmapped_size=4096
       swapper/0-1       [000] .....     2.000000: map: IOMMU: iova=0x0000000000003000 - 0x0000000000004000 paddr=0x0000000000007000 size=4096
EOF
"$bin" import "$dir/boot.txt" -o "$dir/boot.db" >/dev/null 2>"$err"
check "ts 0: import exit" 0 $?
check "ts 0: session start and end" "0|2000000000" \
	"$(sqlite3 "$dir/boot.db" "SELECT start_mono_ns, end_mono_ns FROM sessions")"
"$bin" report "$dir/boot.db" >"$out" 2>"$err"
check "ts 0: report exit" 0 $?
check "ts 0: the session lasted 2 s" 1 "$(grep -c '^session 1: import (ftrace-text) of .*: 2 s, 3 events, none lost$' "$out")"
check "ts 0: the first map mapped at 0 s, unmapped at 1 s" "1|0|1000000000" \
	"$(sqlite3 "$dir/boot.db" "SELECT map_id, mapped_ns, unmapped_ns FROM map_pieces WHERE map_id = 1")"

# Sizes from 2^63 on: refused as out of range, counted as lost, never stored negative.
cat >"$dir/huge.txt" <<'EOF'
            qemu-3333  [000] ....  10.000000: map: IOMMU: iova=0x0000000000100000 paddr=0x0000000123456000 size=8192
            qemu-3333  [000] ....  10.000001: unmap: IOMMU: iova=0x0000000000000000 size=18446744073709551615 unmapped_size=8192
            qemu-3333  [000] ....  10.000002: map: IOMMU: iova=0x0000000000200000 paddr=0x0000000123456000 size=9223372036854775808
            qemu-3333  [000] ....  10.000003: map: IOMMU: iova=0xfffffffffffff000 paddr=0xfffffffffffff000 size=4096
            qemu-3333  [000] ....  10.000004: unmap: IOMMU: iova=0x0000000000100000 size=8192 unmapped_size=9223372036854775807
EOF
"$bin" import "$dir/huge.txt" -o "$dir/huge.db" >"$out" 2>"$err"
check "2^63: import exit" 0 $?
check "2^63: one warning" 1 "$(grep -c 'beyond 2^63-1, more than the database holds' "$err")"
check "2^63: the refused counted as lost" "map|1;unmap|1" \
	"$(sqlite3 "$dir/huge.db" "SELECT event, SUM(lost) FROM losses WHERE reason = 'out-of-range' GROUP BY event" | paste -sd';')"
check "2^63: no negative size stored" 0 \
	"$(sqlite3 "$dir/huge.db" "SELECT (SELECT COUNT(*) FROM maps WHERE size_bytes < 0) + (SELECT COUNT(*) FROM unmaps WHERE size_bytes < 0 OR unmapped_bytes < 0) + (SELECT COUNT(*) FROM driver_maps WHERE pgsize_bytes < 0 OR pgcount < 0)")"
check "2^63: the top address stored exactly" "0xfffffffffffff000|0xfffffffffffff000|4096" \
	"$(sqlite3 "$dir/huge.db" "SELECT iova_hex, paddr_hex, size_bytes FROM maps_view WHERE map_id = 2")"
check "2^63: the largest size stored exactly" "9223372036854775807" \
	"$(sqlite3 "$dir/huge.db" "SELECT unmapped_bytes FROM unmaps WHERE unmap_id = 1")"
for format in text json csv; do
	"$bin" report --format $format "$dir/huge.db" >"$out" 2>"$err"
	check "2^63: report $format exit" 0 $?
	check "2^63: report $format: no negative size" "" "$(grep -oE '(^|[ ,:|])-[0-9]+' "$out" | head -3)"
done
"$bin" report "$dir/huge.db" >"$out" 2>&1
check "2^63: the loss explained, for maps and unmaps" 2 "$(grep -c 'out-of-range .*more than the database holds' "$out")"

# A disk that fills at each stage of an import: exit 1, one line, no database or -wal left.
awk 'BEGIN { for (i = 0; i < 6000; i++)
	printf "            qemu-3333  [000] ....  %d.%06d: map: IOMMU: iova=0x%016x paddr=0x%016x size=%d\n",
		10 + int(i / 1000), i % 1000, 0x100000 + i * 0x3000, 0x123456000 + i * 0x5000, 4096 * (1 + i % 3) }' \
	>"$dir/big.txt"
stages=""
for kib in 256 512 768 1024 1280 1536 1792 2048 2560 3072 4096 8192; do
	mount -t tmpfs -o size=${kib}k tmpfs "$mnt"
	"$bin" import "$dir/big.txt" -o "$mnt/big.db" >"$out" 2>"$err"
	rc=$?
	left=$(ls -A "$mnt" | paste -sd' ')
	if [ $rc = 0 ]; then
		check "full at ${kib} KiB: a complete database" "ok" "$(sqlite3 "$mnt/big.db" 'PRAGMA integrity_check')"
		check "full at ${kib} KiB: only the database" "big.db" "$left"
		check "full at ${kib} KiB: all rows" 6000 "$(sqlite3 "$mnt/big.db" 'SELECT COUNT(*) FROM maps')"
	else
		check "full at ${kib} KiB: exit" 1 $rc
		check "full at ${kib} KiB: one line" 1 "$(wc -l <"$err")"
		check "full at ${kib} KiB: says the disk is full" 1 "$(grep -c 'disk is full' "$err")"
		check "full at ${kib} KiB: nothing on stdout" 0 "$(wc -c <"$out")"
		check "full at ${kib} KiB: nothing left" "" "$left"
		stages="$stages $(sed -n 's/.*full (\([^)]*\)).*/\1/p; s/.*cannot \(create the schema\).*/\1/p' "$err")"
	fi
	umount "$mnt"
done
echo "disk-full stages hit:$stages"

check_summary "db media"
