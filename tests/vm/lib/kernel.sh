# shellcheck shell=bash
# Guest kernels: stock Debian kernels found by line, fetched with a private apt state per suite (the
# host's sources stay untouched) and cached extracted. A line is named by its role, so that a
# Debian upload never makes a line vanish: 6.1 (the oldest supported, bookworm), 6.12 (the stable
# one, trixie) and newest (the highest kernel version in sid, trixie-backports or experimental,
# whichever carries it); any other VERSION (7.2, 7.3.4+deb13) is the newest upload of that version
# in any of those suites.
# Sets KERNEL_ID, KERNEL_RELEASE, KERNEL_DEB_VERSION, KERNEL_SUITE, KERNEL_SOURCE_PKG, KERNEL_ROOT,
# KERNEL_VMLINUZ, KERNEL_MODULES, KERNEL_EXTRA_MODULES and KSPEC_CHROOT_SUITE/_SOURCES for the layers.

# The testbed's kernel lines, for --help, errors and tests/vm/smoke-all.
VM_KERNELS="6.1 6.12 newest"
# Where the newest line is looked for, and where any VERSION is.
VM_NEWEST_SUITES="sid trixie-backports experimental"
VM_ALL_SUITES="bookworm trixie $VM_NEWEST_SUITES"

# The modules the guest loads at init, with their dependencies (from modules.dep; built-in ones
# skipped). crc64_rocksoft_generic is loaded first where the kernel has it as a module: 6.1's
# crc64-rocksoft asks the crypto API for it at load and would call out to modprobe mid-boot.
VM_GUEST_MODULES="nvme vfio_iommu_type1 vfio-pci uio_pci_generic virtio_pci virtio_blk vgem"
VM_GUEST_MODULES_FIRST="crc64_rocksoft_generic"

# suite_spec SUITE: the archives whose lists are read for SUITE's kernels as "ARCHIVE SUITE" pairs
# separated by commas (stable kernel updates arrive through the security archive first), and the
# chroot a module for its kernels is built in (lib/chroot.sh): the suite the kernel was built for,
# with the archives its linux-headers come from.
suite_spec() {
	case $1 in
	bookworm | trixie)
		SUITE_SOURCES="debian $1, debian $1-updates, debian-security $1-security"
		SUITE_CHROOT=$1 SUITE_CHROOT_SOURCES=$SUITE_SOURCES
		;;
	sid)
		SUITE_SOURCES="debian sid"
		SUITE_CHROOT=sid SUITE_CHROOT_SOURCES=$SUITE_SOURCES
		;;
	*-backports)
		SUITE_SOURCES="debian $1"
		SUITE_CHROOT=${1%-backports}
		SUITE_CHROOT_SOURCES="debian $SUITE_CHROOT, debian $SUITE_CHROOT-updates, debian-security $SUITE_CHROOT-security, debian $1"
		;;
	experimental)
		SUITE_SOURCES="debian experimental"
		SUITE_CHROOT=sid SUITE_CHROOT_SOURCES="debian sid, debian experimental"
		;;
	*) die "$VM_EXIT_BROKEN" "no suite_spec for $1" ;;
	esac
}

# What may follow a kernel version in an ABI name (the 6.12.118+deb13 of 6.12.118+deb13-amd64):
# more dotted numbers, an optional -N (bookworm's 6.1.0-41) and an optional +debN[.N]. Flavours
# (cloud, rt) never match.
ABI_TAIL='(\.[0-9]+)*(-[0-9]+)?(\+deb[0-9]+(\.[0-9]+)?)?'

# line_spec LINE: the suites to search for LINE and the regex its kernels' ABI names must match.
line_spec() {
	local esc
	case $1 in
	6.1)
		LINE_SUITES=bookworm LINE_ABI='6\.1\.0-[0-9]+'
		;;
	6.12)
		LINE_SUITES=trixie LINE_ABI='6\.12\.[0-9]+\+deb13(\.[0-9]+)?'
		;;
	newest)
		LINE_SUITES=$VM_NEWEST_SUITES LINE_ABI="[0-9]+\.[0-9]+$ABI_TAIL"
		;;
	*)
		[[ $1 =~ ^[0-9]+\.[0-9]+$ABI_TAIL$ ]] ||
			die "$VM_EXIT_USAGE" "--kernel '$1' is neither a line ($VM_KERNELS) nor a version such as 7.2 or 7.3.4+deb13"
		esc=$(sed 's/[.+]/\\&/g' <<<"$1")
		LINE_SUITES=$VM_ALL_SUITES LINE_ABI="$esc$ABI_TAIL"
		;;
	esac
}

# apt options that read and write only our own state folder; the host's dpkg status and sources stay
# as they are, which is what lets us read other suites than the host's. No source package cache
# (srcpkgcache.bin, ~50 MB a suite): it only speeds up rebuilding pkgcache.bin.
apt_private_opts() {
	local state=$1
	mkdir -p "$state/cache/archives/partial"
	APT_OPTS=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=
		-o "APT::Sandbox::User=$(id -un)" -o Acquire::Languages=none)
}

# have_lists STATE: whether STATE holds package lists (of any age)
have_lists() {
	[ -n "$(find "$1/lists" -maxdepth 1 -name '*_Packages*' -print -quit)" ]
}

# apt_error LOG: the first error or warning line of an apt-get log, cut to one short line
apt_error() {
	grep -m 1 -E '^(E|W|Err):' "$1" | cut -c1-160
}

# apt_sources_list SOURCES: sources.list lines for "ARCHIVE SUITE" pairs separated by commas, on
# IOMMUTRACE_VM_MIRROR.
apt_sources_list() {
	local mirror=${IOMMUTRACE_VM_MIRROR:-http://deb.debian.org} archive dist
	while read -r archive dist; do
		printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s/%s %s main\n' \
			"$mirror" "$archive" "$dist"
	done < <(tr ',' '\n' <<<"$1")
}

# apt_refresh STATE SUITE: refresh SUITE's package lists when they are older than a day, so that a
# line follows the archive without paying an update per run. A failed refresh with older lists is
# a warning; without any lists it returns 1 with the reason in APT_REFRESH_ERROR.
apt_refresh() {
	local state=$1 suite=$2
	mkdir -p "$state/lists/partial"
	apt_sources_list "$SUITE_SOURCES" >"$state/sources.list.new"
	# rewriting an unchanged sources.list would make apt rebuild its package cache (~1 s) every run
	if cmp -s "$state/sources.list.new" "$state/sources.list"; then
		rm "$state/sources.list.new"
	else
		mv "$state/sources.list.new" "$state/sources.list"
	fi
	APT_REFRESH_ERROR=""
	if [ "${IOMMUTRACE_VM_OFFLINE:-0}" = 1 ]; then
		have_lists "$state" && return 0
		APT_REFRESH_ERROR="no package lists of $suite cached and IOMMUTRACE_VM_OFFLINE=1"
		return 1
	fi
	if [ -n "$(find "$state/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 -print -quit)" ]; then
		return 0
	fi
	log "refreshing $suite package lists"
	if ! apt-get "${APT_OPTS[@]}" -qq update >"$state/update.log" 2>&1 ||
		grep -q '^[WE]: Failed to fetch' "$state/update.log"; then
		if have_lists "$state"; then
			log "warning: apt-get update for $suite failed, using older lists"
			return 0
		fi
		APT_REFRESH_ERROR="apt-get update for $suite failed ($(apt_error "$state/update.log"))"
		return 1
	fi
}

# suite_newest: the newest kernel of LINE_ABI in the lists APT_OPTS reads, as "VERSION PACKAGE ABI"
# (nothing when there is none). A kernel comes in one of two layouts: bookworm and trixie ship
# linux-image-ABI-amd64-unsigned (kernel and modules); from 7.0 on (sid, backports, experimental)
# linux-image-* is an empty metapackage and the kernel is in linux-binary-unsigned-ABI-amd64, its
# modules in linux-modules-*, modules.builtin and the like in linux-base-*.
suite_newest() {
	local names
	names=$(apt-cache "${APT_OPTS[@]}" pkgnames linux- |
		grep -E "^linux-(binary-unsigned-($LINE_ABI)-amd64|image-($LINE_ABI)-amd64-unsigned)\$") || return 0
	# shellcheck disable=SC2086 # one name a word
	apt-cache "${APT_OPTS[@]}" show $names 2>/dev/null | awk '
		/^Package: / { pkg = $2 } /^Version: / { print $2, pkg }' |
		while read -r version pkg; do
			abi=${pkg#linux-binary-unsigned-}; abi=${abi#linux-image-}; abi=${abi%-unsigned}
			printf '%s %s %s\n' "$version" "$pkg" "$abi"
		done | version_max
}

# version_max: of "VERSION REST" lines, the one with the highest Debian version.
version_max() {
	local best="" version rest
	while read -r version rest; do
		if [ -z "$best" ] || dpkg --compare-versions "$version" gt "${best%% *}"; then
			best="$version $rest"
		fi
	done
	[ -z "$best" ] || printf '%s\n' "$best"
}

# find_kernel LINE: the newest kernel of LINE over its suites; sets KERNEL_SUITE, KERNEL_PKG,
# KERNEL_ABI and KERNEL_DEB_VERSION. A kernel that cannot be had (offline, or no suite carries the
# line) is a skip (77) whose one line says which and why.
find_kernel() {
	local line=$1 suite state found best="" why=""
	line_spec "$line"
	for suite in $LINE_SUITES; do
		suite_spec "$suite"
		state="$(vm_cache_dir)/apt/$suite"
		apt_private_opts "$state"
		if ! apt_refresh "$state" "$suite"; then
			why="$why; $APT_REFRESH_ERROR"
			continue
		fi
		found=$(suite_newest)
		[ -n "$found" ] || { why="$why; none in $suite"; continue; }
		best=$(printf '%s\n%s %s\n' "$best" "$found" "$suite" | sed '/^$/d' | version_max)
	done
	[ -n "$best" ] || die "$VM_EXIT_SKIP" "kernel $line could not be had: ${why#; }"
	read -r KERNEL_DEB_VERSION KERNEL_PKG KERNEL_ABI KERNEL_SUITE <<<"$best"
}

# deb_file PKG: the file name of PKG's .deb in the archive (names carry the version, so they key
# the extracted tree without downloading anything).
deb_file() {
	local pkg=$1 file
	read -r _ file _ < <(apt-get "${APT_OPTS[@]}" -qq download --print-uris "$pkg")
	[ -n "$file" ] || die "$VM_EXIT_BROKEN" "apt cannot locate $pkg in $KERNEL_SUITE"
	printf '%s\n' "$file"
}

# Download one package into DIR unless its .deb is already there; a failed download is a kernel
# that could not be had (77).
fetch_package() {
	local pkg=$1 file=$2 dir=$3
	if [ ! -s "$dir/$file" ]; then
		log "downloading $file"
		(cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >"$dir/download.log" 2>&1) ||
			die "$VM_EXIT_SKIP" "$pkg could not be had: apt-get download failed ($(apt_error "$dir/download.log"))"
	fi
}

# Extract the packages into one tree and index its modules; done once per set of .debs.
extract_kernel() {
	local tree=$1; shift
	local deb release
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp/root"
	for deb in "$@"; do
		log "extracting $(basename "$deb")"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tree.tmp/root"
	done
	# newer packages install under /usr/lib/modules; depmod and modprobe look in /lib/modules
	if [ ! -d "$tree.tmp/root/lib/modules" ] && [ -d "$tree.tmp/root/usr/lib/modules" ]; then
		ln -s usr/lib "$tree.tmp/root/lib"
	fi
	release=$(basename "$(find "$tree.tmp/root/lib/modules/" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
	[ -n "$release" ] || die "$VM_EXIT_BROKEN" "no /lib/modules in $*"
	depmod -b "$tree.tmp/root" "$release"
	echo "$release" >"$tree.tmp/release"
	mv "$tree.tmp" "$tree"
}

# prepare_kernel LINE: find LINE's newest kernel, fetch and extract it unless cached, and set the
# KERNEL_* variables.
prepare_kernel() {
	local line=$1 kdir pkgs=() files=() pkg tree i
	find_kernel "$line"
	suite_spec "$KERNEL_SUITE"
	KSPEC_CHROOT_SUITE=$SUITE_CHROOT KSPEC_CHROOT_SOURCES=$SUITE_CHROOT_SOURCES
	apt_private_opts "$(vm_cache_dir)/apt/$KERNEL_SUITE"
	pkgs=("$KERNEL_PKG")
	case $KERNEL_PKG in
	linux-binary-unsigned-*) pkgs+=("linux-modules-$KERNEL_ABI" "linux-base-$KERNEL_ABI") ;;
	esac
	for pkg in "${pkgs[@]}"; do files+=("$(deb_file "$pkg")"); done
	KERNEL_ID=$(printf '%s\n' "${files[@]}" | sha256sum | cut -c1-16)
	# Debian's linux-source-X.Y of the same upload (lib/iommufd.sh)
	[[ $KERNEL_ABI =~ ^([0-9]+\.[0-9]+) ]]
	KERNEL_SOURCE_PKG="linux-source-${BASH_REMATCH[1]}=$KERNEL_DEB_VERSION"
	kdir="$(vm_cache_dir)/kernels/$line"
	mkdir -p "$kdir/debs"
	tree="$kdir/tree-$KERNEL_ID"
	if [ ! -f "$tree/release" ]; then
		for i in "${!pkgs[@]}"; do fetch_package "${pkgs[i]}" "${files[i]}" "$kdir/debs"; done
		extract_kernel "$tree" "${files[@]/#/$kdir/debs/}"
	fi
	prune_other_kernels "$kdir" "$tree"
	KERNEL_ROOT="$tree/root"
	KERNEL_RELEASE=$(cat "$tree/release")
	# bookworm and trixie install /boot/vmlinuz-RELEASE; linux-binary* packages put it beside the
	# modules (vmlinuz, or vmlinuz.unsigned from linux-binary-unsigned-*)
	KERNEL_VMLINUZ=""
	for pkg in "$KERNEL_ROOT/boot/vmlinuz-$KERNEL_RELEASE" \
		"$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/vmlinuz" \
		"$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/vmlinuz.unsigned"; do
		if [ -f "$pkg" ]; then KERNEL_VMLINUZ=$pkg; break; fi
	done
	[ -n "$KERNEL_VMLINUZ" ] || die "$VM_EXIT_BROKEN" "no vmlinuz for $KERNEL_RELEASE in ${files[*]}"
	KERNEL_MODULES=$VM_GUEST_MODULES
	for pkg in $VM_GUEST_MODULES_FIRST; do
		if modprobe -d "$KERNEL_ROOT" -S "$KERNEL_RELEASE" --show-depends "$pkg" >/dev/null 2>&1; then
			KERNEL_MODULES="$pkg $KERNEL_MODULES"
		fi
	done
	# .ko files from outside the kernel's packages, loaded after KERNEL_MODULES (lib/iommufd.sh)
	KERNEL_EXTRA_MODULES=()
	log "kernel $line: $KERNEL_RELEASE, linux $KERNEL_DEB_VERSION from $KERNEL_SUITE"
}

# An extracted kernel is 120-470 MB: keep only the one in use per line, and no .debs.
prune_other_kernels() {
	local kdir=$1 keep_tree=$2 path
	for path in "$kdir"/tree-* "$kdir"/debs/*.deb; do
		[ -e "$path" ] || continue
		[ "$path" = "$keep_tree" ] || rm -rf "$path"
	done
}
