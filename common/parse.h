/* Parsing of user input: numbers, sizes with K/M/G suffixes or hex, durations, PCI addresses.
 * Every parser rejects trailing garbage, overflow and empty input and returns -1 with errno=EINVAL
 * or ERANGE; nothing is written to *out on failure. */
#ifndef IOMMUTRACE_PARSE_H
#define IOMMUTRACE_PARSE_H

#include <stdint.h>

/**
 * parse_size() - Parse a size: "4096", "0x1000", "4K", "2M", "1G", "1T" (binary multiples,
 * K/KiB/k accepted).
 */
int parse_size(const char *s, uint64_t *out);
/**
 * parse_u64() - Parse an unsigned integer, decimal or 0x-hex (a leading 0 is still decimal).
 */
int parse_u64(const char *s, uint64_t *out);
/**
 * parse_duration_ns() - Parse a duration: seconds, fractional allowed, with optional unit: "1",
 * "0.5", "250ms", "2s", "3m", "1h"; > 0.
 */
int parse_duration_ns(const char *s, uint64_t *out_ns);
/**
 * parse_bdf() - Parse a PCI address, "0000:01:00.0" or "01:00.0" (domain 0), into the canonical
 * "dddd:bb:dd.f" form.
 *
 * Hex digits exactly there (no sign, no spaces), device at most 1f, function at most 7.
 */
int parse_bdf(const char *s, char out[13]);

#endif
