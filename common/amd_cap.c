/* AMD-Vi capability header and Extended Feature Register fields, and the v1 page sizes. */
#include <errno.h>
#include <string.h>
#include "common/amd_cap.h"
#include "common/sysfs_file.h"

static unsigned field(uint64_t reg, unsigned low, unsigned width)
{
	return (unsigned)((reg >> low) & ((1ull << width) - 1));
}

void amd_cap_header_decode(uint32_t cap, struct amd_cap_header *out)
{
	out->iotlb = field(cap, 24, 1);
	out->np_cache = field(cap, 26, 1);
	out->efr_sup = field(cap, 27, 1);
}

void amd_efr_decode(uint64_t efr, struct amd_efr *out)
{
	out->ppr = field(efr, 1, 1);
	out->x2apic = field(efr, 2, 1);
	out->nx = field(efr, 3, 1);
	out->gt = field(efr, 4, 1);
	out->ia = field(efr, 6, 1);
	out->ga = field(efr, 7, 1);
	out->he = field(efr, 8, 1);
	out->pc = field(efr, 9, 1);
	out->hats = field(efr, 10, 2);
	out->gats = field(efr, 12, 2);
	out->pasid_bits = out->gt ? field(efr, 32, 5) + 1 : 0;
	out->hd = field(efr, 52, 1);
	out->snp = field(efr, 63, 1);
	/* each level resolves 9 bits above the 12-bit page offset; 6 levels reach past 64 */
	out->host_levels = out->hats == 3 ? 0 : out->hats + 4;
	out->host_addr_bits = out->host_levels == 6 ? 64 :
			      out->host_levels	    ? 12 + 9 * out->host_levels :
						      0;
}

/* Major and minor of "6.1.0-18-amd64"; -1 when the text does not start so. */
static int release_version(const char *release, long *major, long *minor)
{
	char buf[32];
	size_t len = strspn(release, "0123456789.");
	char *dot;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, release, len);
	buf[len] = '\0';
	dot = strchr(buf, '.');
	if (!dot)
		return -1;
	*dot = '\0';
	dot = dot + 1;
	dot[strspn(dot, "0123456789")] = '\0';
	if (sysfs_parse_long(buf, 0, 1000, major) || sysfs_parse_long(dot, 0, 1000, minor))
		return -1;
	return 0;
}

int amd_features_efr(const char *text, const char *kernel_release, uint64_t *efr)
{
	char first[40], *second; /* up to "0x" + 16 digits, ":", "0x" + 16 digits */
	uint64_t a, b;
	long major, minor;
	size_t len = strlen(text);

	if (len >= sizeof(first)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(first, text, len + 1);
	second = strchr(first, ':');
	if (!second)
		return sysfs_parse_hex(first, efr);
	*second++ = '\0';
	if (sysfs_parse_hex(first, &a) || sysfs_parse_hex(second, &b)) {
		errno = EINVAL;
		return -1;
	}
	if (kernel_release && !release_version(kernel_release, &major, &minor)) {
		*efr = major > 6 || (major == 6 && minor >= 7) ? a : b;
		return 0;
	}
	if (!a != !b) {
		*efr = a ? a : b;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

uint64_t amd_v1_pgsize_bitmap(void)
{
	const uint64_t from_4k_to_2_51 = ((1ull << 52) - 1) & ~((1ull << 12) - 1);

	return from_4k_to_2_51 & ~(1ull << 39);
}
