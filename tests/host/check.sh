# Sourced by the shell tests: check DESCRIPTION EXPECTED ACTUAL counts a pass or prints a failure;
# check_summary NAME prints the closing line and returns non-zero when any check failed;
# use_idle_device WHAT sets up the CLI tests that name a PCI device; as_nobody runs a command
# without privilege.
pass=0
failures=0

check() {
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		failures=$((failures + 1))
		echo "FAIL: $1: expected '$2', got '$3'"
	fi
}

check_summary() {
	echo "$1: $pass passed, $failures failed"
	[ "$failures" -eq 0 ]
}

# use_idle_device WHAT: the CLI tests of WHAT (map, io) name only the host bridge 0000:00:00.0, which
# has no driver, as dev; they skip (exit 77) without root or when it is absent or bound. Sets err
# (a temporary file, removed on exit) and override_before (the device's driver_override).
use_idle_device() {
	dev=0000:00:00.0
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $1 tests need root"
		exit 77
	fi
	if [ ! -e /sys/bus/pci/devices/$dev ] || [ -e /sys/bus/pci/devices/$dev/driver ]; then
		echo "SKIP: $dev is absent or has a driver; not touching it"
		exit 77
	fi
	err=$(mktemp)
	trap 'rm -f "$err"' EXIT
	override_before=$(cat /sys/bus/pci/devices/$dev/driver_override)
}

# as_nobody CMD...: runs CMD as uid/gid 65534 with no capabilities and no groups (setpriv drops
# them with the uid); returns 77 when setpriv is missing
as_nobody() {
	command -v setpriv >/dev/null || return 77
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
}
