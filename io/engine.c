/* The engines and workloads by name (see engine.h). */
#include <string.h>
#include "io/engine.h"

const struct io_engine_ops *io_engine_find(const char *name)
{
	static const struct io_engine_ops *const engines[] = { &io_engine_vfio, &io_engine_uring,
							       &io_engine_uio };

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

static const char *const workload_names[] = {
	[IO_RANDREAD] = "randread",
	[IO_SEQREAD] = "seqread",
	[IO_RANDWRITE] = "randwrite",
	[IO_SEQWRITE] = "seqwrite",
};

const char *io_workload_name(enum io_workload w)
{
	return (unsigned)w < sizeof(workload_names) / sizeof(workload_names[0]) ?
		       workload_names[w] :
		       "?";
}

int io_workload_parse(const char *s, enum io_workload *w)
{
	for (unsigned i = 0; i < sizeof(workload_names) / sizeof(workload_names[0]); i++)
		if (!strcmp(workload_names[i], s)) {
			*w = (enum io_workload)i;
			return 0;
		}
	return -1;
}
