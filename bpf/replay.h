/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The synthetic storm `make bench` drives the map and unmap handlers with (item 2): event n of
 * the storm is a 4 KiB map when n is even and the unmap of that page when n is odd, at IOVAs that
 * move over 256 MiB and physical addresses that move over 4 GiB. Shared by the BPF replay program
 * (replay_map_unmap, which runs IT_REPLAY_MAX_BATCH events per BPF_PROG_TEST_RUN at most) and
 * bench/bench_capture.c, which test-runs bpftrace's handlers one event at a time the same way. */
#ifndef IOMMUTRACE_REPLAY_H
#define IOMMUTRACE_REPLAY_H

#define IT_REPLAY_MAX_BATCH 1024
#define IT_REPLAY_SIZE 4096ull
#define IT_REPLAY_UNMAP(n) ((n)&1)
#define IT_REPLAY_IOVA(n) (0x100000000ull + (((n) / 2) % 65536) * IT_REPLAY_SIZE)
#define IT_REPLAY_PADDR(n) (0x200000000ull + (((n)*7919) % (1u << 20)) * IT_REPLAY_SIZE)

#endif
