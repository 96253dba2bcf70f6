/* The storage layer: open or create an iommutrace database from the schema parts its caller
 * passes, check that a file is ours and of a version we read, statement helpers, and session
 * rows. It knows no table but meta and sessions. WAL mode: readable by sqlite3 while a recorder
 * writes, and every committed transaction survives a killed writer. */
#ifndef IOMMUTRACE_DB_H
#define IOMMUTRACE_DB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sqlite3.h>

/**
 * struct itdb_schema_part - One owner's part of the schema: its tables and views as of the
 * current version, and the steps that bring a file of an older version there.
 * @name:   in messages: "capture", "io runs", ...
 * @since:  the schema version the part appeared in
 * @sql:    NULL-terminated; idempotent (IF NOT EXISTS, DROP first)
 * @before: for a file of version from, since <= from < IT_SCHEMA_VERSION: run before every
 *          part's sql. NULL: nothing to do. Returns 0, or -1 (logged).
 * @after:  as @before, run after every part's sql.
 */
struct itdb_schema_part {
	const char *name;
	int since;
	const char *const *sql;
	int (*before)(sqlite3 *db, long from);
	int (*after)(sqlite3 *db, long from);
};

/* The parts of a database, in the order they are created (a part's views may read the tables of
 * those before it). meta and sessions, the storage layer's own, come first by themselves. */
struct itdb_schema {
	const struct itdb_schema_part *const *parts;
	size_t nparts;
};

/* A struct itdb_schema of the parts given, in that order: ITDB_SCHEMA(&a, &b). */
#define ITDB_SCHEMA(...) \
	{ \
		.parts = (const struct itdb_schema_part *const[]){ __VA_ARGS__ }, \
		.nparts = sizeof((const struct itdb_schema_part *const[]){ __VA_ARGS__ }) / \
			  sizeof(const struct itdb_schema_part *), \
	}

enum itdb_open_mode {
	ITDB_CREATE, /* new file; refuse an existing one */
	ITDB_CREATE_FORCE, /* new file; replace an existing one */
	ITDB_APPEND, /* existing iommutrace database, or a new file */
	ITDB_READ, /* existing iommutrace database, read-only */
	ITDB_MIGRATE, /* existing iommutrace database, migrated when older (analyzer) */
};

/**
 * itdb_open() - Open or create an iommutrace database.
 * @path: the file
 * @mode: every mode but ITDB_READ creates what @schema has and the file lacks (a new file: all of
 *        it; an older version: migrated, in one transaction)
 * @schema: may be NULL with ITDB_READ
 *
 * Return: the connection, or NULL with one line for the user in @err (what failed and what to do).
 */
sqlite3 *itdb_open(const char *path, enum itdb_open_mode mode, const struct itdb_schema *schema,
		   char *err, size_t errlen);
/**
 * itdb_open_copy() - Open an in-memory copy of @path, migrated to @schema when older.
 * @path: an iommutrace database, read as ITDB_READ does
 *
 * For analysing a file this process cannot write (read-only media, no permission). What is
 * written to the copy is lost at itdb_close().
 *
 * Return: the connection, or NULL with one line in @err.
 */
sqlite3 *itdb_open_copy(const char *path, const struct itdb_schema *schema, char *err,
			size_t errlen);
/**
 * itdb_check_create() - Check, before any slow work, that itdb_open(@path, ITDB_CREATE or, with
 * @force, ITDB_CREATE_FORCE) can succeed: @path absent (or @force), and its directory writable.
 * @force_option: the command's option that sets @force, named in @err; "--force" when NULL
 *
 * Return: 0, or -1 with one line for the user in @err.
 */
int itdb_check_create(const char *path, int force, const char *force_option, char *err,
		      size_t errlen);
/**
 * itdb_check_append() - Check, before any slow work, that itdb_open(@path, ITDB_APPEND) can add a
 * session.
 *
 * An existing file must be an iommutrace database of a version this iommutrace writes (an older
 * one is migrated) and writable; a missing one is created in a writable directory.
 *
 * Return: 0, or -1 with one line for the user in @err.
 */
int itdb_check_append(const char *path, char *err, size_t errlen);
/**
 * itdb_remove() - Remove @path and its -wal, -shm and -journal files (missing ones are fine).
 *
 * Return: 0, or -1 with one line for the user in @err.
 */
int itdb_remove(const char *path, char *err, size_t errlen);
/**
 * itdb_close() - Close @db; NULL is accepted.
 *
 * A writable database is first checkpointed and switched back to a rollback journal, which leaves
 * one self-contained file (unless another connection has it open: then a warning, and the -wal
 * file stays with it).
 *
 * Return: 0 or -1 (logged).
 */
int itdb_close(sqlite3 *db);

/**
 * itdb_exec() - Run @sql (no parameters).
 *
 * Return: 0, or -1 on error, logged: what failed, with @context.
 */
int itdb_exec(sqlite3 *db, const char *sql, const char *context);
/**
 * itdb_log_failure() - Say in one line that @context failed with @msg.
 *
 * A full disk is said once per connection, with what to do (what was committed before stays:
 * WAL); whatever fails on that connection after it, its consequence, only at debug level (-v).
 */
void itdb_log_failure(sqlite3 *db, const char *context, const char *msg);
/**
 * itdb_prepare() - Prepare @sql.
 *
 * Return: the statement, or NULL (logged).
 */
sqlite3_stmt *itdb_prepare(sqlite3 *db, const char *sql);

/**
 * itdb_finalize_read() - Finalize a statement that was stepped through its rows, saying when it
 * did not reach their end.
 * @rc: what its last sqlite3_step returned
 * @context: what was read, for the line
 *
 * Return: 0 when @rc is SQLITE_DONE, else -1 (logged through itdb_log_failure).
 */
int itdb_finalize_read(sqlite3_stmt *st, int rc, const char *context);
/**
 * itdb_bind_text() - Bind @s as text, or NULL when @s is NULL or empty.
 *
 * Return: SQLite's result code.
 */
int itdb_bind_text(sqlite3_stmt *st, int idx, const char *s);
/**
 * itdb_step_done() - Step a prepared insert or update, then reset it and clear its bindings.
 *
 * Return: 0 (SQLITE_DONE, or SQLITE_ROW: a statement that also returns a row), or -1 on error
 * (logged).
 */
int itdb_step_done(sqlite3_stmt *st, const char *context);

struct itdb_session_info {
	const char *kind; /* record | import */
	const char *capture; /* bpf | tracefs | trace.dat | ftrace-text */
	const char *source_path; /* imported file, or NULL */
	const char *command; /* traced command line, or NULL */
	const char *trace_clock; /* clock of the timestamps: mono, local, global, ... */
	int imported; /* from another machine's file: no local host facts */
	const char *boot_cmdline; /* the traced machine's, or NULL */
	uint64_t derive_pgsize_bitmap; /* page sizes derived pages use when a domain's are unknown */
	uint64_t start_mono_ns; /* clocks read at the start (0 is a time); unused when */
	uint64_t start_wall_ns; /* imported: an import's start is its first event's */
};

/**
 * itdb_session_begin() - Insert a session (complete=0) and commit it.
 * @info: the session; this machine's hostname, kernel release/version and start times are
 *        stored with it unless info->imported (then NULL until itdb_session_end())
 * @session_id: set to the new session's id
 *
 * Return: 0, or -1 (logged).
 */
int itdb_session_begin(sqlite3 *db, const struct itdb_session_info *info, int64_t *session_id);

struct itdb_session_end {
	/* replaces the session's when has_start_mono_ns (imports: the first event's time, which a
	 * boot-time trace has at 0) */
	int has_start_mono_ns;
	uint64_t start_mono_ns;
	const char *trace_clock; /* replaces the session's when not NULL (imports) */
	uint64_t end_mono_ns;
	const char *end_reason; /* duration | command-exit | signal | end-of-input | error */
	int has_exit_status;
	int command_exit_status;
	uint64_t events_total;
	uint64_t events_lost;
};

/**
 * itdb_session_end() - Mark the session complete.
 *
 * Its owner then runs what follows the bulk (indexes, the analyzer's finishing step), explicitly.
 *
 * Return: 0, or -1 (logged).
 */
int itdb_session_end(sqlite3 *db, int64_t session_id, const struct itdb_session_end *end);

#endif
