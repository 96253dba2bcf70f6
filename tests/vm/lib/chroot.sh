# shellcheck shell=bash
# Debian chroots for building against a guest kernel with the toolchain of the kernel's own suite:
# a minbase debootstrap per suite, made once under the cache and reused, with packages added on demand.

# suite_chroot SUITE SOURCES PACKAGE...: echo the path of the cached chroot of SUITE with the
# PACKAGEs installed. SOURCES, "ARCHIVE SUITE" pairs separated by commas as in KSPEC_SOURCES, become
# the chroot's sources.list: a kernel's newest headers can be in the security archive alone, which
# debootstrap does not read.
suite_chroot() {
	local suite=$1 sources=$2; shift 2
	local dir missing=() pkg
	dir="$(vm_cache_dir)/chroots/$suite"
	[ -d "$dir" ] || debootstrap_chroot "$suite" "$sources" "$dir"
	# one chroot serves a suite and its backports: the sources of the kernel at hand
	apt_sources_list "$sources" >"$dir/etc/apt/sources.list.new"
	if cmp -s "$dir/etc/apt/sources.list.new" "$dir/etc/apt/sources.list"; then
		rm "$dir/etc/apt/sources.list.new"
	else
		mv "$dir/etc/apt/sources.list.new" "$dir/etc/apt/sources.list"
	fi
	for pkg in "$@"; do
		dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${db:Status-Status}' "$pkg" 2>/dev/null |
			grep -qx installed || missing+=("$pkg")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		log "installing ${missing[*]} in the $suite chroot"
		{ chroot_apt "$dir" update && chroot_apt "$dir" install --no-install-recommends "${missing[@]}"; } \
			>"$dir.log" 2>&1 || die "$VM_EXIT_BROKEN" "installing ${missing[*]} in the $suite chroot failed (log: $dir.log)"
	fi
	printf '%s\n' "$dir"
}

# Made in DIR.tmp and renamed when complete, so that an existing DIR is a whole chroot.
debootstrap_chroot() {
	local suite=$1 sources=$2 dir=$3
	remove_chroot "$dir.tmp"
	mkdir -p "$(dirname "$dir")"
	log "creating a $suite chroot for module builds (debootstrap, once: about 1-2 min, 0.8-1.1 GB)"
	debootstrap --variant=minbase "$suite" "$dir.tmp" "${IOMMUTRACE_VM_MIRROR:-http://deb.debian.org}/debian" \
		>"$dir.log" 2>&1 || die "$VM_EXIT_BROKEN" "debootstrap of $suite failed (log: $dir.log)"
	apt_sources_list "$sources" >"$dir.tmp/etc/apt/sources.list"
	mv "$dir.tmp" "$dir"
}

# A run killed inside the chroot can leave its /proc mounted; never let rm walk into a mount.
remove_chroot() {
	if mountpoint -q "$1/proc"; then umount "$1/proc"; fi
	rm -rf --one-file-system "$1"
}

# in_chroot DIR COMMAND...: run COMMAND inside DIR with /proc mounted for its duration (maintainer
# scripts and the kernel's build read it).
in_chroot() {
	local dir=$1; shift
	(
		mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
		trap 'umount "$dir/proc"' EXIT
		chroot "$dir" "$@"
	)
}

# chroot_apt DIR ARG...: the chroot's apt-get, judging the archive's Release dates as the host's apt
# does (a mirror snapshot older than its Valid-Until passes only where the host lets it).
chroot_apt() {
	local dir=$1; shift
	local valid_until="" check_date=""
	eval "$(apt-config shell valid_until Acquire::Check-Valid-Until check_date Acquire::Check-Date)"
	in_chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		-o "Acquire::Check-Valid-Until=${valid_until:-true}" -o "Acquire::Check-Date=${check_date:-true}" "$@"
}
