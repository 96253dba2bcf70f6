#!/bin/bash
# `iommutrace audit align` and `audit bar`: bad usage is refused in one line with exit 2, a
# database that cannot be audited in one line with exit 1; a real database (an import of
# tests/fixtures/ftrace_iommu.txt, then one with a BAR window added) audited in every format.
# Needs neither root nor a device.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
for tool in sqlite3 python3; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: the audit CLI tests need $tool (make deps installs sqlite3)"
		exit 77
	fi
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
err=$dir/err
db=$dir/import.db

"$bin" import tests/fixtures/ftrace_iommu.txt -o "$db" >/dev/null 2>"$err"
check "import of the fixture: exit" 0 $?

for sub in "" align bar; do
	"$bin" audit $sub --help >"$dir/help" 2>"$err"
	check "audit $sub --help: exit" 0 $?
	check "audit $sub --help: usage first" 1 "$(head -1 "$dir/help" | grep -c "^usage: iommutrace audit")"
done
check "audit bar --help names the IOTLB default" 1 \
	"$("$bin" audit bar --help | grep -c 'default 64, pcie-bench')"

# bad usage: one line, exit 2, before the database is opened
for args in "" "bogus $db" "--json align $db" "align" "bar" "align $db extra" "align --device 0000:00:05.0 $db" \
	    "align --iotlb-entries 8 $db" "bar --iotlb-entries 0 $db" "bar --iotlb-entries x $db" \
	    "bar --iotlb-entries 99999999999 $db" "bar --device 00:zz.0 $db" "bar --device $db" \
	    "align --format yaml $db" "align --session x $db" "bar --bogus $db" "align -q $db"; do
	"$bin" audit $args >/dev/null 2>"$err"
	check "audit $args: exit" 2 $?
	check "audit $args: one line" 1 "$(wc -l <"$err")"
done

# databases that cannot be audited: one line, exit 1
echo "not a database" >"$dir/text.db"
sqlite3 "$dir/other.db" "CREATE TABLE t(x)"
for args in "align $dir/missing.db" "bar $dir/missing.db" "align $dir/text.db" \
	    "bar $dir/other.db" "align --session 7 $db" "bar --device 0000:00:05.0 $db"; do
	"$bin" audit $args >/dev/null 2>"$err"
	check "audit $args: exit" 1 $?
	check "audit $args: one line" 1 "$(wc -l <"$err")"
done
check "a device without BARs: named" 1 "$(grep -c 'recorded no BAR of 0000:00:05.0' "$err")"

# an import: three maps, no BARs; every format
for sub in align bar; do
	"$bin" audit $sub "$db" >"$dir/out.txt" 2>"$err"
	check "audit $sub (text): exit" 0 $?
	check "audit $sub (text): nothing on stderr" 0 "$(wc -c <"$err")"
	"$bin" audit $sub --json "$db" >"$dir/out.json" 2>"$err"
	check "audit $sub --json: exit" 0 $?
	python3 -m json.tool "$dir/out.json" >/dev/null 2>&1
	check "audit $sub --json: valid JSON" 0 $?
	"$bin" audit $sub --format csv "$db" >"$dir/out.csv" 2>"$err"
	check "audit $sub --format csv: exit" 0 $?
done
check "align: the 1 GiB map at its largest page" 1 \
	"$("$bin" audit align "$db" | grep -c '^  1     1       1 GiB .*1 GiB x 1 .* none$')"
check "align --json: three map calls in three groups" 3 \
	"$("$bin" audit align --json "$db" | python3 -c \
	'import json, sys; print(sum(g["maps"] for g in json.load(sys.stdin)["sections"][0]["rows"]))')"
check "align --csv: one section per table" 2 "$("$bin" audit align --csv "$db" | grep -c '^# ')"
check "bar of an import: says why it is empty" 1 \
	"$("$bin" audit bar "$db" | grep -c 'no PCI BARs recorded in this session')"

# the same session with a BAR and the reference study's window in it (1 GiB at 246 MiB)
sqlite3 "$db" "INSERT INTO bars VALUES (1, '0000:00:05.0', 2, 6442450944, 2147483648, 1, 1);
	INSERT INTO maps(session_id, ts_ns, iova, paddr, size_bytes)
	 VALUES (1, 999999999999, 1073741824, 6700400640, 1073741824);
	INSERT INTO driver_maps(session_id, op, map_id, iova, paddr, pgsize_bytes, pgcount, source)
	 SELECT 1, 'map', MAX(map_id), 1073741824, 6700400640, 2097152, 512, 'observed' FROM maps;"
"$bin" audit align "$db" >"$dir/out.txt" 2>"$err"
check "align after the BAR window: exit" 0 $?
check "align: the reference study's fix" 1 "$(grep -c '^  #1 paddr misaligned: 1 GiB pages need paddr 1 GiB-aligned: place the buffer at BAR offset 0 or 1 GiB$' "$dir/out.txt")"
"$bin" audit bar --device 00:05.0 --iotlb-entries 1024 "$db" >"$dir/out.txt" 2>"$err"
check "bar --device --iotlb-entries: exit" 0 $?
check "bar: the conclusion against 1024 entries" 1 "$(grep -c '^  #1 covered by 512 entries of 2 MiB: fits the 1024-entry IOTLB; at 1 GiB pages 1 entry would cover it$' "$dir/out.txt")"
"$bin" audit bar --json "$db" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sections"][0]["rows"]
print(rows[0]["bar_offset_bytes"], rows[0]["entries"], rows[0]["best_entries"], rows[0]["iova"])' \
	>"$dir/out.txt" 2>"$err"
check "bar --json: the window's offset, entries and IOVA" "257949696 512 1 0x40000000" \
	"$(cat "$dir/out.txt")"
"$bin" audit bar --csv "$db" >"$dir/out.csv" 2>"$err"
check "bar --csv: exit" 0 $?
check "bar --csv: the window's conclusion" 1 "$(grep -c ',covered by 512 entries of 2 MiB: more than the 64-entry IOTLB; at 1 GiB pages 1 entry would cover it$' "$dir/out.csv")"

check_summary test_audit_cli
