/* Reading, differencing and storing the aggregated calls (see aggregates.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/db.h"
#include "common/log.h"
#include "tracer/aggregates.h"
#include "tracer/event_writer.h"

struct aggregates {
	sqlite3 *db;
	int64_t sid;
	struct agg_maps maps;
	sqlite3_stmt *insert;
	struct agg_snapshot prev;
	uint64_t flush_ns; /* of the flush being stored */
	bool taken[IT_AGG_SLOTS]; /* slots published */
	bool publish_failed; /* logged once; the hash counts the rest */
};

static int compare_classes(const void *a, const void *b)
{
	return memcmp(&((const struct agg_class *)a)->key, &((const struct agg_class *)b)->key,
		      sizeof(struct it_agg_key));
}

void agg_snapshot_sort(struct agg_snapshot *snap)
{
	size_t out = 0;

	if (!snap->count)
		return;
	qsort(snap->classes, snap->count, sizeof(*snap->classes), compare_classes);
	for (size_t i = 1; i < snap->count; i++) {
		struct agg_class *last = &snap->classes[out], *c = &snap->classes[i];

		if (memcmp(&last->key, &c->key, sizeof(c->key))) {
			snap->classes[++out] = *c;
			continue;
		}
		last->value.count += c->value.count;
		last->value.bytes += c->value.bytes;
		last->value.pages += c->value.pages;
	}
	snap->count = out + 1;
}

/* Appends key with its per-CPU values summed. 0 or -ENOMEM. */
static int add_class(struct agg_snapshot *snap, size_t *cap, const struct it_agg_key *key,
		     const struct it_agg_value *percpu, int ncpus)
{
	struct agg_class *c;

	if (snap->count == *cap) {
		size_t want = *cap ? *cap * 2 : 256;
		struct agg_class *grown = realloc(snap->classes, want * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		snap->classes = grown;
		*cap = want;
	}
	c = &snap->classes[snap->count++];
	memset(c, 0, sizeof(*c));
	c->key = *key;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		c->value.count += percpu[cpu].count;
		c->value.bytes += percpu[cpu].bytes;
		c->value.pages += percpu[cpu].pages;
	}
	return 0;
}

/* Appends the classes of the published slots (those published says, or every slot's key read
 * when it is NULL), each with its per-CPU counts summed. */
static int read_slots(const struct agg_maps *maps, const bool *published, struct agg_snapshot *snap,
		      size_t *cap, struct it_agg_value *percpu, int ncpus)
{
	for (uint32_t i = 0; i < IT_AGG_SLOTS; i++) {
		struct it_agg_slot_key slot;
		int ret;

		if (published && !published[i])
			continue;
		if (bpf_map_lookup_elem(maps->slot_keys_fd, &i, &slot))
			return -errno;
		if (!slot.ready)
			continue;
		if (bpf_map_lookup_elem(maps->slot_counts_fd, &i, percpu))
			return -errno;
		ret = add_class(snap, cap, &slot.key, percpu, ncpus);
		if (ret)
			return ret;
	}
	return 0;
}

int agg_snapshot_read(const struct agg_maps *maps, const bool *published, struct agg_snapshot *snap)
{
	int ncpus = libbpf_num_possible_cpus(), map_fd = maps->hash_fd;
	struct it_agg_key key, next;
	struct it_agg_value *percpu;
	size_t cap = 0;
	int ret = 0;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	/* a per-CPU value is rounded up to 8 bytes per CPU: it_agg_value already is */
	percpu = calloc((size_t)ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	agg_snapshot_free(snap);
	/* classes are never deleted, so walking keys while the BPF side adds some cannot lose
	 * our place; a class added behind it is read by the next flush */
	for (int rc = bpf_map_get_next_key(map_fd, NULL, &next); !rc;
	     rc = bpf_map_get_next_key(map_fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(map_fd, &key, percpu))
			continue;
		ret = add_class(snap, &cap, &key, percpu, ncpus);
		if (ret)
			break;
	}
	/* a class counted in the hash before its slot was published is in both: sort sums it */
	if (!ret)
		ret = read_slots(maps, published, snap, &cap, percpu, ncpus);
	free(percpu);
	agg_snapshot_sort(snap);
	return ret;
}

int agg_slots_publish(const struct agg_maps *maps, const struct agg_snapshot *snap, bool *taken)
{
	int published = 0;

	for (size_t i = 0; i < snap->count; i++) {
		struct it_agg_slot_key slot = { .key = snap->classes[i].key };
		uint32_t at = it_agg_slot_of(&slot.key);

		if (taken[at])
			continue;
		/* the key whole first, then ready: see bpf/iommutrace.h */
		if (bpf_map_update_elem(maps->slot_keys_fd, &at, &slot, BPF_ANY))
			return -errno;
		slot.ready = 1;
		if (bpf_map_update_elem(maps->slot_keys_fd, &at, &slot, BPF_ANY))
			return -errno;
		taken[at] = true;
		published++;
	}
	return published;
}

int agg_snapshot_delta(const struct agg_snapshot *prev, const struct agg_snapshot *cur,
		       int (*fn)(const struct agg_class *growth, void *ctx), void *ctx)
{
	size_t p = 0;

	for (size_t i = 0; i < cur->count; i++) {
		const struct agg_class *c = &cur->classes[i];
		struct agg_class growth = *c;
		int order = 1, ret;

		while (p < prev->count &&
		       (order = memcmp(&prev->classes[p].key, &c->key, sizeof(c->key))) < 0)
			p++;
		if (p < prev->count && !order) {
			/* counters only grow (never deleted nor reset); the guard keeps a bad read from wrapping */
			const struct it_agg_value *old = &prev->classes[p].value;

			growth.value.count =
				c->value.count > old->count ? c->value.count - old->count : 0;
			growth.value.bytes =
				c->value.bytes > old->bytes ? c->value.bytes - old->bytes : 0;
			growth.value.pages =
				c->value.pages > old->pages ? c->value.pages - old->pages : 0;
		}
		if (!growth.value.count && !growth.value.bytes && !growth.value.pages)
			continue;
		ret = fn(&growth, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

void agg_snapshot_free(struct agg_snapshot *snap)
{
	free(snap->classes);
	snap->classes = NULL;
	snap->count = 0;
}

const char *capture_mode_name(enum capture_mode mode)
{
	switch (mode) {
	case CAPTURE_PER_EVENT:
		return "per-event";
	case CAPTURE_AGGREGATE:
		return "aggregate";
	case CAPTURE_THRESHOLD:
		return "threshold";
	}
	return "unknown";
}

int capture_settings_store(sqlite3 *db, int64_t sid, const struct bpf_capture_opts *opts,
			   uint64_t flush_interval_ns)
{
	sqlite3_stmt *st =
		itdb_prepare(db, "INSERT OR REPLACE INTO capture_settings(session_id,"
				 " mode, threshold_bytes, flush_interval_ns, aggregate_entries)"
				 " VALUES (?1, ?2, ?3, ?4, ?5)");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	sqlite3_bind_text(st, 2, capture_mode_name(opts->mode), -1, SQLITE_STATIC);
	if (opts->mode == CAPTURE_THRESHOLD)
		sqlite3_bind_int64(st, 3,
				   (int64_t)(opts->threshold_bytes ? opts->threshold_bytes :
								     CAPTURE_DEFAULT_THRESHOLD));
	if (opts->mode != CAPTURE_PER_EVENT) {
		sqlite3_bind_int64(st, 4, (int64_t)flush_interval_ns);
		sqlite3_bind_int64(st, 5,
				   opts->aggregate_entries ? opts->aggregate_entries :
							     CAPTURE_DEFAULT_AGGREGATE_ENTRIES);
	}
	rc = itdb_step_done(st, "storing the capture mode");
	sqlite3_finalize(st);
	return rc;
}

struct aggregates *aggregates_new(sqlite3 *db, int64_t sid, const struct agg_maps *maps)
{
	struct aggregates *a = calloc(1, sizeof(*a));

	if (!a) {
		log_error("out of memory for the aggregates");
		return NULL;
	}
	a->db = db;
	a->sid = sid;
	a->maps = *maps;
	a->insert =
		itdb_prepare(db, "INSERT INTO map_aggregates(session_id, flush_ns, domain_ptr,"
				 " op, size_log2, pgsize_bytes, align_log2, count, bytes, pages)"
				 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
	if (!a->insert) {
		free(a);
		return NULL;
	}
	return a;
}

static int store_growth(const struct agg_class *g, void *ctx)
{
	struct aggregates *a = ctx;
	sqlite3_stmt *st = a->insert;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, a->sid);
	sqlite3_bind_int64(st, 2, (int64_t)a->flush_ns);
	if (g->key.domain)
		sqlite3_bind_int64(st, 3, (int64_t)g->key.domain);
	sqlite3_bind_text(st, 4, it_event_kind_name(g->key.op), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, (int)g->key.size_log2);
	sqlite3_bind_int64(st, 6, (int64_t)g->key.pgsize);
	sqlite3_bind_int(st, 7, (int)g->key.align_log2);
	sqlite3_bind_int64(st, 8, (int64_t)g->value.count);
	sqlite3_bind_int64(st, 9, (int64_t)g->value.bytes);
	sqlite3_bind_int64(st, 10, (int64_t)g->value.pages);
	return itdb_step_done(st, "storing aggregated calls");
}

long aggregates_flush(struct aggregates *a, uint64_t flush_ns)
{
	struct agg_snapshot cur = { 0 };
	long before = sqlite3_total_changes(a->db);
	int ret = agg_snapshot_read(&a->maps, a->taken, &cur);

	if (ret) {
		log_error("reading the aggregated calls from BPF failed: %s", strerror(-ret));
		agg_snapshot_free(&cur);
		return -1;
	}
	a->flush_ns = flush_ns;
	if (agg_snapshot_delta(&a->prev, &cur, store_growth, a)) {
		agg_snapshot_free(&cur);
		return -1;
	}
	agg_snapshot_free(&a->prev);
	a->prev = cur;
	if (!a->publish_failed) {
		ret = agg_slots_publish(&a->maps, &a->prev, a->taken);
		if (ret < 0) {
			log_warn("could not give counted calls their fast slots (%s): they are "
				 "counted in the hash, more slowly",
				 strerror(-ret));
			a->publish_failed = true;
		}
	}
	return sqlite3_total_changes(a->db) - before;
}

uint64_t aggregates_calls(const struct aggregates *a)
{
	uint64_t calls = 0;

	for (size_t i = 0; i < a->prev.count; i++)
		calls += a->prev.classes[i].value.count;
	return calls;
}

void aggregates_free(struct aggregates *a)
{
	if (!a)
		return;
	sqlite3_finalize(a->insert);
	agg_snapshot_free(&a->prev);
	free(a);
}
