/* Checkpoints of a connection that writes the database, and the kernel's page cache behind them.
 *
 * A recorder writes its database fast for as long as the trace runs. Left alone, every page it
 * writes stays in the kernel's page cache until memory runs short: the trace grows the traced
 * machine's page cache by its own size, and each new page is one the kernel takes from free
 * memory (in a VM that gives its free memory back to the host, each a fault in the host, far
 * dearer than writing into pages freed a moment before). So after each checkpoint has copied the
 * -wal file's pages into the database file (and synced it), the kernel is asked (posix_fadvise
 * DONTNEED) to drop them: the pages freed are the ones the next checkpoint's writes take. Only
 * the part of the file the checkpoint wrote goes; the rest, which the session's end reads again
 * to make its indexes, stays. The -wal file is left alone: it is rewritten from its start after
 * each checkpoint, into pages it already has. */
#ifndef IOMMUTRACE_DB_CHECKPOINT_H
#define IOMMUTRACE_DB_CHECKPOINT_H

#include <stddef.h>
#include <sqlite3.h>

/* The -wal file's pages that make a checkpoint: 32 MiB (8192 pages of 4 KiB, 2048 of 16 KiB) rather
 * than SQLite's 1000 pages (db.c says why). */
#define DB_CHECKPOINT_BYTES (32 << 20)

/**
 * db_checkpoint_install() - Make @db checkpoint once its -wal file holds @bytes of pages, as
 * sqlite3_wal_autocheckpoint would, each checkpoint followed by the drop above.
 * @db: open for writing, in WAL mode, with pages of @page_size bytes
 *
 * The drop goes through SQLite's own descriptor of the file, found in /proc/self/fd (SQLite does
 * not hand it out; a descriptor of our own would have to outlive the connection, since closing any
 * descriptor of a file drops the POSIX locks this process holds on it, SQLite's among them). Where
 * there is none (an in-memory database, no /proc), @db only checkpoints.
 *
 * Return: whether the drop is on.
 */
int db_checkpoint_install(sqlite3 *db, size_t bytes, long page_size);

/* A checkpointer: db's checkpoints on a thread of their own, for a connection that must not wait.
 *
 * A checkpoint syncs the -wal file and then the database file: each sync waits for the pages
 * written back and for the disk's cache flush. Where the connection that commits checkpoints, it
 * waits that long after the commit, and a recorder's ring buffer fills meanwhile
 * (docs/performance.md, item 2). Here a second connection to the file, on a thread of its own,
 * checkpoints (PASSIVE: the writer goes on meanwhile) each time the -wal file has grown by
 * `bytes` of pages, syncs the database file (SQLite syncs it only after a checkpoint that copied
 * the whole -wal file, which one beside a writer rarely does), and drops the pages it wrote as
 * above.
 *
 * What it cannot do is restart the -wal file: SQLite writes a -wal file again from its start only
 * when the writer begins a transaction with every page of it checkpointed, and a writer that
 * commits while the checkpoints run stays ahead of them. Left so, the file would grow without
 * end. So once it holds 4 x `bytes`, the writer, right after a commit, checkpoints what is left
 * itself when that is at most a quarter of `bytes` (else it asks the thread for one more), and its
 * next transaction restarts the file; at 8 x `bytes` (checkpoints behind the writes: a slow disk)
 * it waits for the thread and checkpoints whatever is left. The -wal file stays below 8 x `bytes`
 * plus a commit, unless a reader holds old pages (as without a checkpointer); at low rates the
 * thread copies it whole between commits and the writer restarts it without a checkpoint of its
 * own.
 */
struct db_checkpointer;
/**
 * db_checkpointer_start() - Start a checkpointer for @db.
 * @db: open for writing, in WAL mode, with a file
 *
 * The checkpointer replaces @db's checkpoints (db_checkpoint_install's) until
 * db_checkpointer_stop(), which must come before @db is closed.
 *
 * Return: the checkpointer, or NULL with one line in @err (@db then keeps checkpointing itself).
 */
struct db_checkpointer *db_checkpointer_start(sqlite3 *db, size_t bytes, char *err, size_t errlen);
/**
 * db_checkpointer_stop() - End the checkpointer, after the checkpoint it is in, if any.
 * @c: the checkpointer; NULL is accepted
 *
 * Gives db its own checkpoints back, every `bytes` as before.
 */
void db_checkpointer_stop(struct db_checkpointer *c);

#endif
