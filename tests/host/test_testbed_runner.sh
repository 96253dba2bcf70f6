#!/bin/bash
# The testbed's runners without booting anything: tests/vm/run refuses a bad --kernel and skips,
# with its reason, a kernel it cannot have (offline, with an empty cache); tests/vm/smoke-all,
# driven by a stand-in tests/vm/run, boots again only a guest that never reached /init, counts a
# guest that failed after /init (a panic) as a failure without a second boot, and lists every skip
# with its reason. Needs no root and no network.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/check.sh"
tmp=$(mktemp -d /tmp/iommutrace-runner-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for tool in qemu-system-x86_64 busybox cpio apt-get dpkg-deb depmod perl; do
	if ! PATH=$PATH:/usr/sbin:/sbin command -v $tool >/dev/null; then
		echo "SKIP: the testbed's host tool $tool is missing (make deps installs it)"
		exit 77
	fi
done

# 1. tests/vm/run: a --kernel that is no line nor version; a kernel that cannot be had
IOMMUTRACE=/bin/true "$root/tests/vm/run" --kernel 'newest;x' --out "$tmp/o" -- true >"$tmp/out" 2>&1
check "run: a bad --kernel is a usage error" 2 $?
IOMMUTRACE=/bin/true IOMMUTRACE_VM_OFFLINE=1 IOMMUTRACE_VM_CACHE=$tmp/cache \
	"$root/tests/vm/run" --kernel newest --out "$tmp/o" -- true >"$tmp/out" 2>&1
check "run: offline with an empty cache, newest is a skip" 77 $?
check "run: in one line" 1 "$(wc -l <"$tmp/out")"
check "run: the line says which kernel and why" 1 \
	"$(grep -c '^vm: skipped: kernel newest could not be had: no package lists of sid cached and IOMMUTRACE_VM_OFFLINE=1; ' "$tmp/out")"
check "run: the reason kept in DIR/vm/error" "$(sed 's/^vm: skipped: //' "$tmp/out")" "$(cat "$tmp/o/vm/error")"

# 2. smoke-all over a stand-in runner: what each boot does is keyed by KERNEL-VENDOR-SCENARIO
mkdir -p "$tmp/tree/tests/vm"
cp "$root/tests/vm/smoke-all" "$tmp/tree/tests/vm/"
cat >"$tmp/tree/tests/vm/run" <<'EOF'
#!/bin/bash
# stand-in for tests/vm/run: OUT/vm/{console.log,output.log,outcome.env,testbed.env,error} as the
# real one leaves them, the exit status by case; each call counted in boots.log
kernel=6.1 vendor=intel out=""
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;; --vendor) vendor=$2; shift ;; --out) out=$2; shift ;;
	--iommu) [ "$2" = off ] && vendor=off; shift ;;
	--append | --memory | --timeout) shift ;;
	--) shift; break ;;
	esac
	shift
done
what="$kernel-$vendor-${1##*/}"
echo "$what" >>boots.log
tries=$(grep -cx "$what" boots.log)
rm -rf "$out"; mkdir -p "$out/vm"
printf 'KERNEL_RELEASE=6.1.0-99-amd64\nKERNEL_DEB_VERSION=6.1.999-1\nKERNEL_SUITE=bookworm\n' >"$out/vm/testbed.env"
outcome() { printf 'REACHED_INIT=%s\n' "$1" >"$out/vm/outcome.env"; }
case $what in
6.1-intel-all)	# the emulator's early oops, then a good boot
	if [ "$tries" = 1 ]; then echo "early oops, try 1" >"$out/vm/console.log"; outcome 0; exit 125; fi
	echo "console of try 2" >"$out/vm/console.log"; outcome 1
	: >"$out/io-bar.env"; : >"$out/io-write.env"; : >"$out/io-write-uring.env"
	exit 0 ;;
6.1-amd-all)	# a panic after /init
	echo "Kernel panic - not syncing: sysrq triggered crash" >"$out/vm/console.log"; outcome 1; exit 125 ;;
6.1-intel-sp_off)
	outcome 1; echo "SKIP: hugetlb1g: no free 1 GiB page" >"$out/vm/output.log"; exit 0 ;;
6.1-off-all)
	echo "kernel 6.1 could not be had: offline" >"$out/vm/error"; exit 77 ;;
*)	outcome 1; exit 0 ;;
esac
EOF
printf '#!/bin/sh\necho "host-check: fine"\n' >"$tmp/tree/tests/vm/host-check"
chmod +x "$tmp/tree/tests/vm/run" "$tmp/tree/tests/vm/host-check"
(cd "$tmp/tree" && BUILD=b tests/vm/smoke-all 6.1 >"$tmp/smoke" 2>&1)
check "smoke-all: exits non-zero for the panicked boot" 1 $?
check "smoke-all: closing line" "vm: 2 passed, 1 failed, 1 skipped" "$(tail -n 1 "$tmp/smoke")"
check "smoke-all: the boot that never reached /init booted twice" 2 "$(grep -cx 6.1-intel-all "$tmp/tree/boots.log")"
check "smoke-all: the panic after /init booted once" 1 "$(grep -cx 6.1-amd-all "$tmp/tree/boots.log")"
check "smoke-all: the first console kept" "early oops, try 1" "$(cat "$tmp/tree/b/vm/smoke-6.1-intel.first-console.log")"
check "smoke-all: the retried boot named" 1 "$(grep -c '^booted twice (never reached /init the first time): 6.1-intel ' "$tmp/smoke")"
check "smoke-all: the panic is a failure with its console" 2 \
	"$(grep -c -e '^failed: 6.1-amd$' -e 'Kernel panic - not syncing' "$tmp/smoke")"
check "smoke-all: a scenario's skip listed with its reason" 1 \
	"$(grep -cx '  6.1-intel-sp_off: SKIP: hugetlb1g: no free 1 GiB page' "$tmp/smoke")"
check "smoke-all: a skipped boot listed with the runner's reason" 1 \
	"$(grep -cx '  6.1-iommu-off: kernel 6.1 could not be had: offline' "$tmp/smoke")"
check "smoke-all: each boot's kernel named" 4 "$(grep -c '^  6.1-.*: 6.1.0-99-amd64 (linux 6.1.999-1, bookworm): exit' "$tmp/smoke")"

check_summary testbed_runner
