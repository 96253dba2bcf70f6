# shellcheck shell=bash
# --iommufd: iommufd.ko and the VFIO modules rebuilt from Debian's source of the guest's own kernel
# upload with CONFIG_IOMMUFD and CONFIG_VFIO_DEVICE_CDEV (Debian leaves both off), in a chroot of the
# kernel's suite, once per kernel upload; in the guest they take the place of the stock vfio modules.

# The modules kept from the build, in load order: each needs only earlier ones and stock modules.
IOMMUFD_MODULES="iommufd vfio vfio_iommu_type1 vfio-pci-core vfio-pci"

# The options as the kernel's own config would set them. Only the modules see them: the headers'
# autoconf.h stays as it is, and the -D flags make IS_ENABLED() true in these objects alone.
IOMMUFD_MAKE_FLAGS=(CONFIG_IOMMUFD=m CONFIG_IOMMUFD_DRIVER_CORE=m CONFIG_VFIO_DEVICE_CDEV=y
	"KCFLAGS=-DCONFIG_IOMMUFD_MODULE=1 -DCONFIG_IOMMUFD_DRIVER_CORE_MODULE=1 -DCONFIG_VFIO_DEVICE_CDEV=1 -DCONFIG_INTERVAL_TREE_SPAN_ITER=1")

# prepare_iommufd_modules LINE: after prepare_kernel, build the modules for its kernel unless
# cached, and put them in KERNEL_EXTRA_MODULES in place of the stock ones in KERNEL_MODULES.
prepare_iommufd_modules() {
	local version=$1 pkg=$KERNEL_SOURCE_PKG file key dir out
	file=$(deb_file "$pkg")
	# the recipe (module list, flags, steps) is in these two files
	key=$(content_key "$KERNEL_ID $KERNEL_RELEASE $file" "$VM_DIR/lib/iommufd.sh" "$VM_DIR/lib/chroot.sh")
	dir="$(vm_cache_dir)/iommufd/$version"
	out="$dir/$key"
	[ -f "$out/modules" ] || [ -f "$out/no-cdev" ] || build_iommufd_modules "$pkg" "$file" "$out"
	[ ! -f "$out/no-cdev" ] || die "$VM_EXIT_SKIP" "$(cat "$out/no-cdev")"
	# one build per testbed kernel is kept, that of the upload in use
	for file in "$dir"/*/; do
		[ "${file%/}" = "$out" ] || rm -rf "$file"
	done
	use_rebuilt_modules "$out"
}

# build_iommufd_modules PACKAGE DEB OUT: fetch Debian's linux-source of the upload, build the
# modules in the suite's chroot against the kernel's linux-headers, keep them (without debug info, as
# Debian ships its own) in OUT with their load order in OUT/modules. A source whose vfio has no
# device cdev (drivers/vfio/device_cdev.c, from 6.6) leaves OUT/no-cdev saying so instead.
build_iommufd_modules() {
	local pkg=$1 file=$2 out=$3
	local start=$SECONDS root tree mod ko build_log
	[ "$(id -u)" = 0 ] ||
		die "$VM_EXIT_BROKEN" "--iommufd must build its modules for $KERNEL_RELEASE (once per kernel, in a chroot): run as root"
	require_host_tools debootstrap chroot mountpoint
	root=$(suite_chroot "$KSPEC_CHROOT_SUITE" "$KSPEC_CHROOT_SOURCES" gcc make libc6-dev "linux-headers-$KERNEL_RELEASE")
	rm -rf "$root/build/iommufd" "$out.tmp"
	mkdir -p "$root/build/iommufd" "$out.tmp"
	fetch_package "$pkg" "$file" "$root/build/iommufd"
	log "extracting drivers/iommu, drivers/vfio and lib/interval_tree.c from $file"
	tree=$(extract_iommufd_sources "$root/build/iommufd/$file" "${pkg%%=*}" "$root/build/iommufd")
	if [ ! -f "$tree/drivers/vfio/device_cdev.c" ]; then
		mkdir -p "$out"
		printf '%s\n' "--iommufd: the vfio of $KERNEL_RELEASE has no device cdev (no drivers/vfio/device_cdev.c in ${pkg%%=*}; VFIO_DEVICE_CDEV came in 6.6)" >"$out/no-cdev"
		rm -rf "$root/build/iommufd" "$out.tmp"
		return 0
	fi
	add_span_iter "$tree" "$root/usr/src/linux-headers-$KERNEL_RELEASE/Module.symvers"
	printf 'obj-m += drivers/iommu/iommufd/ drivers/vfio/\n' >"$tree/Kbuild"
	log "building iommufd and vfio modules for $KERNEL_RELEASE in the $KSPEC_CHROOT_SUITE chroot"
	build_log="$(dirname "$out")/build.log"
	in_chroot "$root" make -C "/usr/src/linux-headers-$KERNEL_RELEASE" M="${tree#"$root"}" -j"$(nproc)" \
		"${IOMMUFD_MAKE_FLAGS[@]}" modules >"$build_log" 2>&1 ||
		die "$VM_EXIT_BROKEN" "building the iommufd modules for $KERNEL_RELEASE failed (log: $build_log)"
	for mod in $IOMMUFD_MODULES; do
		ko=$(find "$tree" -name "$mod.ko")
		[ -n "$ko" ] || die "$VM_EXIT_BROKEN" "the build made no $mod.ko (log: $build_log)"
		in_chroot "$root" strip --strip-debug "${ko#"$root"}" || die "$VM_EXIT_BROKEN" "strip $mod.ko failed"
		cp "$ko" "$out.tmp/"
	done
	printf '%s\n' "$IOMMUFD_MODULES" >"$out.tmp/modules"
	rm -rf "$root/build/iommufd" "$out"
	mv "$out.tmp" "$out"
	log "iommufd modules for $KERNEL_RELEASE built in $((SECONDS - start))s"
}

# extract_iommufd_sources DEB TOP DIR: unpack the parts of DEB's TOP.tar.xz (TOP: linux-source-X.Y)
# the build reads into DIR; echo the tree's root. The rest of the kernel comes from the headers.
extract_iommufd_sources() {
	local deb=$1 top=$2 dir=$3
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$top.tar.xz" |
		tar -xJ -C "$dir" "$top/drivers/iommu" "$top/drivers/vfio" "$top/lib/interval_tree.c" ||
		die "$VM_EXIT_BROKEN" "cannot extract the iommufd and vfio sources from $deb"
	printf '%s\n' "$dir/$top"
}

# add_span_iter TREE SYMVERS: iommufd needs lib/interval_tree.c's span iterator, which the kernel
# builds only when something built in selects it (IOMMUFD does, and is off): unless the kernel
# exports it already, compile that part of the file into iommufd.ko.
add_span_iter() {
	local tree=$1 symvers=$2
	grep -q 'interval_tree_span_iter_first' "$symvers" && return 0
	{
		printf '// SPDX-License-Identifier: GPL-2.0-only\n'
		printf '/* lib/interval_tree.c, its CONFIG_INTERVAL_TREE_SPAN_ITER part only */\n'
		printf '#include <linux/interval_tree.h>\n#include <linux/export.h>\n'
		sed -n '/^#ifdef CONFIG_INTERVAL_TREE_SPAN_ITER/,/^#endif/p' "$tree/lib/interval_tree.c"
	} >"$tree/drivers/iommu/iommufd/interval_tree_span.c"
	printf 'iommufd-y += interval_tree_span.o\n' >>"$tree/drivers/iommu/iommufd/Makefile"
}

# use_rebuilt_modules DIR: the modules in DIR take the place of the stock ones of the same names in
# KERNEL_MODULES; the stock modules they depend on (irqbypass) are loaded before them.
use_rebuilt_modules() {
	local dir=$1 rebuilt=" " stock="" mod dep
	for mod in $IOMMUFD_MODULES; do rebuilt+="${mod//-/_} "; done
	for mod in $KERNEL_MODULES; do
		case $rebuilt in *" ${mod//-/_} "*) ;; *) stock+=" $mod" ;; esac
	done
	KERNEL_EXTRA_MODULES=()
	for mod in $(<"$dir/modules"); do
		KERNEL_EXTRA_MODULES+=("$dir/$mod.ko")
		for dep in $(modinfo -F depends "$dir/$mod.ko" | tr ',' ' '); do
			case $rebuilt in *" ${dep//-/_} "*) ;; *) stock+=" $dep" ;; esac
		done
	done
	KERNEL_MODULES=${stock# }
	debug "iommufd: stock modules $KERNEL_MODULES, then ${KERNEL_EXTRA_MODULES[*]}"
}
