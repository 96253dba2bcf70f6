/* The IOMMU options of the kernel command line (/proc/cmdline): which of them the machine was
 * booted with, as written, and whether an option carries a given flag (intel_iommu=on,sp_off).
 *
 * Kept: intel_iommu, amd_iommu, iommu, swiotlb, and every iommu.*, intel_iommu_* and
 * amd_iommu_* option. Names compare as the kernel compares them, '-' equal to '_'
 * (intel-iommu=on is intel_iommu=on); they are stored as written. Words after a bare "--" go
 * to init, not the kernel, and are ignored. Double quotes group words as the kernel's parser
 * does and are removed: iommu="a b" gives value "a b". */
#ifndef IOMMUTRACE_BOOT_OPTIONS_H
#define IOMMUTRACE_BOOT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct boot_option {
	char *name;
	char *value; /* NULL for a bare word ("iommu.forcedac"), "" for "name=" */
};

/**
 * boot_options_parse() - Append the IOMMU options of @cmdline to *@opts, in command-line order.
 * @opts: *@n entries; NULL/0 to start
 *
 * Return: 0, or -1 (errno ENOMEM) leaving *@opts and *@n as they were.
 */
int boot_options_parse(const char *cmdline, struct boot_option **opts, size_t *n);

/**
 * boot_options_read() - Read ROOT/proc/cmdline and parse it.
 *
 * A missing file gives no options and a debug line; an unreadable one, no options and a warning.
 *
 * Return: 0, or -1 only when out of memory.
 */
int boot_options_read(const char *root, struct boot_option **opts, size_t *n);

void boot_options_free(struct boot_option *opts, size_t n);

/**
 * boot_option_value_has_flag() - Whether the comma-separated @value holds @flag as one whole item.
 *
 * Return: true for ("on,sp_off", "sp_off"); false for ("on,sp_offx", "sp_off") and (NULL, ...).
 */
bool boot_option_value_has_flag(const char *value, const char *flag);

/**
 * boot_options_have_flag() - Whether any option called @name carries @flag.
 * @name: compared as the kernel does
 *
 * The kernel applies every occurrence in turn, so intel_iommu=on intel_iommu=sp_off turns both on.
 */
bool boot_options_have_flag(const struct boot_option *opts, size_t n, const char *name,
			    const char *flag);

#endif
