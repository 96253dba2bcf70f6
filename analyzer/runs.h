/* The runs part of the report: an io -o session's points per queue depth (IOPS, GB/s, mean and
 * p99 latency, the IOMMU page sizes of its buffers), what the IOMMU changed against comparable
 * runs with it off or on in the same database, and whether the numbers hold together (spread of
 * repeats, Little's law, engines, throughput ceiling), with notes that explain each verdict.
 * The SQL is in the views of runs_views.c (docs/schema.md). */
#ifndef IOMMUTRACE_RUNS_H
#define IOMMUTRACE_RUNS_H

#include <stdint.h>
#include <sqlite3.h>
#include "analyzer/render.h"

/**
 * runs_render() - Render the runs sections of the session: nothing when it has no io run.
 *
 * Return: 0, or -1 (logged).
 */
int runs_render(struct render *r, sqlite3 *db, int64_t session_id);

#endif
