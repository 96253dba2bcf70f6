/* Byte counts in binary units. */
#include <stdio.h>
#include <string.h>
#include "common/human_size.h"

const char *human_size(uint64_t bytes, char buf[HUMAN_SIZE_LEN])
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >> (10 * (u + 1)))
		u++;
	if (!(bytes & ((1ull << (10 * u)) - 1))) {
		snprintf(buf, HUMAN_SIZE_LEN, "%llu %s", (unsigned long long)(bytes >> (10 * u)),
			 units[u]);
	} else {
		double v = (double)bytes / (double)(1ull << (10 * u));

		snprintf(buf, HUMAN_SIZE_LEN, "%.1f %s", v, units[u]);
		/* "1.0 GiB" would hide the 2 MiB of 1 GiB + 2 MiB: three decimals, cut, not rounded */
		if (strstr(buf, ".0 ")) {
			uint64_t frac = bytes & ((1ull << (10 * u)) - 1);
			unsigned thousandths =
				(unsigned)(((unsigned __int128)frac * 1000) >> (10 * u));

			snprintf(buf, HUMAN_SIZE_LEN, "%llu.%03u %s",
				 (unsigned long long)(bytes >> (10 * u)), thousandths, units[u]);
		}
	}
	return buf;
}
