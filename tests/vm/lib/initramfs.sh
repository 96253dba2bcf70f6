# shellcheck shell=bash
# The guest's initramfs, as three concatenated cpio layers (the kernel unpacks them in order):
#   modules  - the kernel's modules for KERNEL_MODULES and their dependencies, then
#              KERNEL_EXTRA_MODULES (rebuilt ones, lib/iommufd.sh), with the load order;
#   userland - busybox, /init, the project's binary and tests, sqlite3 and the libraries they need;
#   run      - this run's COMMAND and settings (built every run, a few hundred bytes).
# The first two are cached by a key over everything they contain, so only what changed is rebuilt.
# Layers are uncompressed: under TCG the guest unpacks plain cpio much faster than gzip.

# The directory of cached layers; layers not used for a week are removed.
layer_dir() {
	local dir
	dir="$(vm_cache_dir)/layers"
	mkdir -p "$dir"
	find "$dir" -maxdepth 1 -name '*.cpio' -mtime +7 -delete
	printf '%s\n' "$dir"
}

# Pack a staging folder as a newc cpio owned by root (the guest runs everything as root).
pack_cpio() {
	local stage=$1 out=$2
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
	mv "$out.tmp" "$out"
}

# module_load_order: the .ko paths (relative to /lib/modules/RELEASE) of KERNEL_MODULES with their
# dependencies and soft dependencies, each once, in an order insmod can follow.
module_load_order() {
	local mod deps=""
	for mod in $KERNEL_MODULES; do
		deps+=$(modprobe -d "$KERNEL_ROOT" -S "$KERNEL_RELEASE" --show-depends "$mod") ||
			die "$VM_EXIT_BROKEN" "kernel $KERNEL_RELEASE has no module $mod"
		deps+=$'\n'
	done
	# "builtin NAME" lines need nothing loaded
	printf '%s' "$deps" | awk -v dir="$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/" '
		$1 == "insmod" && index($2, dir) == 1 { rel = substr($2, length(dir) + 1); if (!seen[rel]++) print rel }'
}

# build_modules_layer: echo the path of the cached modules layer for the prepared kernel.
build_modules_layer() {
	local key out stage order rel plain src dest ko
	key=$(content_key "$KERNEL_ID $KERNEL_RELEASE $KERNEL_MODULES" "${KERNEL_EXTRA_MODULES[@]}")
	out="$(layer_dir)/modules-$key.cpio"
	if [ ! -f "$out" ]; then
		debug "building modules layer $key"
		stage=$(mktemp -d)
		order="$stage/etc/iommutrace-vm/modules"
		mkdir -p "$(dirname "$order")"
		module_load_order >"$order.src"
		while read -r rel; do
			# busybox insmod reads plain .ko only; newer kernels ship .ko.xz or .ko.zst
			case $rel in
			*.ko.xz) plain=${rel%.xz} ;;
			*.ko.zst) plain=${rel%.zst} ;;
			*) plain=$rel ;;
			esac
			src="$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE/$rel"
			dest="$stage/lib/modules/$KERNEL_RELEASE/$plain"
			mkdir -p "$(dirname "$dest")"
			case $rel in
			*.xz) xz -dc "$src" >"$dest" ;;
			*.zst) zstd -qdc "$src" >"$dest" ;;
			*) cp "$src" "$dest" ;;
			esac
			printf '%s\n' "/lib/modules/$KERNEL_RELEASE/$plain" >>"$order"
		done <"$order.src"
		rm "$order.src"
		# updates/ is where depmod and modprobe expect modules from outside the kernel's tree
		for ko in "${KERNEL_EXTRA_MODULES[@]}"; do
			dest="$stage/lib/modules/$KERNEL_RELEASE/updates/$(basename "$ko")"
			mkdir -p "$(dirname "$dest")"
			cp "$ko" "$dest"
			printf '%s\n' "${dest#"$stage"}" >>"$order"
		done
		# modules.dep for the subset, so that modprobe in the guest (and the kernel's own
		# request_module) can load these modules by name too
		cp "$KERNEL_ROOT/lib/modules/$KERNEL_RELEASE"/modules.{builtin,builtin.modinfo,order} "$stage/lib/modules/$KERNEL_RELEASE/"
		depmod -b "$stage" "$KERNEL_RELEASE"
		pack_cpio "$stage" "$out"
		rm -rf "$stage"
	fi
	touch "$out"
	printf '%s\n' "$out"
}

# The shared libraries (and the dynamic loader) a host program needs, one path a line.
library_paths() {
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}

# Guest programs copied from the host, by their guest path and host path: always iommutrace and
# sqlite3; then the programs of --tools (VM_TOOLS, comma-separated names looked up on the host's
# PATH), which only the boots that ask for them carry (a different layer, cached under its own key).
userland_programs() {
	local tool
	printf '%s %s\n' /usr/bin/iommutrace "$VM_BINARY"
	printf '%s %s\n' /usr/bin/sqlite3 "$(command -v sqlite3)"
	for tool in ${VM_TOOLS//,/ }; do
		printf '%s %s\n' "/usr/bin/$tool" "$(command -v "$tool")"
	done
}

# build_userland_layer: echo the path of the cached userland layer.
build_userland_layer() {
	local inputs=() guest host lib key out stage file
	while read -r guest host; do
		[ -x "$host" ] || die "$VM_EXIT_BROKEN" "$host missing (for the guest's $guest)"
		inputs+=("$host")
		while read -r lib; do inputs+=("$lib"); done < <(library_paths "$host")
	done < <(userland_programs)
	inputs+=("$(command -v busybox)" "$VM_DIR/guest/init")
	while IFS= read -r -d '' file; do inputs+=("$file"); done \
		< <(find "$VM_ROOT/tests" -type f -print0 | LC_ALL=C sort -z)
	key=$(content_key "$(userland_programs)" "${inputs[@]}")
	out="$(layer_dir)/userland-$key.cpio"
	if [ ! -f "$out" ]; then
		debug "building userland layer $key"
		stage=$(mktemp -d)
		stage_userland "$stage"
		pack_cpio "$stage" "$out"
		rm -rf "$stage"
	fi
	touch "$out"
	printf '%s\n' "$out"
}

# stage_userland STAGE: lay out the guest's root file system (everything but modules and the run).
stage_userland() {
	local stage=$1 guest host lib applet
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,out,root,src/build}
	cp "$(command -v busybox)" "$stage/bin/busybox"
	# the applet links, made here because the guest's /init needs them before it could run
	# `busybox --install`; names taken by real programs below win over applets
	for applet in $(busybox --list-full); do
		[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
	done
	while read -r guest host; do
		rm -f "$stage$guest"
		cp -L "$host" "$stage$guest"
		while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done < <(library_paths "$host")
	done < <(userland_programs)
	cp "$VM_DIR/guest/init" "$stage/init"
	chmod 755 "$stage/init"
	# the project's tests, with the binary where the Makefile puts it, so in-tree scripts that run
	# build/iommutrace from the project root (the guest's /src) work unchanged
	cp -r "$VM_ROOT/tests" "$stage/src/tests"
	ln -s /usr/bin/iommutrace "$stage/src/build/iommutrace"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"
}

# Quote one word for sh: wrap in single quotes, each ' written as '\''.
sh_quote() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

# build_run_layer OUT TIMEOUT IOMMU COMMAND...: this run's command as a script, its time limit, and
# the IOMMU the guest must have (intel, amd or off: /init checks it).
build_run_layer() {
	local out=$1 timeout=$2 iommu=$3; shift 3
	local stage word
	stage=$(mktemp -d)
	mkdir -p "$stage/etc/iommutrace-vm"
	{
		printf 'exec'
		for word in "$@"; do printf ' %s' "$(sh_quote "$word")"; done
		printf '\n'
	} >"$stage/etc/iommutrace-vm/command"
	printf '%s\n' "$timeout" >"$stage/etc/iommutrace-vm/timeout"
	printf '%s\n' "$iommu" >"$stage/etc/iommutrace-vm/iommu"
	pack_cpio "$stage" "$out"
	rm -rf "$stage"
}
