/* What `iommutrace io` prints: a line per point and device as it ends (and one for all devices
 * together when there are several), then a table of means over the repeats per queue depth, or
 * everything as JSON. */
#ifndef IOMMUTRACE_IO_OUTPUT_H
#define IOMMUTRACE_IO_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "io/io_report.h"

/* The run, as printed: the report's run (engine, workload, bs, devices...). */
struct io_output {
	const struct io_report_run *run;
	const uint32_t *qds;
	uint32_t nqds;
};

/**
 * io_output_point() - Print one device's point (@row->device_index says which).
 */
void io_output_point(FILE *f, const struct io_output *o, const struct io_report_point *row);
/**
 * io_output_total() - Print the devices of one point together.
 * @rows: that point's, one per device
 */
void io_output_total(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		     size_t n);
/**
 * io_output_table() - Print the means per queue depth and device, and for all devices together
 * when there are several.
 */
void io_output_table(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		     size_t n);
/**
 * io_output_json() - Print the run and every point as one JSON object on @f.
 *
 * Return: 0, or -1 when writing failed.
 */
int io_output_json(FILE *f, const struct io_output *o, const struct io_report_point *rows,
		   size_t n);

#endif
