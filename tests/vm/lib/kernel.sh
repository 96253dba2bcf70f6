# shellcheck shell=bash
# Guest kernels: which Debian packages and modules each testbed kernel uses, fetched with a private
# apt state (the host's sources stay untouched) and cached extracted, newest package first.
# Sets KERNEL_ID, KERNEL_RELEASE, KERNEL_DEB_VERSION, KERNEL_ROOT, KERNEL_VMLINUZ, KERNEL_MODULES and
# KERNEL_EXTRA_MODULES for the layers.

# The testbed kernels, for --help and errors.
VM_KERNELS="6.1 6.12 7.2"

# kernel_spec VERSION: the suite to read, the archives that carry its kernels as "ARCHIVE SUITE"
# pairs (stable kernel updates arrive through the security archive first), the packages and the
# modules the guest loads at init (dependencies are resolved from modules.dep).
# KSPEC_PACKAGES: the first is a regex on package names whose group 1 is the kernel's ABI name
# (e.g. 6.12.118+deb13-amd64); the newest match is used. The others (sid splits a kernel into
# binary, modules and base packages) are names with @ABI@ standing for that ABI name, so that all
# of them come from one upload.
kernel_spec() {
	case $1 in
	6.1)
		KSPEC_SUITE=bookworm
		KSPEC_SOURCES="debian bookworm, debian bookworm-updates, debian-security bookworm-security"
		KSPEC_PACKAGES='^linux-image-(6\.1\.0-[0-9]+-amd64)-unsigned$'
		# crc64-rocksoft asks the crypto API for its implementation at load; without
		# crc64_rocksoft_generic loaded first it would call out to modprobe mid-boot.
		KSPEC_MODULES="crc64_rocksoft_generic nvme vfio_iommu_type1 vfio-pci uio_pci_generic virtio_pci virtio_blk vgem"
		;;
	6.12)
		# trixie: one package with the kernel and its modules (.ko.xz); udmabuf is built in
		KSPEC_SUITE=trixie
		KSPEC_SOURCES="debian trixie, debian trixie-updates, debian-security trixie-security"
		KSPEC_PACKAGES='^linux-image-(6\.12\.[0-9]+\+deb13(\.[0-9]+)?-amd64)-unsigned$'
		# the CRCs (crc64-rocksoft, crc-t10dif) and virtio_pci are built in here; nvme-core
		# needs nvme-auth
		KSPEC_MODULES="nvme vfio_iommu_type1 vfio-pci uio_pci_generic virtio_pci virtio_blk vgem"
		;;
	7.2)
		# sid: linux-image-* is an empty metapackage; the kernel image is in linux-binary-*, the
		# modules (.ko.xz) in linux-modules-*, modules.builtin and the like in linux-base-*; udmabuf is
		# built in
		KSPEC_SUITE=sid
		KSPEC_SOURCES="debian sid"
		KSPEC_PACKAGES='^linux-binary-unsigned-(7\.2\.[0-9]+\+deb14(\.[0-9]+)?-amd64)$ linux-modules-@ABI@ linux-base-@ABI@'
		# nvme-core needs nvme-auth and nvme-keyring; .ko.xz are unpacked for busybox insmod
		KSPEC_MODULES="nvme vfio_iommu_type1 vfio-pci uio_pci_generic virtio_pci virtio_blk vgem"
		;;
	*)
		die "$VM_EXIT_USAGE" "kernel '$1' is not supported (supported: $VM_KERNELS)"
		;;
	esac
}

# apt options that read and write only our own state folder for SUITE; the host's dpkg status and
# sources stay as they are, which is what lets us read other suites than the host's. No source
# package cache (srcpkgcache.bin, ~50 MB a suite): it only speeds up rebuilding pkgcache.bin.
apt_private_opts() {
	local state=$1
	mkdir -p "$state/cache/archives/partial"
	APT_OPTS=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=
		-o "APT::Sandbox::User=$(id -un)" -o Acquire::Languages=none)
}

# apt_sources_list SOURCES: sources.list lines for "ARCHIVE SUITE" pairs separated by commas
# (KSPEC_SOURCES), on IOMMUTRACE_VM_MIRROR.
apt_sources_list() {
	local mirror=${IOMMUTRACE_VM_MIRROR:-http://deb.debian.org} archive dist
	while read -r archive dist; do
		printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s/%s %s main\n' \
			"$mirror" "$archive" "$dist"
	done < <(tr ',' '\n' <<<"$1")
}

# Refresh the suite's package lists when they are older than a day, so "newest" follows the
# archive without paying an update per run. A failed refresh with old lists is only a warning.
apt_refresh() {
	local state=$1 suite=$2
	mkdir -p "$state/lists/partial"
	apt_sources_list "$KSPEC_SOURCES" >"$state/sources.list.new"
	# rewriting an unchanged sources.list would make apt rebuild its package cache (~1 s) every run
	if cmp -s "$state/sources.list.new" "$state/sources.list"; then
		rm "$state/sources.list.new"
	else
		mv "$state/sources.list.new" "$state/sources.list"
	fi
	if [ "${IOMMUTRACE_VM_OFFLINE:-0}" = 1 ]; then
		return 0
	fi
	if [ -n "$(find "$state/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 -print -quit)" ]; then
		return 0
	fi
	log "refreshing $suite package lists"
	if ! apt-get "${APT_OPTS[@]}" -qq update >"$state/update.log" 2>&1; then
		[ -n "$(find "$state/lists" -maxdepth 1 -name '*_Packages*' -print -quit)" ] ||
			die "$VM_EXIT_BROKEN" "apt-get update for $suite failed: $(tail -n 3 "$state/update.log")"
		log "warning: apt-get update for $suite failed, using older lists"
	fi
}

# newest_package REGEX: the highest-versioned package name matching REGEX in the private lists.
newest_package() {
	apt-cache "${APT_OPTS[@]}" pkgnames | grep -E -- "$1" | sort -V | tail -n 1
}

# deb_file PKG: the file name of PKG's .deb in the archive (names carry the version, so they key
# the extracted tree without downloading anything).
deb_file() {
	local pkg=$1 file
	read -r _ file _ < <(apt-get "${APT_OPTS[@]}" -qq download --print-uris "$pkg")
	[ -n "$file" ] || die "$VM_EXIT_BROKEN" "apt cannot locate $pkg in $KSPEC_SUITE"
	printf '%s\n' "$file"
}

# Download one package into DIR unless its .deb is already there.
fetch_package() {
	local pkg=$1 file=$2 dir=$3
	if [ ! -s "$dir/$file" ]; then
		log "downloading $file"
		(cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >/dev/null) ||
			die "$VM_EXIT_BROKEN" "apt-get download $pkg failed"
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

# prepare_kernel VERSION: fetch (if newer) and extract the kernel; set the KERNEL_* variables.
# Only the extracted tree is kept: the .debs are removed once it is made.
prepare_kernel() {
	local version=$1 kdir pkgs=() files=() regex pkg tree abi i deb_version
	kernel_spec "$version"
	kdir="$(vm_cache_dir)/kernels/$version"
	mkdir -p "$kdir/debs"
	apt_private_opts "$(vm_cache_dir)/apt/$KSPEC_SUITE"
	apt_refresh "$(vm_cache_dir)/apt/$KSPEC_SUITE" "$KSPEC_SUITE"
	# shellcheck disable=SC2086 # the list is words by design
	set -- $KSPEC_PACKAGES
	regex=$1; shift
	pkg=$(newest_package "$regex")
	[ -n "$pkg" ] || die "$VM_EXIT_BROKEN" "no package matching $regex in $KSPEC_SUITE"
	[[ $pkg =~ $regex ]] || die "$VM_EXIT_BROKEN" "bad package regex $regex"
	abi=${BASH_REMATCH[1]}
	pkgs=("$pkg")
	for pkg in "$@"; do pkgs+=("${pkg//@ABI@/$abi}"); done
	for pkg in "${pkgs[@]}"; do files+=("$(deb_file "$pkg")"); done
	KERNEL_ID=$(printf '%s\n' "${files[@]}" | sha256sum | cut -c1-16)
	# NAME_VERSION_ARCH.deb; the upload's version is that of its linux-source-VERSION too
	deb_version=${files[0]#*_}
	deb_version=${deb_version%%_*}
	KERNEL_DEB_VERSION=${deb_version//%3a/:}
	tree="$kdir/tree-$KERNEL_ID"
	if [ ! -f "$tree/release" ]; then
		for i in "${!pkgs[@]}"; do fetch_package "${pkgs[i]}" "${files[i]}" "$kdir/debs"; done
		extract_kernel "$tree" "${files[@]/#/$kdir/debs/}"
	fi
	prune_other_kernels "$kdir" "$tree"
	KERNEL_ROOT="$tree/root"
	KERNEL_RELEASE=$(cat "$tree/release")
	# bookworm and trixie install /boot/vmlinuz-RELEASE; sid's linux-binary* packages put it beside
	# the modules (vmlinuz, or vmlinuz.unsigned from linux-binary-unsigned-*)
	KERNEL_VMLINUZ=""
	for pkg in "$KERNEL_ROOT/boot/vmlinuz-$KERNEL_RELEASE" \
		"$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/vmlinuz" \
		"$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/vmlinuz.unsigned"; do
		if [ -f "$pkg" ]; then KERNEL_VMLINUZ=$pkg; break; fi
	done
	KERNEL_MODULES=$KSPEC_MODULES
	# .ko files from outside the kernel's packages, loaded after KERNEL_MODULES (lib/iommufd.sh)
	KERNEL_EXTRA_MODULES=()
	[ -n "$KERNEL_VMLINUZ" ] || die "$VM_EXIT_BROKEN" "no vmlinuz for $KERNEL_RELEASE in ${files[*]}"
	debug "kernel $version: $KERNEL_RELEASE (${files[*]})"
}

# An extracted kernel is 120-470 MB: keep only the one in use per testbed kernel, and no .debs.
prune_other_kernels() {
	local kdir=$1 keep_tree=$2 path
	for path in "$kdir"/tree-* "$kdir"/debs/*.deb; do
		[ -e "$path" ] || continue
		[ "$path" = "$keep_tree" ] || rm -rf "$path"
	done
}
