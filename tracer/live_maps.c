/* Live mappings (see live_maps.h): a hash table (common/hash_table.h) on (domain, iova). Two
 * mappings may start at one IOVA of one domain: the trace lost an unmap, or its domains are
 * unknown (tracefs: all are domain 0) and two domains mapped the same IOVA. Both are kept, and an
 * unmap takes the newest. */
#include <stdlib.h>
#include "common/hash_table.h"
#include "common/log.h"
#include "tracer/live_maps.h"

struct live_maps {
	struct hash_table maps; /* struct live_map, keyed by its domain and iova */
	uint64_t untracked;
};

struct live_key {
	uint64_t domain;
	uint64_t iova;
};

static uint64_t key_hash(const struct live_key *k)
{
	return hash_table_hash_u64(k->iova ^ hash_table_hash_u64(k->domain));
}

struct live_maps *live_maps_new(size_t max_entries)
{
	struct live_maps *lm = calloc(1, sizeof(*lm));

	if (!lm)
		return NULL;
	if (max_entries > HASH_TABLE_MAX_ENTRIES ||
	    hash_table_init(&lm->maps, sizeof(struct live_map), sizeof(struct live_key), NULL,
			    (uint32_t)max_entries, 0)) {
		live_maps_free(lm);
		return NULL;
	}
	return lm;
}

void live_maps_free(struct live_maps *lm)
{
	if (!lm)
		return;
	hash_table_free(&lm->maps);
	free(lm);
}

int live_maps_add(struct live_maps *lm, const struct live_map *m)
{
	struct live_key k = { m->domain, m->iova };
	void *e;

	switch (hash_table_add(&lm->maps, key_hash(&k), &k, &e)) {
	case HASH_TABLE_FULL:
		lm->untracked++;
		return 1;
	case HASH_TABLE_NOMEM:
		log_error("event writer: out of memory for the live mappings");
		return -1;
	default:
		*(struct live_map *)e = *m;
		return 0;
	}
}

/* Takes out the newest mapping of domain starting at iova into *m; 0 when there is none. */
static int take(struct live_maps *lm, uint64_t domain, uint64_t iova, struct live_map *m)
{
	struct live_key k = { domain, iova };
	struct live_map *newest = hash_table_find_last(&lm->maps, key_hash(&k), &k);

	if (!newest)
		return 0;
	*m = *newest;
	hash_table_remove(&lm->maps, newest);
	return 1;
}

int64_t live_maps_remove(struct live_maps *lm, uint64_t domain, uint64_t iova, uint64_t size,
			 int (*fn)(const struct live_map *piece, void *ctx), void *ctx)
{
	uint64_t found = 0;
	struct live_map piece;

	while (found < size && take(lm, domain, iova + found, &piece)) {
		if (piece.size > size - found) {
			/* the unmap ends inside this mapping: its rest stays mapped */
			struct live_map rest = piece;

			piece.size = size - found;
			rest.iova += piece.size;
			rest.paddr += piece.size;
			rest.size -= piece.size;
			if (live_maps_add(lm, &rest) < 0)
				return -1;
		}
		if (fn(&piece, ctx))
			return -1;
		found += piece.size;
	}
	return (int64_t)found;
}

size_t live_maps_count(const struct live_maps *lm)
{
	return hash_table_count(&lm->maps);
}

uint64_t live_maps_untracked(const struct live_maps *lm)
{
	return lm->untracked;
}
