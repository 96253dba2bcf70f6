/* Fuzz target: the parsers of command-line values (common/parse.c): sizes, numbers, durations and
 * PCI addresses. On success the result must obey the parser's contract: a BDF in canonical form,
 * a positive duration; on failure nothing is written. */
#include <errno.h>
#include <stdio.h>
#include "common/parse.h"
#include "fuzz/fuzz.h"

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), bdf[13] = "untouched";
	uint64_t v = UNTOUCHED;
	unsigned dom, bus, dev, fn;

	if (!s)
		return 0;
	if (parse_size(s, &v) && v != UNTOUCHED)
		abort();
	v = UNTOUCHED;
	if (parse_u64(s, &v) && v != UNTOUCHED)
		abort();
	v = UNTOUCHED;
	if (parse_duration_ns(s, &v) ? v != UNTOUCHED : v == 0)
		abort();
	if (!parse_bdf(s, bdf)) {
		if (strlen(bdf) != 12 ||
		    sscanf(bdf, "%4x:%2x:%2x.%1x", &dom, &bus, &dev, &fn) != 4 || dev > 0x1f ||
		    fn > 7)
			abort();
	} else if (strcmp(bdf, "untouched")) {
		abort();
	}
	free(s);
	return 0;
}
