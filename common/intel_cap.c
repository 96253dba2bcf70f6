/* Intel VT-d CAP and ECAP register fields. */
#include "common/intel_cap.h"
#include "common/leaf.h"

static unsigned field(uint64_t reg, unsigned low, unsigned width)
{
	return (unsigned)((reg >> low) & ((1ull << width) - 1));
}

void intel_cap_decode(uint64_t cap, struct intel_cap *out)
{
	out->nd = field(cap, 0, 3);
	/* nd 7 is reserved; 2^18 is the most the field could mean */
	out->num_domains = 1u << (4 + 2 * (out->nd < 7 ? out->nd : 7));
	out->rwbf = field(cap, 4, 1);
	out->caching_mode = field(cap, 7, 1);
	out->sagaw = field(cap, 8, 5);
	out->mgaw_bits = field(cap, 16, 6) + 1;
	out->sllps = field(cap, 34, 4);
	out->psi = field(cap, 39, 1);
	out->mamv = field(cap, 48, 6);
	out->fl1gp = field(cap, 56, 1);
	out->pi = field(cap, 59, 1);
	out->fl5lp = field(cap, 60, 1);
}

void intel_ecap_decode(uint64_t ecap, struct intel_ecap *out)
{
	out->coherent = field(ecap, 0, 1);
	out->qi = field(ecap, 1, 1);
	out->dt = field(ecap, 2, 1);
	out->ir = field(ecap, 3, 1);
	out->eim = field(ecap, 4, 1);
	out->pt = field(ecap, 6, 1);
	out->sc = field(ecap, 7, 1);
	out->nest = field(ecap, 26, 1);
	out->prs = field(ecap, 29, 1);
	out->pasid = field(ecap, 40, 1);
	out->pasid_bits = out->pasid ? field(ecap, 35, 5) + 1 : 0;
	out->smts = field(ecap, 43, 1);
	out->slts = field(ecap, 46, 1);
	out->flts = field(ecap, 47, 1);
	out->pms = field(ecap, 51, 1);
}

uint64_t intel_cap_pgsize_bitmap(uint64_t cap)
{
	unsigned sllps = field(cap, 34, 4);
	uint64_t bitmap = LEAF_4K;

	if (sllps & 1)
		bitmap |= LEAF_2M;
	if (sllps & 2)
		bitmap |= LEAF_1G;
	return bitmap;
}

unsigned intel_sagaw_max_bits(unsigned sagaw)
{
	/* bit n: an (n + 2)-level table, 30 + 9n bits; bit 4 (6 levels) covers all 64 */
	for (int bit = 4; bit >= 0; bit--) {
		if (sagaw & (1u << bit))
			return bit == 4 ? 64 : 30 + 9 * (unsigned)bit;
	}
	return 0;
}
