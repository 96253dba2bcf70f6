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

/* One owner's part of the schema: its tables and views as of the current version, and the steps
 * that bring a file of an older version there. */
struct itdb_schema_part {
	const char *name;		/* in messages: "capture", "io runs", ... */
	int since;			/* the schema version the part appeared in */
	const char *const *sql;		/* NULL-terminated; idempotent (IF NOT EXISTS, DROP first) */
	/* For a file of version from, since <= from < IT_SCHEMA_VERSION: run before every part's
	 * sql, and after it. NULL: nothing to do. 0, or -1 (logged). */
	int (*before)(sqlite3 *db, long from);
	int (*after)(sqlite3 *db, long from);
};

/* The parts of a database, in the order they are created (a part's views may read the tables of
 * those before it). meta and sessions, the storage layer's own, come first by themselves. */
struct itdb_schema {
	const struct itdb_schema_part *const *parts;
	size_t nparts;
};

enum itdb_open_mode {
	ITDB_CREATE,		/* new file; refuse an existing one */
	ITDB_CREATE_FORCE,	/* new file; replace an existing one */
	ITDB_APPEND,		/* existing iommutrace database, or a new file */
	ITDB_READ,		/* existing iommutrace database, read-only */
	ITDB_MIGRATE,		/* existing iommutrace database, migrated when older (analyzer) */
};

/* Opens path. Every mode but ITDB_READ creates what schema has and the file lacks (a new file:
 * all of it; an older version: migrated, in one transaction); ITDB_READ takes NULL. On failure
 * returns NULL and writes one line for the user into err (what failed and what to do). */
sqlite3 *itdb_open(const char *path, enum itdb_open_mode mode, const struct itdb_schema *schema,
		   char *err, size_t errlen);
/* Opens an in-memory copy of path (an iommutrace database, read as ITDB_READ does), migrated to
 * schema when older: for analysing a file this process cannot write (read-only media, no
 * permission). What is written to the copy is lost at itdb_close. On failure returns NULL with
 * one line in err. */
sqlite3 *itdb_open_copy(const char *path, const struct itdb_schema *schema, char *err,
			size_t errlen);
/* Checks, before any slow work, that itdb_open(path, ITDB_CREATE or, with force,
 * ITDB_CREATE_FORCE) can succeed: path absent (or force), and its directory writable. Returns 0,
 * or -1 with one line for the user in err, which names force_option (the command's option that
 * sets force; "--force" when NULL). */
int itdb_check_create(const char *path, int force, const char *force_option, char *err,
		      size_t errlen);
/* Checks, before any slow work, that itdb_open(path, ITDB_APPEND) can add a session: an existing
 * file must be an iommutrace database of a version this iommutrace writes (an older one is
 * migrated) and writable; a missing one is created in a writable directory. Returns 0, or -1
 * with one line for the user in err. */
int itdb_check_append(const char *path, char *err, size_t errlen);
/* Removes path and its -wal, -shm and -journal files (missing ones are fine). Returns 0, or -1
 * with one line for the user in err. */
int itdb_remove(const char *path, char *err, size_t errlen);
/* Closes; a writable database is first checkpointed and switched back to a rollback journal,
 * which leaves one self-contained file (unless another connection has it open: then a warning,
 * and the -wal file stays with it). Returns 0 or -1 (logged). NULL is accepted. */
int itdb_close(sqlite3 *db);

/* Runs sql (no parameters); on error logs what failed with context and returns -1. */
int itdb_exec(sqlite3 *db, const char *sql, const char *context);
/* Says in one line that CONTEXT failed with msg. A full disk is said once per connection, with
 * what to do (what was committed before stays: WAL); whatever fails on that connection after it,
 * its consequence, only at debug level (-v). */
void itdb_log_failure(sqlite3 *db, const char *context, const char *msg);
/* Prepares sql or logs and returns NULL. */
sqlite3_stmt *itdb_prepare(sqlite3 *db, const char *sql);

/* Binds text, or NULL when s is NULL or empty. */
int itdb_bind_text(sqlite3_stmt *st, int idx, const char *s);
/* Steps a prepared insert/update to SQLITE_DONE and resets it; logs and returns -1 on error. */
int itdb_step_done(sqlite3_stmt *st, const char *context);

struct itdb_session_info {
	const char *kind;		/* record | import */
	const char *capture;		/* bpf | tracefs | trace.dat | ftrace-text */
	const char *source_path;	/* imported file, or NULL */
	const char *command;		/* traced command line, or NULL */
	const char *trace_clock;	/* clock of the timestamps: mono, local, global, ... */
	int imported;			/* from another machine's file: no local host facts */
	const char *boot_cmdline;	/* the traced machine's, or NULL */
	uint64_t derive_pgsize_bitmap;	/* page sizes derived pages use when a domain's are unknown */
	uint64_t start_mono_ns;		/* clocks read at the start (0 is a time); unused when */
	uint64_t start_wall_ns;		/* imported: an import's start is its first event's */
};

/* Inserts a session (complete=0), with this machine's hostname and kernel release/version and its
 * start times unless info->imported (then NULL until itdb_session_end), commits it, and returns
 * its id in *session_id. */
int itdb_session_begin(sqlite3 *db, const struct itdb_session_info *info, int64_t *session_id);

struct itdb_session_end {
	/* replaces the session's when has_start_mono_ns (imports: the first event's time, which a
	 * boot-time trace has at 0) */
	int has_start_mono_ns;
	uint64_t start_mono_ns;
	const char *trace_clock;	/* replaces the session's when not NULL (imports) */
	uint64_t end_mono_ns;
	const char *end_reason;		/* duration | command-exit | signal | end-of-input | error */
	int has_exit_status;
	int command_exit_status;
	uint64_t events_total;
	uint64_t events_lost;
};

/* Marks the session complete; its owner then runs what follows the bulk (indexes, the analyzer's
 * finishing step), explicitly. */
int itdb_session_end(sqlite3 *db, int64_t session_id, const struct itdb_session_end *end);

#endif
