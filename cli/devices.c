/* `iommutrace devices`: shows the machine inventory (IOMMU units, boot options, PCI devices,
 * groups, BARs) as text or JSON, without recording anything and without privilege. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "common/amd_cap.h"
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/intel_cap.h"
#include "common/inventory.h"
#include "common/json_writer.h"
#include "common/leaf.h"
#include "common/log.h"
#include "cli/commands.h"
#include "cli/options.h"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace devices [--root DIR] [--json]\n"
"\n"
"Shows the IOMMU units with their decoded capabilities (page sizes, address width, caching\n"
"mode, scalable mode, pass-through), the IOMMU options of the kernel command line, the PCI\n"
"devices with their driver, IOMMU group and its domain type, NUMA node and memory BARs, and each\n"
"NVIDIA GPU's BAR1 with how much of it is in use, which NVIDIA's NVML (libnvidia-ml.so.1,\n"
"loaded when present; not with --root) tells. Reads /sys and /proc only: records nothing and\n"
"needs no privilege.\n"
"\n"
"      --root DIR   read DIR/sys and DIR/proc instead of /sys and /proc\n"
"      --json       print one JSON document (keys as in the database's columns)\n"
"  -v, --verbose    debug messages (missing optional files, skipped BARs)\n"
"  -h, --help       this text\n"
"\n"
"I/O-port BARs are not shown: they are neither DMA targets nor mmap windows.\n"
"exit status: 0 ok, 1 failure, 2 bad usage\n");
}
/* clang-format on */

static const char *yes_no(int capability)
{
	return capability == IOMMU_CAP_UNKNOWN ? "unknown" : capability ? "yes" : "no";
}

/* Prints s with bytes that are not printable ASCII as '?': boot options are user input. */
static void print_sanitized(const char *s)
{
	for (; *s; s++)
		putchar(*s >= 0x20 && *s <= 0x7e ? *s : '?');
}

/* "4 KiB, 2 MiB, 1 GiB"; a run of three or more consecutive sizes as "4 KiB..256 GiB" */
static void print_page_sizes(uint64_t bitmap)
{
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];
	const char *sep = "";

	for (unsigned bit = 0; bit < 64; bit++) {
		unsigned last = bit;

		if (!(bitmap >> bit & 1))
			continue;
		while (last + 1 < 64 && bitmap >> (last + 1) & 1)
			last++;
		human_size(1ull << bit, a);
		if (last == bit)
			printf("%s%s", sep, a);
		else
			printf("%s%s%s%s", sep, a, last == bit + 1 ? ", " : "..",
			       human_size(1ull << last, b));
		sep = ", ";
		bit = last;
	}
}

static void print_intel_details(const struct iommu_unit *u, bool superpages_off)
{
	struct intel_cap cap;
	struct intel_ecap ecap;

	intel_cap_decode(u->cap, &cap);
	intel_ecap_decode(u->ecap, &ecap);
	printf("    page sizes      ");
	if (u->have_cap)
		print_page_sizes(u->pgsize_bitmap);
	else
		printf("unknown");
	if (superpages_off)
		printf("; superpages off (intel_iommu=sp_off): domains use 4 KiB only");
	printf("\n    address width   ");
	if (u->have_cap)
		printf("%u bits (MGAW); tables up to %u bits (SAGAW 0x%x)\n", cap.mgaw_bits,
		       intel_sagaw_max_bits(cap.sagaw), cap.sagaw);
	else
		printf("unknown\n");
	printf("    caching mode    %s\n", yes_no(u->caching_mode));
	printf("    scalable mode   %s", yes_no(u->scalable_mode));
	if (u->scalable_mode == 1)
		printf(" (first-level %s, with 1 GiB pages %s; second-level %s; nested %s)",
		       ecap.flts ? "yes" : "no",
		       u->have_cap ? (cap.fl1gp ? "yes" : "no") : "unknown",
		       ecap.slts ? "yes" : "no", ecap.nest ? "yes" : "no");
	printf("\n    pass-through    %s\n", yes_no(u->pass_through));
}

static void print_amd_details(const struct iommu_unit *u)
{
	struct amd_efr efr;

	amd_efr_decode(u->ecap, &efr);
	printf("    page sizes      ");
	print_page_sizes(u->pgsize_bitmap);
	printf(" (v1 page table)\n    address width   ");
	if (u->addr_width_bits)
		printf("%u bits (%u-level host table, EFR.HATS)\n", u->addr_width_bits,
		       efr.host_levels);
	else
		printf("unknown\n");
	printf("    caching mode    %s (NpCache)\n", yes_no(u->caching_mode));
	printf("    scalable mode   n/a (Intel only)\n");
	printf("    pass-through    %s (device table)\n", yes_no(u->pass_through));
}

static void print_register(bool known, uint64_t value)
{
	if (known)
		printf("0x%llx", (unsigned long long)value);
	else
		printf("unknown");
}

/* ROOT/rel, for messages; when that does not fit, rel said to be under the root. */
static const char *root_dir(char dir[PATH_MAX], const char *root, const char *rel)
{
	if (sysfs_path(dir, PATH_MAX, root, "%s", rel))
		snprintf(dir, PATH_MAX, "%s under --root", rel);
	return dir;
}

static void print_units(const struct inventory *inv, const char *root)
{
	bool superpages_off = boot_options_have_flag(inv->boot_options, inv->n_boot_options,
						     "intel_iommu", "sp_off");
	char dir[PATH_MAX];

	root_dir(dir, root, "/sys/class/iommu");
	if (!inv->n_iommus) {
		printf("no IOMMU units in %s: the IOMMU is off or absent (enable VT-d or AMD-Vi in "
		       "the firmware; on Intel, boot with intel_iommu=on)\n",
		       dir);
		return;
	}
	printf("IOMMU units (%s):\n", dir);
	for (size_t i = 0; i < inv->n_iommus; i++) {
		const struct iommu_unit *u = &inv->iommus[i];

		switch (u->vendor) {
		case IOMMU_VENDOR_INTEL:
			printf("  %s: Intel VT-d%s%s\n", u->name, u->version[0] ? " " : "",
			       u->version);
			print_intel_details(u, superpages_off);
			break;
		case IOMMU_VENDOR_AMD:
			printf("  %s: AMD-Vi\n", u->name);
			print_amd_details(u);
			break;
		default:
			printf("  %s: other vendor; capabilities not decoded\n", u->name);
			continue;
		}
		printf("    registers       cap ");
		print_register(u->have_cap, u->cap);
		printf(u->vendor == IOMMU_VENDOR_AMD ? ", EFR " : ", ecap ");
		print_register(u->have_ecap, u->ecap);
		putchar('\n');
	}
}

static void print_boot_options(const struct inventory *inv)
{
	if (!inv->n_boot_options) {
		printf("no IOMMU options on the kernel command line: kernel defaults apply\n");
		return;
	}
	printf("IOMMU boot options:\n");
	for (size_t i = 0; i < inv->n_boot_options; i++) {
		const struct boot_option *o = &inv->boot_options[i];

		printf("  ");
		print_sanitized(o->name);
		if (o->value) {
			putchar('=');
			print_sanitized(o->value);
		}
		putchar('\n');
	}
}

static const char *group_domain_type(const struct inventory *inv, int group)
{
	const struct iommu_group *g = iommu_groups_find(inv->groups, inv->n_groups, group);

	return g && g->domain_type[0] ? g->domain_type : NULL;
}

static void print_device(const struct inventory *inv, const struct pci_device *d)
{
	char ids[24], class[16], group[16], numa[16], size[HUMAN_SIZE_LEN];
	const char *type = group_domain_type(inv, d->iommu_group);

	snprintf(ids, sizeof(ids), "%04x:%04x", d->vendor_id < 0 ? 0 : d->vendor_id,
		 d->device_id < 0 ? 0 : d->device_id);
	if (d->vendor_id < 0)
		memcpy(ids, "????", 4);
	if (d->device_id < 0)
		memcpy(ids + 5, "????", 4);
	if (d->class_code < 0)
		strcpy(class, "?");
	else
		snprintf(class, sizeof(class), "%06x", d->class_code);
	if (d->iommu_group < 0)
		strcpy(group, "-");
	else
		snprintf(group, sizeof(group), "%d", d->iommu_group);
	if (d->numa_node < 0)
		strcpy(numa, "-");
	else
		snprintf(numa, sizeof(numa), "%d", d->numa_node);
	printf("  %-12s  %-9s  %-6s  %-12s  %-5s  %-9s  %-6s  %s\n", d->bdf, ids, class,
	       d->driver[0] ? d->driver : "-", group,
	       d->iommu_group < 0 ? "-" :
	       type		  ? type :
				    "?",
	       d->iommu[0] ? d->iommu : "-", numa);
	for (unsigned i = 0; i < d->n_bars; i++) {
		const struct pci_bar *b = &d->bars[i];

		printf("      BAR%u  0x%016llx  %-8s  %s  %s\n", b->index,
		       (unsigned long long)b->start, human_size(b->size, size),
		       b->is_64bit ? "64-bit" : "32-bit",
		       b->prefetchable ? "prefetchable" : "non-prefetchable");
	}
}

static void print_devices(const struct inventory *inv, const char *root)
{
	char dir[PATH_MAX];

	if (!inv->n_devices) {
		printf("no PCI devices in %s\n", root_dir(dir, root, "/sys/bus/pci/devices"));
		return;
	}
	printf("PCI devices:\n");
	printf("  %-12s  %-9s  %-6s  %-12s  %-5s  %-9s  %-6s  %s\n", "BDF", "VEND:DEV", "CLASS",
	       "DRIVER", "GROUP", "DOMAIN", "IOMMU", "NUMA");
	for (size_t i = 0; i < inv->n_devices; i++)
		print_device(inv, &inv->devices[i]);
}

/* Each NVIDIA GPU's BAR1: where GPU memory appears for peers, and how much of it is in use. */
static void print_gpus(const struct inventory *inv)
{
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN], c[HUMAN_SIZE_LEN];

	if (!inv->n_gpus)
		return;
	printf("\nNVIDIA GPUs, BAR1 (GPU memory as peers see it):\n");
	for (size_t i = 0; i < inv->n_gpus; i++) {
		const struct gpu_bar1 *g = &inv->gpus[i];

		printf("  %s  ", g->bdf);
		if (g->assigned)
			printf("0x%016llx  %s", (unsigned long long)g->start,
			       human_size(g->size, a));
		else
			printf("BAR1 unassigned");
		if (g->have_nvml)
			printf("; in use %s of %s, %s free (NVML)\n", human_size(g->nvml_used, a),
			       human_size(g->nvml_total, b), human_size(g->nvml_free, c));
		else
			printf("; use unknown: NVML: %s\n", g->nvml_status);
	}
}

static void print_text(const struct inventory *inv, const char *root)
{
	print_units(inv, root);
	putchar('\n');
	print_boot_options(inv);
	putchar('\n');
	print_devices(inv, root);
	print_gpus(inv);
}

static void json_tristate(struct json_writer *w, const char *key, int value)
{
	if (value == IOMMU_CAP_UNKNOWN)
		json_null(w, key);
	else
		json_bool(w, key, value);
}

static void json_units(struct json_writer *w, const struct inventory *inv)
{
	json_begin_array(w, "iommus");
	for (size_t i = 0; i < inv->n_iommus; i++) {
		const struct iommu_unit *u = &inv->iommus[i];
		bool have_pgsizes = u->pgsize_bitmap != 0;

		json_begin_object(w, NULL);
		json_string(w, "name", u->name);
		json_string(w, "vendor", iommu_vendor_name(u->vendor));
		if (u->have_cap)
			json_hex(w, "cap", u->cap);
		else
			json_null(w, "cap");
		if (u->have_ecap)
			json_hex(w, "ecap", u->ecap);
		else
			json_null(w, "ecap");
		json_string(w, "version", u->version[0] ? u->version : NULL);
		if (have_pgsizes)
			json_hex(w, "pgsize_bitmap", u->pgsize_bitmap);
		else
			json_null(w, "pgsize_bitmap");
		json_tristate(w, "supports_2m",
			      have_pgsizes ? !!(u->pgsize_bitmap & LEAF_2M) : IOMMU_CAP_UNKNOWN);
		json_tristate(w, "supports_1g",
			      have_pgsizes ? !!(u->pgsize_bitmap & LEAF_1G) : IOMMU_CAP_UNKNOWN);
		if (u->addr_width_bits)
			json_int(w, "mgaw_bits", u->addr_width_bits);
		else
			json_null(w, "mgaw_bits");
		if (u->sagaw >= 0)
			json_int(w, "sagaw", u->sagaw);
		else
			json_null(w, "sagaw");
		json_tristate(w, "caching_mode", u->caching_mode);
		json_tristate(w, "pass_through", u->pass_through);
		json_tristate(w, "scalable_mode", u->scalable_mode);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_boot_options(struct json_writer *w, const struct inventory *inv)
{
	json_begin_array(w, "boot_options");
	for (size_t i = 0; i < inv->n_boot_options; i++) {
		json_begin_object(w, NULL);
		json_string(w, "name", inv->boot_options[i].name);
		json_string(w, "value", inv->boot_options[i].value);
		json_end_object(w);
	}
	json_end_array(w);
}

/* An id as lspci writes it ("0x1b36", class "0x010802"), or null when unknown */
static void json_id(struct json_writer *w, const char *key, int id, int digits)
{
	char text[16];

	if (id < 0) {
		json_null(w, key);
		return;
	}
	snprintf(text, sizeof(text), "0x%0*x", digits, (unsigned)id);
	json_string(w, key, text);
}

static void json_bars(struct json_writer *w, const struct pci_device *d)
{
	char size[HUMAN_SIZE_LEN];

	json_begin_array(w, "bars");
	for (unsigned i = 0; i < d->n_bars; i++) {
		const struct pci_bar *b = &d->bars[i];

		json_begin_object(w, NULL);
		json_int(w, "bar_index", b->index);
		json_hex(w, "start_addr", b->start);
		json_int(w, "size_bytes", (int64_t)b->size);
		json_string(w, "size", human_size(b->size, size));
		json_bool(w, "is_64bit", b->is_64bit);
		json_bool(w, "prefetchable", b->prefetchable);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_devices(struct json_writer *w, const struct inventory *inv)
{
	json_begin_array(w, "devices");
	for (size_t i = 0; i < inv->n_devices; i++) {
		const struct pci_device *d = &inv->devices[i];

		json_begin_object(w, NULL);
		json_string(w, "bdf", d->bdf);
		json_id(w, "vendor_id", d->vendor_id, 4);
		json_id(w, "device_id", d->device_id, 4);
		json_id(w, "class_code", d->class_code, 6);
		json_string(w, "driver", d->driver[0] ? d->driver : NULL);
		if (d->iommu_group >= 0)
			json_int(w, "iommu_group", d->iommu_group);
		else
			json_null(w, "iommu_group");
		json_string(w, "domain_type",
			    d->iommu_group >= 0 ? group_domain_type(inv, d->iommu_group) : NULL);
		json_string(w, "iommu_name", d->iommu[0] ? d->iommu : NULL);
		if (d->numa_node >= 0)
			json_int(w, "numa_node", d->numa_node);
		else
			json_null(w, "numa_node");
		json_bars(w, d);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_groups(struct json_writer *w, const struct inventory *inv)
{
	json_begin_array(w, "iommu_groups");
	for (size_t i = 0; i < inv->n_groups; i++) {
		const struct iommu_group *g = &inv->groups[i];

		json_begin_object(w, NULL);
		json_int(w, "group_id", g->id);
		json_string(w, "domain_type", g->domain_type[0] ? g->domain_type : NULL);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_gpus(struct json_writer *w, const struct inventory *inv)
{
	json_begin_array(w, "gpu_bar1");
	for (size_t i = 0; i < inv->n_gpus; i++) {
		const struct gpu_bar1 *g = &inv->gpus[i];

		json_begin_object(w, NULL);
		json_string(w, "bdf", g->bdf);
		json_id(w, "device_id", g->device_id, 4);
		if (g->assigned) {
			json_hex(w, "start_addr", g->start);
			json_int(w, "size_bytes", (int64_t)g->size);
		} else {
			json_null(w, "start_addr");
			json_null(w, "size_bytes");
		}
		if (g->have_nvml) {
			json_int(w, "nvml_total_bytes", (int64_t)g->nvml_total);
			json_int(w, "nvml_used_bytes", (int64_t)g->nvml_used);
			json_int(w, "nvml_free_bytes", (int64_t)g->nvml_free);
		} else {
			json_null(w, "nvml_total_bytes");
			json_null(w, "nvml_used_bytes");
			json_null(w, "nvml_free_bytes");
		}
		json_string(w, "nvml_status", g->nvml_status);
		json_end_object(w);
	}
	json_end_array(w);
}

static int print_json(const struct inventory *inv, const char *root)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_begin_object(&w, NULL);
	json_string(&w, "root", root);
	json_units(&w, inv);
	json_boot_options(&w, inv);
	json_devices(&w, inv);
	json_groups(&w, inv);
	json_gpus(&w, inv);
	json_end_object(&w);
	return json_finish(&w);
}

struct devices_opts {
	const char *root;
	bool json;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct devices_opts *o = ctx;

	if (opt == 'r')
		o->root = arg;
	else if (opt == 'j')
		o->json = true;
	return 0;
}

int cmd_devices(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "devices",
		.short_opts = "+",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_NO_OPERANDS,
	};
	struct devices_opts o = { .root = "/" };
	struct inventory inv;
	const char *root;
	int status, failed = 0, ret = IT_EXIT_FAILURE;

	if (!cli_parse(&cmd, argc, argv, &o, &status))
		return status;
	root = o.root;
	if (!*root) {
		log_error("--root needs a directory");
		return IT_EXIT_USAGE;
	}
	/* inventory_read logs its own failure and leaves inv empty */
	if (inventory_read(root, &inv))
		goto cleanup;
	if (o.json)
		failed = print_json(&inv, root);
	else
		print_text(&inv, root);
	if (failed || fflush(stdout) || ferror(stdout)) {
		log_error("cannot write the device list to standard output");
		goto cleanup;
	}
	ret = IT_EXIT_OK;
cleanup:
	inventory_free(&inv);
	return ret;
}
