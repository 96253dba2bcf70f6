# shellcheck shell=bash
# iommutrace_probe.ko (probes/kmod) for a testbed kernel: built in a chroot of the kernel's suite, with
# that suite's compiler and the kernel's linux-headers, once per kernel upload and module source.

# prepare_probe_module VERSION: after prepare_kernel VERSION, echo the path of iommutrace_probe.ko
# built for its kernel, building it unless cached. The first build in a suite needs root.
prepare_probe_module() {
	local version=$1 src=$VM_ROOT/probes/kmod key dir out path sources=()
	mapfile -t sources < <(probe_module_sources "$src")
	[ "${#sources[@]}" -gt 0 ] || die "$VM_EXIT_BROKEN" "no module sources in $src"
	# the recipe (flags, steps) is in these two files
	key=$(content_key "$KERNEL_ID $KERNEL_RELEASE" "$VM_DIR/lib/kmod.sh" "$VM_DIR/lib/chroot.sh" \
		"${sources[@]/#/$src/}")
	dir="$(vm_cache_dir)/kmod/$version"
	out="$dir/$key"
	[ -f "$out/iommutrace_probe.ko" ] || build_probe_module "$src" "$out" "${sources[@]}" >&2
	# one build per testbed kernel is kept, that of the kernel upload and sources in use
	for path in "$dir"/*/; do
		[ "${path%/}" = "$out" ] || rm -rf "$path"
	done
	printf '%s\n' "$out/iommutrace_probe.ko"
}

# probe_module_sources DIR: the files kbuild reads, relative to DIR, one a line (the outputs of a
# build made in DIR by hand are not among them).
probe_module_sources() {
	(cd "$1" && find . -type f \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c' -printf '%P\n') |
		LC_ALL=C sort
}

# build_probe_module SRC OUT FILE...: copy the FILEs of SRC into the chroot of the kernel's suite,
# build there against linux-headers-KERNEL_RELEASE, keep the module (without debug info) in OUT.
# -Werror: a kernel whose API drifted from the module's must fail here, not in the guest.
build_probe_module() {
	local src=$1 out=$2; shift 2
	local start=$SECONDS root build build_log
	[ "$(id -u)" = 0 ] ||
		die "$VM_EXIT_BROKEN" "iommutrace_probe.ko must be built for $KERNEL_RELEASE (once per kernel, in a chroot): run as root"
	require_host_tools debootstrap chroot mountpoint
	root=$(suite_chroot "$KSPEC_CHROOT_SUITE" "$KSPEC_CHROOT_SOURCES" gcc make libc6-dev "linux-headers-$KERNEL_RELEASE")
	build=$root/build/iommutrace-probe
	rm -rf "$build" "$out.tmp"
	mkdir -p "$build" "$out.tmp"
	(cd "$src" && cp --parents -- "$@" "$build/") || die "$VM_EXIT_BROKEN" "cannot copy $src into the chroot"
	log "building iommutrace_probe.ko for $KERNEL_RELEASE in the $KSPEC_CHROOT_SUITE chroot"
	build_log="$(dirname "$out")/build.log"
	in_chroot "$root" make -C "/usr/src/linux-headers-$KERNEL_RELEASE" M="${build#"$root"}" \
		KCFLAGS=-Werror modules >"$build_log" 2>&1 ||
		die "$VM_EXIT_BROKEN" "building iommutrace_probe.ko for $KERNEL_RELEASE failed (log: $build_log)"
	in_chroot "$root" strip --strip-debug "${build#"$root"}/iommutrace_probe.ko" ||
		die "$VM_EXIT_BROKEN" "strip iommutrace_probe.ko failed"
	cp "$build/iommutrace_probe.ko" "$out.tmp/"
	rm -rf "$build" "$out"
	mv "$out.tmp" "$out"
	log "iommutrace_probe.ko for $KERNEL_RELEASE built in $((SECONDS - start))s"
}
