/* Figures of a session through gnuplot (report --plot DIR). Each figure is three files in DIR
 * named session-N-WHAT: the data (.dat), a gnuplot script (.gp) that reads it, and the PNG the
 * script makes, so a figure can be restyled and made again with `cd DIR && gnuplot FILE.gp`:
 *   pages       IOMMU pages mapped per page size, observed and derived (driver_maps)
 *   footprint   live mapped bytes per domain over the session (live_bytes_view)
 *   throughput  an io run's GB/s and IOPS against queue depth, beside the comparable runs of the
 *               database with the IOMMU off and on (runs_view, runs_validity_view)
 *   latency     its mean and p99 latency against queue depth, likewise
 * A figure without data is not made. gnuplot is $IOMMUTRACE_GNUPLOT when set, else the first
 * in PATH; it runs without a shell, in DIR. */
#ifndef IOMMUTRACE_PLOT_H
#define IOMMUTRACE_PLOT_H

#include <stdint.h>
#include <sqlite3.h>

/**
 * plot_session() - Make the session's figures in @dir (created when absent).
 *
 * Return: how many were made, or -1 (logged: without gnuplot, one line that says how to install
 * it, before anything is written).
 */
int plot_session(sqlite3 *db, int64_t session_id, const char *dir);

#endif
