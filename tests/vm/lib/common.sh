# shellcheck shell=bash
# Shared helpers of the testbed runner: logging, exit codes, the cache folder, content hashes.
# Sourced by tests/vm/run; every other lib/*.sh relies on these.

# Exit codes of tests/vm/run besides COMMAND's own status (documented in --help).
readonly VM_EXIT_USAGE=2
readonly VM_EXIT_SKIP=77      # this host lacks a tool the testbed needs (tests skip on it)
readonly VM_EXIT_TIMEOUT=124  # the guest ran past --timeout and was killed
readonly VM_EXIT_BROKEN=125   # the testbed itself failed: no kernel, guest did not come up, no results

VM_VERBOSE=${VM_VERBOSE:-0}

log() { printf 'vm: %s\n' "$*" >&2; }
debug() {
	if [ "$VM_VERBOSE" -gt 0 ]; then printf 'vm: %s\n' "$*" >&2; fi
}
# die CODE MESSAGE: one line on stderr (a skip, 77, says so), also kept in VM_ERROR_FILE when set
# (tests/vm/run: DIR/vm/error, which tests/vm/smoke-all puts in its summary)
die() {
	local code=$1 what=error; shift
	[ "$code" != "$VM_EXIT_SKIP" ] || what=skipped
	printf 'vm: %s: %s\n' "$what" "$*" >&2
	[ -z "${VM_ERROR_FILE:-}" ] || printf '%s\n' "$*" >"$VM_ERROR_FILE" 2>/dev/null || true
	exit "$code"
}

# The cache survives runs: kernel packages, extracted trees, initramfs layers, disk images.
vm_cache_dir() {
	printf '%s\n' "${IOMMUTRACE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iommutrace-vm}"
}

# Tools the testbed needs on the host; a missing one is a skip, not a failure, so that `make test`
# passes on machines without them while saying loudly what is missing.
require_host_tools() {
	local missing="" tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
	done
	[ -z "$missing" ] || die "$VM_EXIT_SKIP" "missing host tools:$missing (Debian: make deps, or apt-get install qemu-system-x86 busybox-static cpio xz-utils kmod)"
}

# A stable name for a set of inputs: file contents plus free-form strings. Layers are cached under it,
# so anything that changes what a layer would contain must be part of its key.
content_key() {
	local strings=$1; shift
	{
		printf '%s\n' "$strings"
		# names relative to the project: the same files in another checkout give the same key
		[ "$#" -eq 0 ] || sha256sum -- "$@" | sed "s#  $VM_ROOT/#  #"
	} | sha256sum | cut -c1-16
}

# Size arguments accept K/M/G suffixes (binary) like QEMU does; echo bytes.
size_bytes() {
	local s=$1 n unit
	n=${s%[KkMmGgTt]}
	unit=${s#"$n"}
	[[ $n =~ ^[0-9]+$ ]] || die "$VM_EXIT_USAGE" "bad size '$s' (use N, NK, NM or NG)"
	case $unit in
	"") echo "$n" ;;
	[Kk]) echo $((n << 10)) ;;
	[Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;;
	[Tt]) echo $((n << 40)) ;;
	esac
}
