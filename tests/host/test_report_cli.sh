#!/bin/bash
# `iommutrace report` on a database imported from the ftrace fixture: each format is complete and
# well-formed; bad usage, unusable files and a missing session are refused in one line, with
# nothing on stdout. Needs no privilege (the views' rows are pinned in tests/unit/test_report.c).
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
# the schema this build writes
schema_version=$(sed -n 's/^#define IT_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$(dirname "$0")/../../common/schema.h")
fixture=$(realpath "$(dirname "$0")/../fixtures/ftrace_iommu.txt")
dir=$(mktemp -d /tmp/iommutrace-report-XXXXXX)
trap 'rm -rf "$dir"' EXIT
err=$dir/err
out=$dir/out
db=$dir/trace.db

# refused: exit status, one line on stderr, nothing on stdout
refused() {
	local what=$1 status=$2
	shift 2
	"$bin" report "$@" >"$out" 2>"$err"
	check "$what: exit" "$status" $?
	check "$what: one line" 1 "$(wc -l <"$err")"
	check "$what: nothing on stdout" 0 "$(wc -c <"$out")"
}

"$bin" report --help >"$out"
check "--help exit" 0 $?
check "--help: usage line" 1 "$(grep -c '^usage: iommutrace report DB' "$out")"

"$bin" import "$fixture" -o "$db" >/dev/null 2>&1
check "import the fixture" 0 $?

refused "no DB" 2
refused "two DBs" 2 "$db" "$db"
refused "unknown option" 2 --bogus "$db"
refused "bad --format" 2 --format xml "$db"
refused "bad --session" 2 --session one "$db"
refused "--session without its argument" 2 "$db" --session

refused "missing file" 1 "$dir/absent.db"
check "missing file: says so" 1 "$(grep -c 'absent.db: No such file or directory' "$err")"
printf 'not a database\n' >"$dir/text.db"
refused "a text file" 1 "$dir/text.db"
check "a text file: not an iommutrace database" 1 "$(grep -c 'is not an iommutrace database' "$err")"
sqlite3 "$dir/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
refused "another program's SQLite file" 1 "$dir/other.db"
check "another SQLite file: not an iommutrace database" 1 \
	"$(grep -c 'is not an iommutrace database' "$err")"
cp "$db" "$dir/newer.db"
sqlite3 "$dir/newer.db" "UPDATE meta SET value = '999' WHERE key = 'schema_version'"
refused "a newer schema" 1 "$dir/newer.db"
check "a newer schema: says to use a newer iommutrace" 1 "$(grep -c 'use a newer iommutrace' "$err")"
refused "--session 99" 1 --session 99 "$db"
check "--session 99: names the session" 1 "$(grep -c 'has no session 99' "$err")"

"$bin" report "$db" >"$out" 2>"$err"
check "text: exit" 0 $?
check "text: nothing on stderr" 0 "$(wc -c <"$err")"
check "text: the session's header" \
	"session 1: import (ftrace-text) of $fixture: 999 s, 13 events, 17 lost" "$(sed -n 2p "$out")"
for title in "maps, unmaps and page-table entries per IOMMU domain" \
	     "live bytes and churn per domain" "map call sizes per domain" \
	     "page sizes per domain" "mappings never unmapped" "lost events"; do
	check "text: section '$title'" 1 "$(grep -cx "$title" "$out")"
done
check "text: the session's maps and unmaps" \
	"all     -     -                 3  1.000 GiB       3          16 KiB      4  derived       -" \
	"$(grep -m1 '^  all ' "$out" | sed 's/^  //')"
check "text: the 1 GiB map never unmapped" 1 \
	"$(grep -c '^       1  -       0x40000000  0x4800000000       1 GiB       1 GiB' "$out")"
check "text: the loss, explained" 1 "$(grep -c '^  any    ftrace-lost    17  ftrace overwrote' "$out")"
check "text: no run sections (the session has none)" 0 "$(grep -c '^map run$\|^io run$' "$out")"

"$bin" report --json "$db" >"$out" 2>"$err"
check "json: exit" 0 $?
python3 -m json.tool "$out" >/dev/null
check "json: valid" 0 $?
check "json: every section, in order" \
	"session aggregates probes domains live call_sizes page_sizes live_mappings losses map_runs io_runs snapshot_groups snapshot_pages" \
	"$(python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["sections"]))' "$out")"
check "json: the map's IOVA as a hex string" 1 "$(grep -c '"iova": "0x40000000"' "$out")"

"$bin" report --format csv --session 1 "$db" >"$out" 2>"$err"
check "csv: exit" 0 $?
check "csv: a '# name: title' line per section" \
	"# session:|# aggregates:|# probes:|# domains:|# live:|# call_sizes:|# page_sizes:|# live_mappings:|# losses:|# map_runs:|# io_runs:|# snapshot_groups:|# snapshot_pages:" \
	"$(grep -v '^# note: ' "$out" | grep -o '^# [a-z_]*:' | paste -sd'|')"
check "csv: the header after each title" 13 "$(grep -v '^# note: ' "$out" | grep -A1 '^# [a-z_]*: ' | grep -c '^session_id,')"
check "csv: the loss row" "1,any,ftrace-lost,17,ftrace overwrote them before they were read (the file says so),2" \
	"$(grep '^1,any,' "$out")"

# A session whose recorder was killed, in an older schema whose views are gone: migrated, and
# reported without a duration, churn or losses.
cp "$db" "$dir/old.db"
sqlite3 "$dir/old.db" "UPDATE meta SET value = '6' WHERE key = 'schema_version';
	DROP VIEW report_session_view; DROP TABLE map_pieces_state; DROP TABLE map_pieces;
	DELETE FROM losses; UPDATE sessions SET complete = 0, end_mono_ns = NULL, end_reason = NULL"
"$bin" report "$dir/old.db" >"$out" 2>"$err"
check "old, incomplete: exit" 0 $?
check "old, incomplete: nothing on stderr" 0 "$(wc -c <"$err")"
check "old, incomplete: header" \
	"session 1: import (ftrace-text) of $fixture: duration unknown, 13 events, 17 lost, incomplete" \
	"$(sed -n 2p "$out")"
check "old, incomplete: no churn" 1 "$(grep -c '^  no churn: the session has no duration' "$out")"
check "old, incomplete: migrated" "$schema_version" "$(sqlite3 "$dir/old.db" "SELECT value FROM meta WHERE key = 'schema_version'")"

# output that cannot be written (stdout closed): exit 1 and one line saying so, in each format
for format in text json csv; do
	"$bin" report --format "$format" "$db" >&- 2>"$err"
	check "stdout closed, $format: exit" 1 $?
	check "stdout closed, $format: one line" "iommutrace: error: writing the output failed" \
		"$(cat "$err")"
done

check_summary "report cli"
