/* The engines by name (see engine.h). */
#include <string.h>
#include "engine.h"

const struct io_engine_ops *io_engine_find(const char *name)
{
	static const struct io_engine_ops *const engines[] = { &io_engine_vfio, &io_engine_uring,
								     &io_engine_uio };

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}
