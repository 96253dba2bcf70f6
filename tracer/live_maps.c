/* Live mappings (see live_maps.h): a chained hash on (domain, iova). */
#include <stdlib.h>
#include "tracer/live_maps.h"

struct node {
	struct live_map m;
	struct node *next;
};

struct live_maps {
	struct node **buckets;
	size_t nbuckets;		/* a power of two */
	size_t count, max_entries;
	uint64_t untracked;
};

static size_t bucket_of(const struct live_maps *lm, uint64_t domain, uint64_t iova)
{
	uint64_t h = (iova >> 12) * 0x9E3779B97F4A7C15ull ^ domain * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h >> 17) & (lm->nbuckets - 1);
}

struct live_maps *live_maps_new(size_t max_entries)
{
	struct live_maps *lm = calloc(1, sizeof(*lm));

	if (!lm)
		return NULL;
	lm->nbuckets = 1024;
	lm->max_entries = max_entries;
	lm->buckets = calloc(lm->nbuckets, sizeof(*lm->buckets));
	if (!lm->buckets) {
		free(lm);
		return NULL;
	}
	return lm;
}

void live_maps_free(struct live_maps *lm)
{
	if (!lm)
		return;
	for (size_t b = 0; b < lm->nbuckets; b++) {
		struct node *n = lm->buckets[b];

		while (n) {
			struct node *next = n->next;

			free(n);
			n = next;
		}
	}
	free(lm->buckets);
	free(lm);
}

static int grow(struct live_maps *lm)
{
	size_t old = lm->nbuckets;
	struct node **old_buckets = lm->buckets;

	lm->buckets = calloc(old * 2, sizeof(*lm->buckets));
	if (!lm->buckets) {
		lm->buckets = old_buckets;
		return -1;
	}
	lm->nbuckets = old * 2;
	for (size_t b = 0; b < old; b++) {
		struct node *n = old_buckets[b];

		while (n) {
			struct node *next = n->next;
			size_t nb = bucket_of(lm, n->m.domain, n->m.iova);

			n->next = lm->buckets[nb];
			lm->buckets[nb] = n;
			n = next;
		}
	}
	free(old_buckets);
	return 0;
}

int live_maps_add(struct live_maps *lm, const struct live_map *m)
{
	struct node *n;
	size_t b;

	if (lm->count >= lm->max_entries) {
		lm->untracked++;
		return 1;
	}
	if (lm->count >= lm->nbuckets && grow(lm))
		return -1;
	n = malloc(sizeof(*n));
	if (!n)
		return -1;
	n->m = *m;
	b = bucket_of(lm, m->domain, m->iova);
	n->next = lm->buckets[b];
	lm->buckets[b] = n;
	lm->count++;
	return 0;
}

/* Unlinks and returns the mapping of domain starting at iova, or NULL. */
static struct node *take(struct live_maps *lm, uint64_t domain, uint64_t iova)
{
	struct node **link = &lm->buckets[bucket_of(lm, domain, iova)];

	for (; *link; link = &(*link)->next) {
		struct node *n = *link;

		if (n->m.domain == domain && n->m.iova == iova) {
			*link = n->next;
			lm->count--;
			return n;
		}
	}
	return NULL;
}

int64_t live_maps_remove(struct live_maps *lm, uint64_t domain, uint64_t iova, uint64_t size,
			 int (*fn)(const struct live_map *piece, void *ctx), void *ctx)
{
	uint64_t found = 0;

	while (found < size) {
		struct node *n = take(lm, domain, iova + found);
		struct live_map piece;
		int ret;

		if (!n)
			break;
		piece = n->m;
		if (piece.size > size - found) {
			/* the unmap ends inside this mapping: its rest stays mapped */
			piece.size = size - found;
			n->m.iova += piece.size;
			n->m.paddr += piece.size;
			n->m.size -= piece.size;
			ret = live_maps_add(lm, &n->m);
			free(n);
			if (ret < 0)
				return -1;
		} else {
			free(n);
		}
		if (fn(&piece, ctx))
			return -1;
		found += piece.size;
	}
	return (int64_t)found;
}

size_t live_maps_count(const struct live_maps *lm)
{
	return lm->count;
}

uint64_t live_maps_untracked(const struct live_maps *lm)
{
	return lm->untracked;
}
