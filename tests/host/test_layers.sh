#!/bin/bash
# The layers the build enforces (tests/check-layers, tests/layer-libs): the project's libraries
# pass; a library that calls a function only a layer not below it defines fails the build with
# one line naming both, and so does a source including such a layer's header; a test links only
# the libraries of the layers it includes. Needs no privilege.
set -u
. "$(dirname "$0")/check.sh"
build=$(realpath "$(dirname "${IOMMUTRACE:-build/iommutrace}")")
dir=$(mktemp -d /tmp/iommutrace-layers-XXXXXX)
trap 'rm -rf "$dir"' EXIT

tests/check-layers "$build" 2>"$dir/err"
check "the project's libraries keep to their layers" "0|" "$?|$(cat "$dir/err")"

# five one-function layers: each calls the one below it, as allowed
lib() {	# lib LAYER CALLS: a library of LAYER whose function calls CALLS (or nothing)
	local body=${2:+"$2();"}
	printf 'void %s(void);\nvoid %s_fn(void) { %s }\n' "${2:-unused_decl}" "$1" "$body" >"$dir/$1.c"
	cc -c "$dir/$1.c" -o "$dir/$1.o" && rm -f "$dir/lib$1.a" && ar rcs "$dir/lib$1.a" "$dir/$1.o"
}
lib common ""
lib tracer common_fn
lib analyzer common_fn
lib harness common_fn
lib cli tracer_fn
tests/check-layers "$dir" 2>"$dir/err"
check "calls down: allowed" "0|" "$?|$(cat "$dir/err")"

lib common analyzer_fn
tests/check-layers "$dir" 2>"$dir/err"
check "common calling the analyzer: refused" 1 "$?"
check "... in one line naming both" "check-layers: common calls up into analyzer (analyzer_fn):" \
	"$(cut -d' ' -f1-7 "$dir/err")"
lib common ""

lib tracer analyzer_fn
tests/check-layers "$dir" 2>"$dir/err"
check "the tracer calling the analyzer (a sibling): refused" \
	"check-layers: tracer calls up into analyzer (analyzer_fn):" "$(cut -d' ' -f1-7 "$dir/err")"
lib tracer common_fn

lib harness cli_fn
tests/check-layers "$dir" 2>"$dir/err"
check "the harness calling the cli: refused" \
	"check-layers: harness calls up into cli (cli_fn):" "$(cut -d' ' -f1-7 "$dir/err")"
lib harness common_fn

# includes: a source of one layer naming a header of a layer not below it
mkdir -p "$dir/src/common" "$dir/src/io" "$dir/src/analyzer"
printf '#include "common/log.h"\n' >"$dir/src/analyzer/ok.c"
printf '#include "common/log.h"\n' >"$dir/src/io/ok.c"
tests/check-layers "$dir" "$dir/src" 2>"$dir/err"
check "includes of the layer below: allowed" "0|" "$?|$(cat "$dir/err")"
printf '#include "analyzer/views.h"\n' >"$dir/src/common/up.h"
tests/check-layers "$dir" "$dir/src" 2>"$dir/err"
check "a common header including the analyzer's: refused" 1 "$?"
check "... in one line naming both" "check-layers: common includes analyzer's headers (common/up.h):" \
	"$(cut -d' ' -f1-6 "$dir/err")"
rm "$dir/src/common/up.h"
printf '#include "cli/options.h"\n' >"$dir/src/io/up.c"
tests/check-layers "$dir" "$dir/src" 2>"$dir/err"
check "the harness (io/) including the cli's: refused" \
	"check-layers: harness includes cli's headers (io/up.c):" "$(cut -d' ' -f1-6 "$dir/err")"
rm "$dir/src/io/up.c"

# which libraries a test links
check "a common test links common only" "$build/libcommon.a" \
	"$(tests/layer-libs "$build" tests/unit/test_parse.c | xargs)"
check "an analyzer test (through tests/analyzer_fixture.h) links analyzer and common" \
	"$build/libanalyzer.a $build/libcommon.a" \
	"$(tests/layer-libs "$build" tests/unit/test_lifetimes.c | xargs)"
check "a tracer test links tracer and common" "$build/libtracer.a $build/libcommon.a" \
	"$(tests/layer-libs "$build" tests/unit/test_event_writer.c | xargs)"
check "a cli test links every layer" \
	"$build/libcli.a $build/libtracer.a $build/libanalyzer.a $build/libharness.a $build/libcommon.a" \
	"$(tests/layer-libs "$build" tests/unit/test_devices_cmd.c | xargs)"

check_summary layers
