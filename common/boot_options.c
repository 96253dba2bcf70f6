/* Finds the IOMMU options in the kernel command line, splitting it into words the way the
 * kernel's own parameter parser does (whitespace outside double quotes). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/boot_options.h"
#include "common/log.h"
#include "common/sysfs_file.h"

/* /proc/cmdline is 2 KiB on x86 and 4 KiB on some architectures; bootconfig can append to it */
#define CMDLINE_MAX (64 * 1024)

static bool same_char(char a, char b)
{
	return a == b || ((a == '-' || a == '_') && (b == '-' || b == '_'));
}

/* name[0..len) equals word, or (when prefix) starts with it; '-' and '_' compare equal */
static bool name_matches(const char *name, size_t len, const char *word, bool prefix)
{
	size_t i = 0;

	for (; word[i]; i++) {
		if (i == len || !same_char(name[i], word[i]))
			return false;
	}
	return prefix || i == len;
}

static bool is_iommu_option(const char *name, size_t len)
{
	static const char *const exact[] = { "intel_iommu", "amd_iommu", "iommu", "swiotlb" };
	static const char *const prefixes[] = { "iommu.", "intel_iommu_", "amd_iommu_" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (name_matches(name, len, exact[i], false))
			return true;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (name_matches(name, len, prefixes[i], true))
			return true;
	}
	return false;
}

static int append_option(struct boot_option **opts, size_t *n, const char *name, size_t name_len,
			 const char *value, size_t value_len)
{
	struct boot_option *grown, opt = { NULL, NULL };

	opt.name = strndup(name, name_len);
	if (!opt.name)
		goto nomem;
	if (value) {
		opt.value = strndup(value, value_len);
		if (!opt.value)
			goto nomem;
	}
	grown = array_grow(*opts, *n, sizeof(**opts));
	if (!grown)
		goto nomem;
	grown[*n] = opt;
	*opts = grown;
	(*n)++;
	return 0;
nomem:
	free(opt.name);
	free(opt.value);
	errno = ENOMEM;
	return -1;
}

int boot_options_parse(const char *cmdline, struct boot_option **opts, size_t *n)
{
	const size_t n_before = *n;
	const char *p = cmdline;

	while (*p) {
		const char *word, *value = NULL;
		size_t len, name_len, value_len = 0;
		bool quoted = false, in_quote = false;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (*p == '"') {
			quoted = in_quote = true;
			p++;
		}
		word = p;
		for (; *p && (in_quote || !isspace((unsigned char)*p)); p++) {
			if (*p == '=' && !value)
				value = p + 1;
			if (*p == '"')
				in_quote = !in_quote;
		}
		len = (size_t)(p - word);
		name_len = value ? (size_t)(value - 1 - word) : len;
		if (value) {
			value_len = (size_t)(word + len - value);
			/* the kernel drops quotes around a value, and the closing quote of a word
			 * that began with one */
			if (value_len && *value == '"') {
				value++;
				value_len--;
				if (value_len && value[value_len - 1] == '"')
					value_len--;
			} else if (quoted && value_len && value[value_len - 1] == '"') {
				value_len--;
			}
		} else if (quoted && name_len && word[name_len - 1] == '"') {
			name_len--;
		}
		if (!value && name_len == 2 && !strncmp(word, "--", 2))
			break;
		if (!name_len || !is_iommu_option(word, name_len))
			continue;
		if (append_option(opts, n, word, name_len, value, value_len))
			goto nomem;
	}
	return 0;
nomem:
	for (size_t i = n_before; i < *n; i++) {
		free((*opts)[i].name);
		free((*opts)[i].value);
	}
	*n = n_before;
	errno = ENOMEM;
	return -1;
}

int boot_options_read(const char *root, struct boot_option **opts, size_t *n)
{
	char path[PATH_MAX];
	char *cmdline = NULL;
	int ret = -1;

	if (sysfs_path(path, sizeof(path), root, "/proc/cmdline")) {
		sysfs_report(root, errno);
		return 0;
	}
	cmdline = malloc(CMDLINE_MAX);
	if (!cmdline)
		goto cleanup;
	if (sysfs_read_text(path, cmdline, CMDLINE_MAX)) {
		sysfs_report(path, errno);
		ret = 0;
		goto cleanup;
	}
	ret = boot_options_parse(cmdline, opts, n);
cleanup:
	if (ret)
		log_error("reading boot options: out of memory");
	free(cmdline);
	return ret;
}

void boot_options_free(struct boot_option *opts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(opts[i].name);
		free(opts[i].value);
	}
	free(opts);
}

bool boot_option_value_has_flag(const char *value, const char *flag)
{
	size_t flag_len = strlen(flag);

	if (!value || !flag_len)
		return false;
	for (const char *item = value;; item++) {
		const char *comma = strchr(item, ',');
		size_t len = comma ? (size_t)(comma - item) : strlen(item);

		if (len == flag_len && !strncmp(item, flag, len))
			return true;
		if (!comma)
			return false;
		item = comma;
	}
}

bool boot_options_have_flag(const struct boot_option *opts, size_t n, const char *name,
			    const char *flag)
{
	for (size_t i = 0; i < n; i++) {
		if (name_matches(opts[i].name, strlen(opts[i].name), name, false) &&
		    boot_option_value_has_flag(opts[i].value, flag))
			return true;
	}
	return false;
}
