# shellcheck shell=bash
# shellcheck disable=SC2054 # QEMU's options are comma lists, not array elements
# The QEMU machine (design.md, "Testbed facts") and its supervision: a boot deadline, a total
# deadline, and COMMAND's output streamed to our stdout while the guest runs.
#
# Guest PCI layout (pinned so that tests can name devices; the nvme driver names controllers and
# namespaces as it probes them, asynchronously, so the guest finds a namespace's /dev/nvmeXnY by BDF
# and NSID through sysfs):
#   0000:00:04.0  NVMe (1b36:0010), the controller under test, serial iommutrace0:
#                   namespace 1 = the pattern disk (snapshot=on: writes are thrown away),
#                   namespace 2 = the scratch disk, blank and writable, per run (--scratch-size),
#                   namespace 3 = a second scratch disk of that size, for the kernel driver's
#                   writes (guest/io-uring), so that each engine's writes are checked on the host
#   0000:00:05.0  ivshmem-plain (1af4:1110), BAR2 = the --bar-size memory: the stand-in for GPU BAR1
#   0000:00:06.0  virtio-blk, the results disk; virtio without ACCESS_PLATFORM bypasses the IOMMU in
#                 QEMU and the guest does not use the DMA API for it, so it adds no mappings
#   0000:00:07.0  NVMe (1b36:0010), a second controller, serial iommutrace1: namespace 1 = the
#                 pattern disk again (its own snapshot=on drive over the same image)
# Serial ports: ttyS0 = kernel console and /init's messages, ttyS1 = COMMAND's stdout and stderr.

# qemu_args LOGDIR INITRD DISK SCRATCH SCRATCH3 RESULTS: fill QEMU_ARGS and KERNEL_APPEND from the
# VM_* settings and the run's files.
qemu_args() {
	local logdir=$1 initrd=$2 disk=$3 scratch=$4 scratch3=$5 results=$6
	QEMU_ARGS=(-accel tcg,thread=multi -cpu max -m "$VM_MEMORY" -smp 2
		-nodefaults -display none -no-reboot)
	KERNEL_APPEND="console=ttyS0 panic=-1"
	case $VM_VENDOR/$VM_IOMMU in
	intel/on)
		QEMU_ARGS+=(-machine q35,kernel-irqchip=split -device intel-iommu,intremap=on,caching-mode=on)
		# an --append that sets intel_iommu itself (e.g. intel_iommu=on,sp_off) replaces ours
		case " $VM_APPEND" in *" intel_iommu="*) ;; *) KERNEL_APPEND+=" intel_iommu=on" ;; esac
		;;
	amd/on)
		# QEMU's AMD-Vi works on plain q35 (design.md); the guest needs no option for it
		QEMU_ARGS+=(-machine q35 -device amd-iommu)
		;;
	*/off)
		QEMU_ARGS+=(-machine q35)
		;;
	esac
	[ -z "$VM_APPEND" ] || KERNEL_APPEND+=" $VM_APPEND"
	QEMU_ARGS+=(
		-drive "file=$disk,if=none,id=d0,format=raw,snapshot=on"
		-drive "file=$scratch,if=none,id=s0,format=raw"
		-drive "file=$scratch3,if=none,id=s1,format=raw"
		-device nvme,id=nvme0,serial=iommutrace0,bus=pcie.0,addr=0x4
		-device nvme-ns,drive=d0,bus=nvme0,nsid=1
		-device nvme-ns,drive=s0,bus=nvme0,nsid=2
		-device nvme-ns,drive=s1,bus=nvme0,nsid=3
		-object "memory-backend-file,id=bar,size=$VM_BAR_SIZE,mem-path=$VM_SHM_FILE,share=on"
		-device ivshmem-plain,memdev=bar,bus=pcie.0,addr=0x5
		-drive "file=$results,if=none,id=r0,format=raw"
		-device virtio-blk-pci,drive=r0,bus=pcie.0,addr=0x6
		-drive "file=$disk,if=none,id=d1,format=raw,snapshot=on"
		-device nvme,id=nvme1,serial=iommutrace1,bus=pcie.0,addr=0x7
		-device nvme-ns,drive=d1,bus=nvme1,nsid=1
		-serial "file:$logdir/console.log" -serial "file:$logdir/output.log"
		-kernel "$KERNEL_VMLINUZ" -initrd "$initrd" -append "$KERNEL_APPEND")
}

# Stop QEMU: politely, then for good.
stop_qemu() {
	local pid=$1
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.5
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# run_qemu LOGDIR: boot, stream COMMAND's output, enforce the deadlines. Sets QEMU_STATUS and
# VM_FAILURE ("" when the guest ran to its end; otherwise why it was stopped) and VM_BOOT_S;
# QEMU_PID while QEMU runs, for the runner's cleanup.
run_qemu() {
	local logdir=$1 qpid tailpid start booted=0
	: >"$logdir/console.log"
	: >"$logdir/output.log"
	debug "qemu-system-x86_64 ${QEMU_ARGS[*]}"
	qemu-system-x86_64 "${QEMU_ARGS[@]}" </dev/null >"$logdir/qemu.log" 2>&1 &
	qpid=$!
	QEMU_PID=$qpid
	tail -n +1 -s 0.2 -F --pid="$qpid" "$logdir/output.log" 2>/dev/null &
	tailpid=$!
	start=$SECONDS
	VM_FAILURE=""
	VM_BOOT_S=""
	while kill -0 "$qpid" 2>/dev/null; do
		if [ "$booted" = 0 ] && grep -q 'iommutrace-vm: init started' "$logdir/console.log"; then
			booted=1
			VM_BOOT_S=$((SECONDS - start))
			debug "guest up after ${VM_BOOT_S}s"
		fi
		if [ "$booted" = 0 ] && [ $((SECONDS - start)) -ge "$VM_BOOT_TIMEOUT" ]; then
			VM_FAILURE="the guest did not reach /init within ${VM_BOOT_TIMEOUT}s"
		elif [ $((SECONDS - start)) -ge "$VM_TIMEOUT" ]; then
			VM_FAILURE="the guest ran past --timeout ${VM_TIMEOUT}s"
		fi
		if [ -n "$VM_FAILURE" ]; then
			stop_qemu "$qpid"
			break
		fi
		sleep 0.5
	done
	QEMU_STATUS=0
	wait "$qpid" || QEMU_STATUS=$?
	# a guest that got there between the last look and its end
	if [ "$booted" = 0 ] && grep -q 'iommutrace-vm: init started' "$logdir/console.log"; then
		VM_BOOT_S=$((SECONDS - start))
	fi
	QEMU_PID=""
	wait "$tailpid" 2>/dev/null || true
}
