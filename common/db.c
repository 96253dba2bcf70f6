/* Opening the database, the schema version check, and session rows. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "common/db.h"
#include "common/db_checkpoint.h"
#include "common/log.h"
#include "common/out_path.h"
#include "common/schema.h"
#include "common/untrusted_text.h"

/* How long a statement waits for another connection's lock before it fails busy */
#define BUSY_TIMEOUT_MS 5000

/* What this layer keeps for a connection it opened, found by its handle. */
struct conn {
	sqlite3 *db;
	/* a full disk was said: what fails after it is its consequence, said at debug level */
	bool disk_full_said;
	/* while itdb_open sets the connection up, its caller says what failed, from the first
	 * failure kept here (after a ROLLBACK, sqlite3_errmsg says something else) */
	bool quiet, quiet_busy;
	char quiet_msg[256];
	bool taken_meanwhile; /* create_schema found the new file made by another process */
	struct conn *next;
};

static struct conn *conns;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
/* for connections this layer did not open (SQLite's own, a test's): one state for them all */
static struct conn others;

static struct conn *conn_of(sqlite3 *db)
{
	struct conn *c;

	pthread_mutex_lock(&conns_lock);
	for (c = conns; c && c->db != db; c = c->next)
		;
	pthread_mutex_unlock(&conns_lock);
	return c ? c : &others;
}

/* Forgets db's state (closed, or about to be). */
static void conn_forget(sqlite3 *db)
{
	struct conn **p, *gone = NULL;

	pthread_mutex_lock(&conns_lock);
	for (p = &conns; *p && (*p)->db != db; p = &(*p)->next)
		;
	if (*p) {
		gone = *p;
		*p = gone->next;
	}
	pthread_mutex_unlock(&conns_lock);
	free(gone);
}

/* A fresh state for db (a handle closed without itdb_close may come back at the same address).
 * NULL when out of memory. */
static struct conn *conn_add(sqlite3 *db)
{
	struct conn *c = calloc(1, sizeof(*c));

	conn_forget(db);
	if (!c)
		return NULL;
	c->db = db;
	pthread_mutex_lock(&conns_lock);
	c->next = conns;
	conns = c;
	pthread_mutex_unlock(&conns_lock);
	return c;
}

/* Closes a connection this layer opened, without a checkpoint. */
static void conn_close(sqlite3 *db)
{
	conn_forget(db);
	sqlite3_close(db);
}

/* Whether db's last failure was another connection's lock, held past the busy timeout. */
static bool failed_busy(sqlite3 *db)
{
	int rc = sqlite3_extended_errcode(db) & 0xff;

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static void say_busy(const char *path, char *err, size_t errlen)
{
	char word[PATH_MAX + 64];

	snprintf(err, errlen,
		 "%s is locked by another process (busy for %d s): wait for it to "
		 "finish, or stop it ('fuser %s' names it), and run again",
		 path, BUSY_TIMEOUT_MS / 1000, shell_word(word, sizeof(word), path));
}

void itdb_log_failure(sqlite3 *db, const char *context, const char *msg)
{
	const char *file = sqlite3_db_filename(db, "main");
	struct conn *c = conn_of(db);

	if (c->quiet) {
		c->disk_full_said |= (sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL;
		c->quiet_busy |= failed_busy(db);
		if (!c->quiet_msg[0])
			snprintf(c->quiet_msg, sizeof(c->quiet_msg), "%s: %s", context, msg);
		log_debug("database: %s: %s", context, msg);
		return;
	}
	if (c->disk_full_said) {
		log_debug("database: %s: %s (after the disk filled up)", context, msg);
		return;
	}
	if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL) {
		c->disk_full_said = true;
		log_error("database %s: its disk is full (%s): stopped there; free space and run "
			  "again",
			  file && *file ? file : "in memory", context);
		return;
	}
	log_error("database: %s: %s", context, msg);
}

int itdb_exec(sqlite3 *db, const char *sql, const char *context)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	itdb_log_failure(db, context, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

sqlite3_stmt *itdb_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		itdb_log_failure(db, "prepare a statement", sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}

int itdb_finalize_read(sqlite3_stmt *st, int rc, const char *context)
{
	sqlite3 *db = sqlite3_db_handle(st);

	if (rc != SQLITE_DONE)
		itdb_log_failure(db, context, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int itdb_bind_text(sqlite3_stmt *st, int idx, const char *s)
{
	if (!s || !*s)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT);
}

int itdb_step_done(sqlite3_stmt *st, const char *context)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	itdb_log_failure(sqlite3_db_handle(st), context, sqlite3_errmsg(sqlite3_db_handle(st)));
	return -1;
}

/* The integer a PRAGMA query gives, or fallback when it gives none */
static int pragma_int(sqlite3 *db, const char *sql, int fallback)
{
	sqlite3_stmt *st = NULL;
	int value = fallback;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		value = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return value;
}

/* meta.schema_version as an iommutrace wrote it: a decimal number from 1, without sign, space
 * or leading zero (sqlite3_column_int64 would read 'abc' as 0 and '8x' as 8). */
static bool parse_schema_version(sqlite3_stmt *st, long *version)
{
	int type = sqlite3_column_type(st, 0); /* before column_text converts it */
	const char *text = (const char *)sqlite3_column_text(st, 0);
	char *end;

	if ((type != SQLITE_TEXT && type != SQLITE_INTEGER) || !text || *text < '1' || *text > '9')
		return false;
	errno = 0;
	*version = strtol(text, &end, 10);
	return !*end && !errno;
}

/* Says that the file's schema version is one no iommutrace writes, quoting (a part of) it. */
static void say_unknown_version(sqlite3_stmt *st, const char *path, char *err, size_t errlen)
{
	char shown[33];

	snprintf(shown, sizeof(shown), "%s",
		 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
	snprintf(err, errlen,
		 "%s has schema version '%s', which no iommutrace writes (1 to %d): "
		 "the file is damaged or not ours; nothing was changed",
		 path, text_for_terminal(shown), IT_SCHEMA_VERSION);
}

/* Reads meta.schema_version into *version: one this iommutrace reads (1 to IT_SCHEMA_VERSION).
 * Returns 0, or -1 with one line in err: busy (another process holds a lock), not an iommutrace
 * database, a version no iommutrace writes, or a newer one. */
static int read_schema_version(sqlite3 *db, const char *path, long *version, char *err,
			       size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	rc = sqlite3_prepare_v2(db,
				"SELECT value, (SELECT application_id FROM"
				" pragma_application_id) FROM meta WHERE key = 'schema_version'",
				-1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (failed_busy(db))
		say_busy(path, err, errlen);
	else if (rc != SQLITE_ROW || sqlite3_column_int(st, 1) != IT_APPLICATION_ID)
		snprintf(err, errlen, "%s is not an iommutrace database", path);
	else if (!parse_schema_version(st, version))
		say_unknown_version(st, path, err, errlen);
	else if (*version > IT_SCHEMA_VERSION)
		snprintf(err, errlen,
			 "%s has schema version %ld, newer than this iommutrace reads "
			 "(%d): use a newer iommutrace",
			 path, *version, IT_SCHEMA_VERSION);
	else
		ret = 0;
	sqlite3_finalize(st);
	return ret;
}

/* Whether the schema's tables are there already: in a file this process created, another one
 * that was given the same name at the same moment (an empty file opened by both) made them. */
static bool has_tables(sqlite3 *db)
{
	return pragma_int(db, "SELECT COUNT(*) FROM sqlite_master", 0) > 0;
}

/* Runs each part's migrate step (before or after) that applies to a file of version from. */
static int migrate_parts(sqlite3 *db, const struct itdb_schema *schema, long from, bool after)
{
	for (size_t i = 0; i < schema->nparts; i++) {
		const struct itdb_schema_part *p = schema->parts[i];
		int (*step)(sqlite3 *, long) = after ? p->after : p->before;

		if (from >= p->since && step && step(db, from))
			return -1;
	}
	return 0;
}

/* Runs the SQL of part. */
static int create_part(sqlite3 *db, const struct itdb_schema_part *part)
{
	char context[64];

	snprintf(context, sizeof(context), "create the %s schema", part->name);
	for (const char *const *sql = part->sql; *sql; sql++)
		if (itdb_exec(db, *sql, context))
			return -1;
	return 0;
}

/* Creates what schema has and the file lacks, in one transaction: a new file (from 0) whole, an
 * older one's parts migrated (each part's steps before and after every part's SQL), and the
 * version set. new_file: an empty file, which no one else may fill meanwhile. */
static int create_schema(sqlite3 *db, const struct itdb_schema *schema, long from, bool new_file)
{
	char sql[256];
	int rc;

	snprintf(sql, sizeof(sql),
		 "PRAGMA application_id = %d;"
		 "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '%d');",
		 IT_APPLICATION_ID, IT_SCHEMA_VERSION);
	/* IMMEDIATE: of two processes creating one new file, the second waits, then finds it made */
	if (itdb_exec(db, new_file ? "BEGIN IMMEDIATE" : "BEGIN", "create the schema"))
		return -1;
	rc = new_file && has_tables(db) && (conn_of(db)->taken_meanwhile = true);
	rc = rc || migrate_parts(db, schema, from, false) || create_part(db, &it_core_schema);
	for (size_t i = 0; !rc && i < schema->nparts; i++)
		rc = create_part(db, schema->parts[i]);
	rc = rc || migrate_parts(db, schema, from, true) ||
	     itdb_exec(db, sql, "create the schema") ||
	     itdb_exec(db, "COMMIT", "create the schema");
	if (rc)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* the error is logged */
	return rc ? -1 : 0;
}

/* A file that exists with size 0 is treated as new (sqlite3 creates such files, and so may a
 * user with `touch`). */
static int file_has_content(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

int itdb_remove(const char *path, char *err, size_t errlen)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char name[4096];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if ((size_t)snprintf(name, sizeof(name), "%s%s", path, suffixes[i]) >=
		    sizeof(name)) {
			snprintf(err, errlen, "%s: path too long", path);
			return -1;
		}
		if (unlink(name) && errno != ENOENT) {
			snprintf(err, errlen, "cannot replace %s: %s", name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int itdb_check_create(const char *path, int force, const char *force_option, char *err,
		      size_t errlen)
{
	return out_path_check_db(path, force, force_option, err, errlen);
}

int itdb_check_append(const char *path, char *err, size_t errlen)
{
	sqlite3 *db;

	if (!file_has_content(path))
		return itdb_check_create(path, 0, NULL, err, errlen);
	if (out_path_check_db(path, true, NULL, err, errlen))
		return -1;
	if (access(path, W_OK)) {
		snprintf(err, errlen, "cannot add a session to %s: %s", path, strerror(errno));
		return -1;
	}
	db = itdb_open(path, ITDB_READ, NULL, err, errlen); /* ours, and not newer */
	if (!db)
		return -1;
	conn_close(db);
	return 0;
}

/* Sets db up for writing: WAL, checkpoints, and the schema created (a new file) or migrated (an
 * existing one of an older version). Returns 0, or -1 with one line for the user in err. */
static int set_up_for_writing(sqlite3 *db, const char *path, const struct itdb_schema *schema,
			      int exists, bool new_file, long version, char *err, size_t errlen)
{
	const char *failed_to;
	struct conn *c;
	int rc;

	/* WAL: readers see every committed batch while we write, and a killed writer loses only
	 * its open transaction. NORMAL: fsyncs at checkpoints only; a power loss may drop the last
	 * commits, never corrupt the file. Foreign keys unenforced: every session_id comes from
	 * itdb_session_begin, and the check costs each row. The page cache at SQLite's default,
	 * said because the recorder's memory bound counts it. 16 KiB pages for a new file: fewer
	 * pages, -wal frames and writes per row. Checkpoints every DB_CHECKPOINT_BYTES, each
	 * dropping what it wrote from the page cache (db_checkpoint.h). docs/performance.md has
	 * the measurements behind each choice. */
	c = conn_of(db);
	c->quiet = true;
	failed_to = "set the page size and WAL journal mode";
	rc = (!exists && itdb_exec(db, "PRAGMA page_size = 16384", "set page size")) ||
	     itdb_exec(db,
		       "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		       "PRAGMA foreign_keys = OFF; PRAGMA cache_size = -2000;",
		       "set journal mode");
	if (!rc) {
		if (!db_checkpoint_install(db, DB_CHECKPOINT_BYTES,
					   pragma_int(db, "PRAGMA page_size", 4096)))
			log_debug("database %s: its pages stay in the page cache after checkpoints "
				  "(no descriptor of it found in /proc/self/fd)",
				  path);
		failed_to = exists ? "migrate the schema" : "create the schema";
		if (!exists || version < IT_SCHEMA_VERSION)
			rc = create_schema(db, schema ? schema : &(struct itdb_schema){ 0 },
					   exists ? version : 0, new_file && !exists);
	}
	c->quiet = false;
	if (!rc)
		return 0;
	/* a file found empty that another process holds or filled: that process's new database */
	if (c->taken_meanwhile || (c->quiet_busy && new_file && !exists))
		snprintf(err, errlen,
			 "%s was created by another process meanwhile: nothing written to"
			 " it; choose another name",
			 path);
	else if (c->quiet_busy)
		say_busy(path, err, errlen);
	else
		snprintf(err, errlen, "%s: cannot %s: %s", path, failed_to,
			 c->disk_full_said ? "its disk is full; free space and run again" :
			 c->quiet_msg[0]   ? c->quiet_msg :
					     sqlite3_errmsg(db));
	return -1;
}

/* A database is data from elsewhere: its views and triggers may not call functions with side
 * effects (trusted_schema off), nor can its schema be edited through writable_schema. No SQL
 * text read from a database is ever run (analyzer/piece_writer.c). */
static void harden(sqlite3 *db)
{
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
}

sqlite3 *itdb_open(const char *path, enum itdb_open_mode mode, const struct itdb_schema *schema,
		   char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int exists = file_has_content(path);
	int flags = mode == ITDB_READ ? SQLITE_OPEN_READONLY :
					SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	long version = 0;
	bool output = mode == ITDB_CREATE || mode == ITDB_CREATE_FORCE || mode == ITDB_APPEND;

	/* the command checked the name (itdb_check_create, itdb_check_append); tests and the
	 * analyzer's copy use ":memory:" */
	output &= strcmp(path, ":memory:") != 0;
	if (mode == ITDB_CREATE && exists) {
		snprintf(err, errlen, "%s exists; use --force to replace it, or choose another -o",
			 path);
		return NULL;
	}
	if ((mode == ITDB_READ || mode == ITDB_MIGRATE) && !exists) {
		snprintf(err, errlen, "%s: %s", path,
			 access(path, F_OK) ? strerror(errno) : "empty file, not a database");
		return NULL;
	}
	if (mode == ITDB_CREATE_FORCE && exists) {
		if (itdb_remove(path, err, errlen))
			return NULL;
		exists = 0;
	}
	/* a new file is claimed before SQLite opens it, which then follows no link to it */
	if (output && !exists && out_path_claim(path, err, errlen))
		return NULL;
	flags |= output ? SQLITE_OPEN_NOFOLLOW : 0;
	if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 db ? sqlite3_errmsg(db) : "out of memory");
		goto fail;
	}
	if (!conn_add(db)) {
		snprintf(err, errlen, "cannot open %s: out of memory", path);
		goto fail;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	harden(db);
	if (exists && read_schema_version(db, path, &version, err, errlen))
		goto fail;
	if (mode == ITDB_READ)
		return db; /* an older version reads as it is: what it lacks is absent */
	if (set_up_for_writing(db, path, schema, exists,
			       mode == ITDB_CREATE || mode == ITDB_CREATE_FORCE, version, err,
			       errlen))
		goto fail;
	return db;
fail:
	conn_close(db);
	return NULL;
}

/* Copies src whole into copy (an empty in-memory database) with the backup API, at src's page
 * size. Returns 0, or -1 with one line in err. */
static int copy_into(sqlite3 *copy, sqlite3 *src, const char *path, char *err, size_t errlen)
{
	char sql[64];
	sqlite3_backup *b;
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d",
		 pragma_int(src, "PRAGMA page_size", 4096));
	sqlite3_exec(copy, sql, NULL, NULL, NULL);
	b = sqlite3_backup_init(copy, "main", src, "main");
	rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(copy);
	sqlite3_backup_finish(b);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		say_busy(path, err, errlen);
	else
		snprintf(err, errlen, "cannot copy %s into memory: %s", path,
			 rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(src));
	return -1;
}

sqlite3 *itdb_open_copy(const char *path, const struct itdb_schema *schema, char *err,
			size_t errlen)
{
	sqlite3 *src = itdb_open(path, ITDB_READ, NULL, err, errlen), *copy = NULL;
	long version;

	if (!src)
		return NULL;
	if (sqlite3_open_v2(":memory:", &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    !conn_add(copy)) {
		snprintf(err, errlen, "cannot copy %s into memory: out of memory", path);
		goto fail;
	}
	sqlite3_extended_result_codes(copy, 1);
	harden(copy);
	if (copy_into(copy, src, path, err, errlen) ||
	    read_schema_version(copy, path, &version, err, errlen) ||
	    set_up_for_writing(copy, path, schema, 1, false, version, err, errlen))
		goto fail;
	conn_close(src);
	return copy;
fail:
	conn_close(copy);
	conn_close(src);
	return NULL;
}

int itdb_close(sqlite3 *db)
{
	int ret = 0;

	if (!db)
		return 0;
	/* fails while another connection (a reader) is open: the WAL then stays, and is part of the
	 * database until a later open checkpoints it. Any other failure (a full disk, an I/O
	 * error) leaves what was committed in the -wal file only: the caller must not take the
	 * file for complete (import renames it; it would go without its -wal). */
	if (!sqlite3_db_readonly(db, "main") &&
	    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE", NULL,
			 NULL, NULL) != SQLITE_OK) {
		if (failed_busy(db)) {
			log_warn("database: %s; keep its -wal file with it when copying it (another "
				 "connection has it open)",
				 sqlite3_errmsg(db));
		} else {
			itdb_log_failure(db, "final checkpoint", sqlite3_errmsg(db));
			ret = -1;
		}
	}
	if (sqlite3_close(db) != SQLITE_OK) {
		itdb_log_failure(db, "close", sqlite3_errmsg(db));
		ret = -1;
	}
	conn_forget(db);
	return ret;
}

int itdb_session_begin(sqlite3 *db, const struct itdb_session_info *info, int64_t *session_id)
{
	static const char sql[] =
		"INSERT INTO sessions(kind, capture, source_path, command, tool_version, hostname,"
		" kernel_release, kernel_version, boot_cmdline, start_mono_ns, start_wall_ns,"
		" trace_clock, derive_pgsize_bitmap) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = NULL;
	struct utsname uts;
	int ret = -1, local = !info->imported, have_uts = local && uname(&uts) == 0;

	st = itdb_prepare(db, sql);
	if (!st)
		goto cleanup;
	itdb_bind_text(st, 1, info->kind);
	itdb_bind_text(st, 2, info->capture);
	itdb_bind_text(st, 3, info->source_path);
	itdb_bind_text(st, 4, info->command);
	itdb_bind_text(st, 5, IT_VERSION);
	itdb_bind_text(st, 6, have_uts ? uts.nodename : NULL);
	itdb_bind_text(st, 7, have_uts ? uts.release : NULL);
	itdb_bind_text(st, 8, have_uts ? uts.version : NULL);
	itdb_bind_text(st, 9, info->boot_cmdline);
	if (local) {
		sqlite3_bind_int64(st, 10, (sqlite3_int64)info->start_mono_ns);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)info->start_wall_ns);
	}
	itdb_bind_text(st, 12, info->trace_clock);
	if (info->derive_pgsize_bitmap)
		sqlite3_bind_int64(st, 13, (sqlite3_int64)info->derive_pgsize_bitmap);
	if (itdb_step_done(st, "insert session"))
		goto cleanup;
	*session_id = sqlite3_last_insert_rowid(db);
	ret = 0;
cleanup:
	sqlite3_finalize(st);
	return ret;
}

int itdb_session_end(sqlite3 *db, int64_t session_id, const struct itdb_session_end *end)
{
	static const char sql[] =
		"UPDATE sessions SET end_mono_ns = ?, end_reason = ?, command_exit_status = ?,"
		" events_total = ?, events_lost = ?, complete = 1,"
		" start_mono_ns = IFNULL(?, start_mono_ns), trace_clock = IFNULL(?, trace_clock)"
		" WHERE session_id = ?";
	sqlite3_stmt *st = itdb_prepare(db, sql);
	int ret;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)end->end_mono_ns);
	itdb_bind_text(st, 2, end->end_reason);
	if (end->has_exit_status)
		sqlite3_bind_int(st, 3, end->command_exit_status);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)end->events_total);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)end->events_lost);
	if (end->has_start_mono_ns)
		sqlite3_bind_int64(st, 6, (sqlite3_int64)end->start_mono_ns);
	itdb_bind_text(st, 7, end->trace_clock);
	sqlite3_bind_int64(st, 8, session_id);
	ret = itdb_step_done(st, "mark session complete");
	sqlite3_finalize(st);
	return ret;
}
