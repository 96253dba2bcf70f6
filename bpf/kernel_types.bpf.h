/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The few kernel types the BPF programs read, declared by hand under preserve_access_index so
 * that CO-RE relocates each field against the running kernel's BTF. The build never needs the
 * build host's BTF. Only fields read here are declared; their layout here is irrelevant. */
#ifndef IOMMUTRACE_KERNEL_TYPES_BPF_H
#define IOMMUTRACE_KERNEL_TYPES_BPF_H

/* tells bpf_tracing.h to use the kernel's pt_regs field names */
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __u64 phys_addr_t;
typedef unsigned long size_t;
typedef _Bool bool;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di;
	unsigned long orig_ax, ip, cs, flags, sp, ss;
};

struct kobject {
	const char *name;
};

struct iommu_domain {
	unsigned int type;
	unsigned long pgsize_bitmap;
};

/* private to drivers/iommu/iommu.c, present in BTF all the same */
struct iommu_group {
	struct iommu_domain *domain;
	int id;
};

struct device {
	struct kobject kobj;
	struct iommu_group *iommu_group;
};

/* the thread a record is stamped with: read directly (bpf_get_current_task_btf), in plain loads
 * rather than by bpf_get_current_comm(), a helper call that copies the name */
struct task_struct {
	int pid;
	int tgid;
	char comm[16];
};

/* drivers/iommu/intel/cache.c, 6.10 on */
struct cache_tag {
	struct device *dev;
	u16 domain_id;
};

#pragma clang attribute pop

#endif
