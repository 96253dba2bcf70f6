/* Text from outside, made inert for a terminal or a gnuplot script (see untrusted_text.h). */
#include <stdbool.h>
#include <string.h>
#include "common/untrusted_text.h"

size_t utf8_sequence(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		lo = s[0] == 0xe0 ? 0xa0 : lo;
		hi = s[0] == 0xed ? 0x9f : hi;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		lo = s[0] == 0xf0 ? 0x90 : lo;
		hi = s[0] == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return len;
}

char *text_for_terminal(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t len = *p < 0x80 ? 1 : utf8_sequence(p);

		/* U+0080 to U+009F are C2 80 to C2 9F: 0x9b among them is CSI to some terminals */
		if (!len || *p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] < 0xa0)) {
			*p++ = '?';
			continue;
		}
		p += len;
	}
	return s;
}

size_t text_columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80; /* not a continuation byte */
	return n;
}

void gnuplot_string(FILE *f, const char *s)
{
	static const char kept[] = " ,.:;_+-/()=#%[]<>|~*";

	fputc('\'', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool alnum =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		fputc(alnum || strchr(kept, c) ? c : '?', f);
	}
	fputc('\'', f);
}

char *shell_word(char *out, size_t len, const char *path)
{
	bool plain = *path != '\0';
	size_t n = 0;

	for (const char *c = path; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || strchr("_./-+:@%,=", *c);
	if (plain || len < 3) {
		snprintf(out, len, "%s", plain ? path : "");
		return out;
	}
	out[n++] = '\'';
	for (const char *c = path; *c; c++) {
		size_t k = *c == '\'' ? 4 : 1;

		if (n + k + 2 > len) /* the closing quote and the NUL */
			break;
		memcpy(out + n, *c == '\'' ? "'\\''" : c, k);
		n += k;
	}
	out[n++] = '\'';
	out[n] = '\0';
	return out;
}
