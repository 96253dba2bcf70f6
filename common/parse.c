/* Parsers for numbers, sizes, durations and PCI addresses given on the command line or read from
 * files. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/parse.h"

/* 0x-hex, else decimal: strtoull's base 0 would read a leading 0 as octal ("010" is 8) */
static int number_base(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, number_base(s));
	if (errno == ERANGE)
		return -1;
	if (end == s || *end) {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

static int suffix_shift(const char *sfx, unsigned *shift)
{
	static const struct {
		const char *name;
		unsigned shift;
	} units[] = {
		{ "", 0 },     { "b", 0 },    { "B", 0 },   { "k", 10 },   { "K", 10 },
		{ "KB", 10 },  { "KiB", 10 }, { "m", 20 },  { "M", 20 },   { "MB", 20 },
		{ "MiB", 20 }, { "g", 30 },   { "G", 30 },  { "GB", 30 },  { "GiB", 30 },
		{ "t", 40 },   { "T", 40 },   { "TB", 40 }, { "TiB", 40 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(sfx, units[i].name)) {
			*shift = units[i].shift;
			return 0;
		}
	}
	return -1;
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, number_base(s));
	if (errno == ERANGE)
		return -1;
	if (end == s) {
		errno = EINVAL;
		return -1;
	}
	/* a hex number has no unit: "0x1000B" is ambiguous, refuse it */
	if ((!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) && *end) {
		errno = EINVAL;
		return -1;
	}
	if (suffix_shift(end, &shift)) {
		errno = EINVAL;
		return -1;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		errno = ERANGE;
		return -1;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *out_ns)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{ "", 1e9 },   { "s", 1e9 },  { "ms", 1e6 },
		{ "us", 1e3 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;

	/* strtod would also read hex ("0x1p3") */
	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.') || strpbrk(s, "xX")) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(v)) {
		errno = errno == ERANGE ? ERANGE : EINVAL;
		return -1;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].name))
			continue;
		v *= units[i].ns;
		if (v < 1.0) {
			errno = EINVAL;
			return -1;
		}
		if (v >= 18e18) {
			errno = ERANGE;
			return -1;
		}
		*out_ns = (uint64_t)v;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

/* n hex digits at s, nothing else (sscanf's %x would also take a sign or leading spaces) */
static bool hex_field(const char *s, int n, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v << 4 | (unsigned)(isdigit((unsigned char)s[i]) ?
						s[i] - '0' :
						(tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*out = v;
	return true;
}

int parse_bdf(const char *s, char out[13])
{
	unsigned dom = 0, bus, dev, fn;
	size_t len = s ? strlen(s) : 0;
	const char *b = len == 12 ? s + 5 : s;

	if ((len != 12 && len != 7) || (len == 12 && (!hex_field(s, 4, &dom) || s[4] != ':')) ||
	    !hex_field(b, 2, &bus) || b[2] != ':' || !hex_field(b + 3, 2, &dev) || b[5] != '.' ||
	    !hex_field(b + 6, 1, &fn) || dev > 0x1f || fn > 7) {
		errno = EINVAL;
		return -1;
	}
	snprintf(out, 13, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}
