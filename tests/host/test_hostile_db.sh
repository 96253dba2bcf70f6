#!/bin/bash
# A database from elsewhere is data, never code or terminal control: SQL text a crafted file keeps
# in its schema is not run by `report` (it makes the lifetimes' indexes from its own text); its
# strings reach the terminal without escape sequences or line breaks; CSV quotes what a
# spreadsheet would take for a formula; a malformed trace line quoted by `import -v` is inert too.
# Needs no privilege.
set -u
bin=$(realpath "${IOMMUTRACE:-build/iommutrace}")
. "$(dirname "$0")/check.sh"
fixture=$(realpath "$(dirname "$0")/../fixtures/ftrace_iommu.txt")
dir=$(mktemp -d /tmp/iommutrace-hostile-XXXXXX)
trap 'rm -rf "$dir"' EXIT
db=$dir/trace.db
out=$dir/out
err=$dir/err

"$bin" import "$fixture" -o "$db" >/dev/null 2>&1
check "import the fixture" 0 $?

# SQL in the schema: the index the lifetimes sweep drops and makes again, followed by statements
# that write a file of the attacker's choosing; the sweep runs again once its state is gone
sqlite3 "$db" 2>"$err" <<SQL
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = 'CREATE INDEX map_pieces_by_session ON map_pieces(session_id,
  domain_ptr, mapped_ns); ATTACH ''$dir/owned.db'' AS e; CREATE TABLE e.t(x);
  INSERT INTO e.t VALUES (''written by the database'')' WHERE name = 'map_pieces_by_session';
PRAGMA writable_schema = OFF;
DELETE FROM map_pieces_state;
SQL
check "the schema crafted" "" "$(cat "$err")"
"$bin" report "$db" >"$out" 2>"$err"
check "report of the crafted schema: exit" 0 $?
check "report of the crafted schema: nothing written by its SQL" absent "$([ -e "$dir/owned.db" ] && echo present || echo absent)"
check "report of the crafted schema: the lifetimes made again" 1 "$(sqlite3 "$db" 'SELECT COUNT(*) FROM map_pieces_state')"

# terminal control in strings: ESC sequences (clear screen, a window title), the C1 CSI
# (U+009B), DEL, line breaks, bytes that are not UTF-8
sqlite3 "$db" "UPDATE sessions SET source_path = 'x' || char(27) || '[2J' || char(27) ||
  ']0;owned' || char(7) || char(155) || '31m' || char(127) || char(10) || 'fake line',
  hostname = '=HYPERLINK(\"http://x\")', kernel_release = CAST(x'ff' AS TEXT) || 'z'" 2>"$err"
check "hostile strings stored" "" "$(cat "$err")"
for format in text csv; do
	"$bin" report --format $format "$db" >"$out" 2>"$err"
	check "report --format $format: exit" 0 $?
	# in CSV the data keeps its bytes, quoted; the comment and note lines do not
	if [ $format = text ]; then lines=$out; else lines=$dir/comments; grep '^#' "$out" >"$lines"; fi
	check "report --format $format: no control character" 0 "$(LC_ALL=C grep -c '[[:cntrl:]]' "$lines")"
	check "report --format $format: no C1 control" 0 "$(LC_ALL=C grep -c $'\xc2[\x80-\x9f]' "$lines")"
	check "report --format $format: no line starts with the injected text" 0 "$(grep -c '^fake line' "$lines")"
done
"$bin" report --csv "$db" >"$out" 2>&1
check "CSV: a formula-like text is quoted with a ' first" 1 "$(grep -c "\"'=HYPERLINK(\"\"http://x\"\")\"" "$out")"
"$bin" report --json "$db" >"$out" 2>&1
check "JSON: still one valid document" 0 "$(python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" >/dev/null 2>&1; echo $?)"

# a malformed trace line with escapes, quoted by import -v
{ cat "$fixture"; printf 'bad line \033]0;owned\007\033[31mred\302\233x\n'; } >"$dir/hostile.txt"
"$bin" import -v "$dir/hostile.txt" -o "$dir/h.db" >/dev/null 2>"$err"
check "import -v of a hostile line: exit" 0 $?
check "import -v: the line quoted" 1 "$(grep -c 'malformed line: bad line' "$err")"
check "import -v: no control character in its messages" 0 "$(LC_ALL=C grep -c '[[:cntrl:]]' "$err")"
check "import -v: no C1 control" 0 "$(LC_ALL=C grep -c $'\xc2[\x80-\x9f]' "$err")"

# a capture_settings row whose mode is NULL (the column's NOT NULL dropped): a note, no crash
cp "$db" "$dir/nullmode.db"
sqlite3 "$dir/nullmode.db" "DROP TABLE capture_settings; CREATE TABLE capture_settings(
	session_id INTEGER PRIMARY KEY, mode TEXT, threshold_bytes INTEGER,
	flush_interval_ns INTEGER, aggregate_entries INTEGER);
	INSERT INTO capture_settings(session_id) VALUES (1)"
"$bin" report "$dir/nullmode.db" >"$out" 2>"$err"
check "NULL capture mode: exit" 0 $?
check "NULL capture mode: said as unknown" 1 "$(grep -c '^  capture mode unknown: ' "$out")"

check_summary "hostile databases" || exit 1
