/* Checking data against the testbed's disk pattern, and writing it (see pattern.h). */
#include <string.h>
#include "io/pattern.h"

static const char magic[8] = { 'I', 'O', 'M', 'M', 'U', 'T', 'R', 'C' };

int64_t pattern_mismatch(const void *data, uint64_t sector, uint64_t len)
{
	const volatile uint8_t *p = data; /* device memory (a BAR window) reads as it is */

	for (uint64_t off = 0; off < len; off += PATTERN_SECTOR, sector++) {
		for (unsigned i = 0; i < 8; i++)
			if (p[off + i] != (uint8_t)(sector >> (8 * i)))
				return (int64_t)(off + i);
		for (unsigned i = 8; i < 16; i++)
			if (p[off + i] != (uint8_t)magic[i - 8])
				return (int64_t)(off + i);
		for (unsigned i = 16; i < PATTERN_SECTOR; i++)
			if (p[off + i] != (uint8_t)i)
				return (int64_t)(off + i);
	}
	return -1;
}

void pattern_fill(void *data, uint64_t sector, uint64_t len)
{
	uint8_t tmpl[PATTERN_SECTOR];

	/* one sector's constant part, then a copy per sector with its number: whole-word stores,
	 * which normal memory and a BAR's mmap both take */
	for (unsigned i = 8; i < 16; i++)
		tmpl[i] = (uint8_t)magic[i - 8];
	for (unsigned i = 16; i < PATTERN_SECTOR; i++)
		tmpl[i] = (uint8_t)i;
	for (uint64_t off = 0; off < len; off += PATTERN_SECTOR, sector++) {
		for (unsigned i = 0; i < 8; i++)
			tmpl[i] = (uint8_t)(sector >> (8 * i));
		memcpy((uint8_t *)data + off, tmpl, PATTERN_SECTOR);
	}
}
