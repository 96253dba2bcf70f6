# Sourced by the shell tests: check DESCRIPTION EXPECTED ACTUAL counts a pass or prints a failure;
# check_summary NAME prints the closing line and returns non-zero when any check failed.
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
