/* Byte counts in binary units. */
#include <stdio.h>
#include "human_size.h"

const char *human_size(uint64_t bytes, char buf[HUMAN_SIZE_LEN])
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >> (10 * (u + 1)))
		u++;
	if (!(bytes & ((1ull << (10 * u)) - 1)))
		snprintf(buf, HUMAN_SIZE_LEN, "%llu %s", (unsigned long long)(bytes >> (10 * u)),
			 units[u]);
	else
		snprintf(buf, HUMAN_SIZE_LEN, "%.1f %s", (double)bytes / (double)(1ull << (10 * u)),
			 units[u]);
	return buf;
}
