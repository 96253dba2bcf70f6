/* The ftrace text parser (see import_text.h): one line at a time, every field checked, nothing
 * assumed about a line until it has parsed completely. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "tracer/import_text.h"

/* A cursor over [p, end) of the line being parsed. */
struct cur {
	const char *p;
	const char *end;
};

struct header {
	const char *comm;
	size_t comm_len;
	uint32_t pid;
	uint32_t tgid; /* 0: the line has no thread group id */
	uint32_t cpu;
	__u64 ts_ns;
	const char *event;
	size_t event_len;
	struct cur msg;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool at_end(const struct cur *c)
{
	return c->p == c->end;
}

static void skip_spaces(struct cur *c)
{
	while (c->p < c->end && is_space(*c->p))
		c->p++;
}

/* Matches the literal s exactly. */
static bool eat(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return false;
	c->p += n;
	return true;
}

/* Decimal digits [p, end) into *v; false when empty or over UINT64_MAX. */
static bool digits_value(const char *p, const char *end, __u64 *v)
{
	__u64 x = 0;

	if (p == end)
		return false;
	for (; p < end; p++) {
		if (!is_digit(*p) || x > (UINT64_MAX - (__u64)(*p - '0')) / 10)
			return false;
		x = x * 10 + (__u64)(*p - '0');
	}
	*v = x;
	return true;
}

static bool eat_dec(struct cur *c, __u64 *v)
{
	const char *start = c->p;

	while (c->p < c->end && is_digit(*c->p))
		c->p++;
	return digits_value(start, c->p, v);
}

/* An optional '-' and decimal digits, within [min, max]. */
static bool eat_sdec(struct cur *c, int64_t min, int64_t max, int64_t *v)
{
	bool neg = eat(c, "-");
	__u64 u;
	int64_t x;

	if (!eat_dec(c, &u) || u > (__u64)INT64_MAX)
		return false;
	x = neg ? -(int64_t)u : (int64_t)u;
	if (x < min || x > max)
		return false;
	*v = x;
	return true;
}

/* "0x" and 1 to 16 hex digits. */
static bool eat_hex(struct cur *c, __u64 *v)
{
	__u64 x = 0;
	int n = 0, d;

	if (!eat(c, "0x"))
		return false;
	while (c->p < c->end && (d = hex_value(*c->p)) >= 0) {
		if (++n > 16)
			return false;
		x = x << 4 | (__u64)d;
		c->p++;
	}
	*v = x;
	return n > 0;
}

/* The bytes up to the next stop character or space (not consumed); false when empty. */
static bool eat_token(struct cur *c, char stop, const char **tok, size_t *len)
{
	const char *start = c->p;

	while (c->p < c->end && *c->p != stop && !is_space(*c->p))
		c->p++;
	*tok = start;
	*len = (size_t)(c->p - start);
	return *len > 0;
}

/* "SECONDS.FRACTION" with 1 to 9 fraction digits, exactly filling [p, end). */
static bool parse_timestamp(const char *p, const char *end, __u64 *ns)
{
	const char *dot = memchr(p, '.', (size_t)(end - p));
	__u64 secs, frac;
	size_t frac_digits;

	if (!dot || !digits_value(p, dot, &secs) || !digits_value(dot + 1, end, &frac))
		return false;
	frac_digits = (size_t)(end - dot - 1);
	if (frac_digits > 9 || secs > (UINT64_MAX - 999999999) / 1000000000)
		return false;
	for (size_t i = frac_digits; i < 9; i++)
		frac *= 10;
	*ns = secs * 1000000000 + frac;
	return true;
}

/* "COMM-PID [(TGID)]" ending right before the CPU column at bracket. */
static bool parse_task(const char *start, const char *bracket, struct header *h)
{
	const char *l = bracket, *d;
	__u64 v;

	if (l == start || !is_space(l[-1]))
		return false;
	while (l > start && is_space(l[-1]))
		l--;
	if (l > start && l[-1] == ')') {
		const char *close = l - 1, *open = close, *in;

		/* "(%7d)": a thread group id is short, which also keeps lines full of ')' linear */
		while (open > start && open[-1] != '(' && close - open < 16)
			open--;
		if (open == start || open[-1] != '(')
			return false;
		in = open;
		open--;
		while (in < close && is_space(*in))
			in++;
		if (in < close && *in == '-') {
			/* "(-------)": the tgid was not saved */
			while (in < close && *in == '-')
				in++;
			if (in != close)
				return false;
		} else if (!digits_value(in, close, &v) || v > UINT32_MAX) {
			return false;
		} else {
			h->tgid = (uint32_t)v;
		}
		l = open;
		if (l == start || !is_space(l[-1]))
			return false;
		while (l > start && is_space(l[-1]))
			l--;
	}
	d = l;
	while (d > start && is_digit(d[-1]))
		d--;
	if (d == start || d[-1] != '-' || !digits_value(d, l, &v) || v > UINT32_MAX)
		return false;
	h->pid = (uint32_t)v;
	h->comm = start;
	while (h->comm < d - 1 && is_space(*h->comm))
		h->comm++;
	h->comm_len = (size_t)(d - 1 - h->comm);
	return h->comm_len > 0;
}

/* "[CPU] [FLAGS] SECONDS.FRACTION: EVENT: " from bracket on. */
static bool parse_columns(const char *bracket, const char *end, struct header *h)
{
	struct cur c = { bracket + 1, end };
	const char *tok;
	size_t len;
	__u64 v;

	if (!eat_dec(&c, &v) || v > UINT32_MAX || !eat(&c, "]") || at_end(&c) || !is_space(*c.p))
		return false;
	h->cpu = (uint32_t)v;
	skip_spaces(&c);
	if (!eat_token(&c, '\0', &tok, &len))
		return false;
	if (tok[len - 1] != ':') {
		/* the irq-info flags column ("d..2."), absent in some outputs */
		skip_spaces(&c);
		if (!eat_token(&c, '\0', &tok, &len) || tok[len - 1] != ':')
			return false;
	}
	if (!parse_timestamp(tok, tok + len - 1, &h->ts_ns))
		return false;
	skip_spaces(&c);
	if (!eat_token(&c, ':', &h->event, &h->event_len) || !eat(&c, ":") ||
	    (!at_end(&c) && !is_space(*c.p)))
		return false;
	skip_spaces(&c);
	h->msg = c;
	return true;
}

/* The CPU column is the first "[digits]" after "-PID" at which the rest of the line parses: a
 * comm may itself hold brackets. */
static bool parse_header(const char *start, const char *end, struct header *h)
{
	for (const char *b = start; (b = memchr(b, '[', (size_t)(end - b))); b++) {
		memset(h, 0, sizeof(*h));
		if (parse_task(start, b, h) && parse_columns(b, end, h))
			return true;
	}
	return false;
}

/* The rest of the message, which must not be empty, as a name. */
static bool eat_rest(struct cur *c, char *out, size_t outlen)
{
	if (at_end(c))
		return false;
	ftrace_copy_name(out, outlen, c->p, (size_t)(c->end - c->p));
	c->p = c->end;
	return true;
}

/* "IOMMU: iova=0x%016llx - 0x%016llx paddr=0x%016llx size=%zu" (before 5.13 without the end). */
static bool parse_map(struct cur *c, struct it_map *m)
{
	__u64 iova_end;
	bool has_end;

	if (!eat(c, "IOMMU: iova=") || !eat_hex(c, &m->iova))
		return false;
	has_end = eat(c, " - ");
	if (has_end && !eat_hex(c, &iova_end))
		return false;
	if (!eat(c, " paddr=") || !eat_hex(c, &m->paddr) || !eat(c, " size=") ||
	    !eat_dec(c, &m->size))
		return false;
	return !has_end || iova_end == m->iova + m->size;
}

/* "IOMMU: iova=0x%016llx - 0x%016llx size=%zu unmapped_size=%zu" (before 5.13 without the end) */
static bool parse_unmap(struct cur *c, struct it_unmap *u)
{
	__u64 iova_end;
	bool has_end;

	if (!eat(c, "IOMMU: iova=") || !eat_hex(c, &u->iova))
		return false;
	has_end = eat(c, " - ");
	if (has_end && !eat_hex(c, &iova_end))
		return false;
	if (!eat(c, " size=") || !eat_dec(c, &u->size) || !eat(c, " unmapped_size=") ||
	    !eat_dec(c, &u->unmapped_size))
		return false;
	return !has_end || iova_end == u->iova + u->size;
}

/* attach: "IOMMU: device=%s"; groups: "IOMMU: groupID=%d device=%s" */
static bool parse_device(struct cur *c, uint32_t kind, struct it_device *d)
{
	int64_t gid = -1;

	if (!eat(c, "IOMMU: "))
		return false;
	if (kind != IT_EV_ATTACH &&
	    (!eat(c, "groupID=") || !eat_sdec(c, INT32_MIN, INT32_MAX, &gid) || !eat(c, " ")))
		return false;
	d->group_id = (int32_t)gid;
	return eat(c, "device=") && eat_rest(c, d->dev_name, sizeof(d->dev_name));
}

/* "IOMMU:%s %s iova=0x%016llx flags=0x%04x": driver (may be empty), then device. */
static bool parse_fault(struct cur *c, struct it_fault *f)
{
	const char *iova = NULL, *dev;
	__u64 flags;

	if (!eat(c, "IOMMU:"))
		return false;
	for (const char *s = c->p; (s = memmem(s, (size_t)(c->end - s), " iova=0x", 8)); s++)
		iova = s;
	if (!iova)
		return false;
	dev = iova;
	while (dev > c->p && dev[-1] != ' ')
		dev--;
	if (dev == c->p || dev == iova)
		return false;
	ftrace_copy_name(f->dev_name, sizeof(f->dev_name), dev, (size_t)(iova - dev));
	c->p = iova;
	if (!eat(c, " iova=") || !eat_hex(c, &f->iova) || !eat(c, " flags=") ||
	    !eat_hex(c, &flags) || flags > UINT32_MAX)
		return false;
	f->flags = (int32_t)(uint32_t)flags;
	return true;
}

/* "%s %s: 0x%llx 0x%llx 0x%llx 0x%llx": descriptor type name, IOMMU name, the four words. */
static bool parse_qi(struct cur *c, struct it_qi *q)
{
	const char *tok;
	size_t len;

	if (!eat_token(c, '\0', &tok, &len) || !eat(c, " ") || !eat_token(c, ':', &tok, &len) ||
	    !eat(c, ": "))
		return false;
	for (int i = 0; i < 4; i++)
		if ((i && !eat(c, " ")) || !eat_hex(c, &q->qw[i]))
			return false;
	return true;
}

/* "%s %s[%d] type %s did %d [0x%lx-0x%lx] addr 0x%lx pages 0x%lx mask 0x%lx": IOMMU name,
 * device[PASID], cache tag type, domain id, range, address, pages, mask; 7.x prints no pages. */
static bool parse_flush(struct cur *c, struct it_cache_tag_flush *f)
{
	const char *tok, *open = NULL;
	size_t len;
	int64_t pasid, did;
	struct cur dev;

	if (!eat_token(c, '\0', &tok, &len) || !eat(c, " ") || !eat_token(c, '\0', &tok, &len))
		return false;
	for (const char *s = tok; s < tok + len; s++)
		if (*s == '[')
			open = s;
	if (!open || open == tok)
		return false;
	dev = (struct cur){ open + 1, tok + len };
	if (!eat_sdec(&dev, INT32_MIN, INT32_MAX, &pasid) || !eat(&dev, "]") || !at_end(&dev))
		return false;
	ftrace_copy_name(f->dev_name, sizeof(f->dev_name), tok, (size_t)(open - tok));
	if (!eat(c, " type ") || !eat_token(c, '\0', &tok, &len) || !eat(c, " did ") ||
	    !eat_sdec(c, 0, UINT16_MAX, &did) || !eat(c, " [") || !eat_hex(c, &f->start) ||
	    !eat(c, "-") || !eat_hex(c, &f->end) || !eat(c, "] addr ") || !eat_hex(c, &f->addr))
		return false;
	if (eat(c, " pages ") && !eat_hex(c, &f->pages))
		return false;
	if (!eat(c, " mask ") || !eat_hex(c, &f->mask))
		return false;
	f->domain_id = (uint32_t)did;
	return true;
}

static bool parse_message(const struct ftrace_iommu_event *def, struct cur *c, struct it_event *e)
{
	bool ok;

	switch (def->kind) {
	case IT_EV_MAP:
		ok = parse_map(c, &e->map);
		break;
	case IT_EV_UNMAP:
		ok = parse_unmap(c, &e->unmap);
		break;
	case IT_EV_ATTACH:
	case IT_EV_GROUP_ADD:
	case IT_EV_GROUP_REMOVE:
		ok = parse_device(c, def->kind, &e->device);
		break;
	case IT_EV_FAULT:
		ok = parse_fault(c, &e->fault);
		break;
	case IT_EV_QI_SUBMIT:
		ok = parse_qi(c, &e->qi);
		break;
	default:
		ok = parse_flush(c, &e->flush);
		e->flush.np = def->np;
		break;
	}
	return ok && at_end(c);
}

/* The kernel's "CPU:%d [LOST %lu EVENTS]", and `trace-cmd report`'s "CPU:%d [%lld EVENTS
 * DROPPED]" and "CPU:%d [EVENTS DROPPED]" (count unknown). */
static bool parse_lost(struct cur c, struct text_line *out)
{
	__u64 cpu, lost = 0;

	if (!eat(&c, "CPU:") || !eat_dec(&c, &cpu) || cpu > UINT32_MAX || !eat(&c, " ["))
		return false;
	if (eat(&c, "LOST ")) {
		if (!eat_dec(&c, &lost) || !eat(&c, " EVENTS]"))
			return false;
	} else if (!eat(&c, "EVENTS DROPPED]")) {
		if (!eat_dec(&c, &lost) || !eat(&c, " EVENTS DROPPED]"))
			return false;
	}
	if (!at_end(&c))
		return false;
	out->lost_cpu = (uint32_t)cpu;
	out->lost = lost ? lost : 1;
	out->lost_count_unknown = !lost;
	return true;
}

enum text_line_kind import_text_parse_line(const char *line, struct text_line *out)
{
	struct cur c = { line, line + strlen(line) };
	const struct ftrace_iommu_event *def;
	struct header h;
	struct it_event *e = &out->event;

	memset(out, 0, sizeof(*out));
	while (c.end > c.p && (is_space(c.end[-1]) || c.end[-1] == '\n' || c.end[-1] == '\r'))
		c.end--;
	skip_spaces(&c);
	if (at_end(&c) || *c.p == '#' || eat(&(struct cur){ c.p, c.end }, "cpus="))
		return TEXT_LINE_COMMENT;
	if (parse_lost(c, out))
		return TEXT_LINE_LOST;
	if (!parse_header(c.p, c.end, &h))
		return TEXT_LINE_MALFORMED;
	def = ftrace_iommu_event_find(NULL, h.event, h.event_len);
	/* "map" and "unmap" are common names: only the IOMMU ones print "IOMMU:" */
	if (!def || ((def->kind == IT_EV_MAP || def->kind == IT_EV_UNMAP) &&
		     !eat(&(struct cur){ h.msg.p, h.msg.end }, "IOMMU:")))
		return TEXT_LINE_OTHER_EVENT;
	e->h.ts_ns = h.ts_ns;
	e->h.kind = def->kind;
	e->h.cpu = h.cpu;
	e->h.tid = h.pid;
	e->h.pid = h.tgid ? h.tgid : h.pid;
	ftrace_copy_name(e->h.comm, sizeof(e->h.comm), h.comm, h.comm_len);
	return parse_message(def, &h.msg, e) ? TEXT_LINE_EVENT : TEXT_LINE_MALFORMED;
}

enum line_status {
	LINE_OK,
	LINE_TOO_LONG,
	LINE_HAS_NUL,
};

/* Reads one line without its newline into buf, but stops after limit bytes of f (*taken says how
 * many it read); a line too long for buf or holding a NUL byte is flagged. Returns 1 for a line,
 * 0 at the end of the file, -1 on error. */
static int read_line(FILE *f, char *buf, size_t cap, size_t limit, enum line_status *status,
		     size_t *taken)
{
	size_t n = 0;
	bool any = false;
	int ch;

	*status = LINE_OK;
	*taken = 0;
	while (*taken < limit && (ch = getc_unlocked(f)) != EOF) {
		any = true;
		(*taken)++;
		if (ch == '\n')
			break;
		if (ch == '\0')
			*status = LINE_HAS_NUL;
		else if (n + 1 >= cap)
			*status = LINE_TOO_LONG;
		else
			buf[n++] = (char)ch;
	}
	buf[n] = '\0';
	if (ferror(f))
		return -1;
	return any;
}

/* Without this refusal /dev/zero, /dev/urandom or an endless pipe of anything else would be read
 * for ever: what is not ftrace text is said so once it is clearly not. */
static void refuse_unparsed(const char *name, __u64 last_parsed)
{
	if (!last_parsed)
		log_error("%s: no ftrace event line in its first %d MiB: it is not ftrace text "
			  "output (-v lists the lines that could not be parsed)",
			  name, IMPORT_TEXT_UNPARSED_MAX >> 20);
	else
		log_error("%s: no ftrace event line in the %d MiB after line %llu: the file is "
			  "corrupt from there; cut it at that line to import what it holds",
			  name, IMPORT_TEXT_UNPARSED_MAX >> 20, (unsigned long long)last_parsed);
}

int import_text_stream(FILE *f, const char *name, const struct ftrace_sink *sink,
		       struct ftrace_stats *st)
{
	char *buf = malloc(IMPORT_TEXT_LINE_MAX);
	struct text_line tl;
	enum text_line_kind kind;
	enum line_status status;
	__u64 lineno = 0, last_parsed = 0;
	size_t taken, unparsed = 0; /* bytes read since the last line that parsed */
	int ret = -1, r;

	if (!buf) {
		log_error("%s: out of memory", name);
		return -1;
	}
	while ((r = read_line(f, buf, IMPORT_TEXT_LINE_MAX, IMPORT_TEXT_UNPARSED_MAX + 1 - unparsed,
			      &status, &taken)) > 0) {
		lineno++;
		unparsed += taken;
		if (unparsed > IMPORT_TEXT_UNPARSED_MAX) {
			refuse_unparsed(name, last_parsed);
			goto cleanup;
		}
		if (status != LINE_OK) {
			st->malformed++;
			log_debug("%s:%llu: malformed line (%s)", name, (unsigned long long)lineno,
				  status == LINE_TOO_LONG ? "too long" : "holds a NUL byte");
			continue;
		}
		kind = import_text_parse_line(buf, &tl);
		if (kind != TEXT_LINE_COMMENT && kind != TEXT_LINE_MALFORMED) {
			unparsed = 0;
			last_parsed = lineno;
		}
		switch (kind) {
		case TEXT_LINE_EVENT:
			st->events[tl.event.h.kind]++;
			if (sink->event(&tl.event, sink->ctx))
				goto cleanup;
			break;
		case TEXT_LINE_OTHER_EVENT:
			st->skipped++;
			break;
		case TEXT_LINE_LOST:
			st->lost += tl.lost;
			if (sink->loss(tl.lost_cpu, tl.lost,
				       tl.lost_count_unknown ? "ftrace-lost-unknown" :
							       "ftrace-lost",
				       sink->ctx))
				goto cleanup;
			break;
		case TEXT_LINE_COMMENT:
			break;
		case TEXT_LINE_MALFORMED:
			st->malformed++;
			log_debug("%s:%llu: malformed line: %.120s", name,
				  (unsigned long long)lineno, buf);
			break;
		}
	}
	if (r < 0) {
		log_error("%s: read failed after line %llu: %s", name, (unsigned long long)lineno,
			  strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(buf);
	return ret;
}
