# shellcheck shell=bash
# The disks behind the guest's NVMe namespaces. The pattern disk: a raw image with a known pattern,
# so tests can check that DMA delivered exactly the disk's bytes. Every 512-byte LBA n holds:
#   bytes 0..7     n as a 64-bit little-endian integer
#   bytes 8..15    the ASCII magic "IOMMUTRC"
#   bytes 16..511  byte i (i = offset within the LBA) has the value i & 0xff
# The image is cached per size and attached with snapshot=on: guest writes never reach it.
# The scratch disk: a blank sparse raw file made per run, attached writable, so that the host can
# check after the run what the guest wrote (tests/vm/host-check).

# disk_bytes OPTION SIZE: echo SIZE in bytes; refuse one that is not a multiple of 512 or under 1M.
disk_bytes() {
	local bytes
	bytes=$(size_bytes "$2") || exit
	if [ $((bytes % 512)) -ne 0 ] || [ "$bytes" -lt 1048576 ]; then
		die "$VM_EXIT_USAGE" "$1 must be a multiple of 512 bytes and at least 1M"
	fi
	printf '%s\n' "$bytes"
}

# pattern_disk SIZE_BYTES: echo the path of the cached pattern image of that size.
pattern_disk() {
	local bytes=$1 dir img
	dir="$(vm_cache_dir)/disks"
	img="$dir/pattern-$bytes.img"
	if [ ! -f "$img" ]; then
		mkdir -p "$dir"
		debug "writing pattern disk $img"
		perl -e '
			my $lbas = shift;
			my $rest = "IOMMUTRC" . join("", map { chr($_ & 0xff) } 16 .. 511);
			binmode STDOUT;
			for my $lba (0 .. $lbas - 1) { print pack("Q<", $lba), $rest }
		' $((bytes / 512)) >"$img.tmp"
		mv "$img.tmp" "$img"
	fi
	printf '%s\n' "$img"
}

# scratch_disk PATH SIZE_BYTES: a blank sparse raw image at PATH.
scratch_disk() {
	rm -f "$1"
	truncate -s "$2" "$1"
}
