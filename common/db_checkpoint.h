/* Checkpoints of a connection that writes the database, and the kernel's page cache behind them.
 *
 * A recorder writes its database at up to a hundred MB/s for as long as the trace runs. Left
 * alone, every page it writes stays in the kernel's page cache until memory runs short: the
 * trace grows the traced machine's page cache by its own size, and each new page is one the
 * kernel takes from free memory (in a VM that gives its free memory back to the host, each a
 * fault in the host: here 2.5 s per GiB written into new pages, against 0.3 s into pages freed
 * a moment before). So after each checkpoint has copied the -wal file's pages into the database
 * file (and synced it), the kernel is asked (posix_fadvise DONTNEED) to drop them: the pages
 * freed are the ones the next checkpoint's writes take. Only the part of the file the checkpoint
 * wrote goes; the rest, which the session's end reads again to make its indexes, stays. The -wal
 * file is left alone: it is rewritten from its start after each checkpoint, into pages it
 * already has. */
#ifndef IOMMUTRACE_DB_CHECKPOINT_H
#define IOMMUTRACE_DB_CHECKPOINT_H

#include <stddef.h>
#include <sqlite3.h>

/* Makes db (open for writing, in WAL mode, with pages of page_size bytes) checkpoint once its
 * -wal file holds `bytes` of pages, as sqlite3_wal_autocheckpoint would, each checkpoint followed
 * by the drop above. The drop goes through SQLite's own descriptor of the file, found in
 * /proc/self/fd (SQLite does not hand it out; a descriptor of our own would have to outlive the
 * connection, since closing any descriptor of a file drops the POSIX locks this process holds on
 * it, SQLite's among them). Where there is none (an in-memory database, no /proc), db only
 * checkpoints. Returns whether the drop is on. */
int db_checkpoint_install(sqlite3 *db, size_t bytes, long page_size);

#endif
