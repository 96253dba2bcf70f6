/* The CUDA dma-buf export on a real GPU, without the rest of iommutrace or cmocka (a GPU machine
 * may have neither libbpf nor cmocka): exports SIZE bytes of device ORDINAL, by cuMemAlloc and
 * by cuMemCreate, prints what came back and what the kernel says of the fd, and undoes it.
 * Built and run by tests/gpu/run-on-gpu. usage: cuda_export_check ORDINAL SIZE; exit 0 if both
 * exports worked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/parse.h"
#include "probes/cuda_export.h"

/* What the dma-buf core says of the fd: its size, exporter and name (5.x and later). */
static void print_fdinfo(int fd)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "size:", 5) || !strncmp(line, "exp_name:", 9) ||
		    !strncmp(line, "name:", 5))
			printf("    fdinfo %s", line);
	fclose(f);
}

static int check(int ordinal, bool vmm, uint64_t size)
{
	struct cuda_export c = CUDA_EXPORT_INIT;
	off_t end;

	printf("%s export of %llu bytes from CUDA device %d:\n",
	       vmm ? "cuMemCreate (vmm)" : "cuMemAlloc", (unsigned long long)size, ordinal);
	if (cuda_export_create(&c, ordinal, vmm, size)) {
		printf("    FAILED (the line above says why)\n");
		return -1;
	}
	end = lseek(c.fd, 0, SEEK_END);
	printf("    %s at %s: fd %d, dptr %#llx, size %llu, alloc_size %llu, granularity %llu, "
	       "pcie_mapping %s, SEEK_END %lld\n",
	       c.name, c.bdf, c.fd, (unsigned long long)c.dptr, (unsigned long long)c.size,
	       (unsigned long long)c.alloc_size, (unsigned long long)c.granularity,
	       c.pcie_mapping ? "yes" : "no (flags 0)", (long long)end);
	print_fdinfo(c.fd);
	cuda_export_destroy(&c);
	cuda_export_destroy(&c);
	if (end != (off_t)size || c.fd != -1 || c.priv) {
		printf("    FAILED: the dma-buf's size or the cleanup is wrong\n");
		return -1;
	}
	printf("    ok, and undone\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size;
	int bad;

	if (argc != 3 || parse_size(argv[2], &size)) {
		fprintf(stderr, "usage: %s ORDINAL SIZE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* in order with the log lines on stderr */
	log_verbose = 1; /* shows the fallback when the driver refuses the PCIe flag */
	bad = check(atoi(argv[1]), false, size);
	bad |= check(atoi(argv[1]), true, size);
	return bad ? 1 : 0;
}
