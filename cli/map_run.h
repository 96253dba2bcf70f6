/* What `map` and `map --import-as` (cli/map_import.c) share: the parsed options, and the report a
 * run writes for map -o's recorder (probes/map_report.h). */
#ifndef IOMMUTRACE_MAP_RUN_H
#define IOMMUTRACE_MAP_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "probes/buffers.h"
#include "probes/map_report.h"
#include "probes/mapper.h"

struct map_opts {
	char device[13];
	bool import; /* --import-as: device is the importer, the kernel maps */
	const char *buffer_arg, *size_arg, *offset_arg, *iova_arg, *repeat_arg, *mapper_arg;
	struct buffer_spec buffer;
	enum mapper_kind mapper;
	uint64_t size, offset, iova, repeat;
	bool iova_given, hold, force, replace, append;
	const char *db_path;
};

/* This run's report, written to fd when it runs under map -o's recorder. */
struct run_report {
	int fd; /* -1: nobody asked */
	struct map_report r;
};

/**
 * map_report_init() - The report's parameters from the options.
 * @mapper: what maps (type1, dma_buf, ...)
 * @report_fd: where map -o's recorder reads it; -1: nobody asked
 */
void map_report_init(struct run_report *rep, const struct map_opts *o, const char *mapper,
		     int report_fd);
/**
 * map_report_measure() - Put the buffer's physical runs into the report.
 * @bar_paddr: a BAR window's address (one run of @size bytes there); 0: host memory at @vaddr,
 *             read from pagemap (probes/backing.h)
 *
 * Return: 0, or -1 (logged).
 */
int map_report_measure(struct map_report *r, const void *vaddr, uint64_t size, uint64_t bar_paddr);
/**
 * map_report_update() - Write the report so far, when the recorder asked for it.
 *
 * Return: 0, or -1 (logged).
 */
int map_report_update(struct run_report *rep);

/**
 * map_import_run() - map --import-as: the kernel maps the buffer for the device, through the
 * probe module.
 *
 * Return: the exit status (enum it_exit).
 */
int map_import_run(struct map_opts *o, int report_fd);

#endif
