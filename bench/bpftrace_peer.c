/* The bpftrace peer (see bpftrace_peer.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "bench/bpftrace_peer.h"

/* Equivalent to our records: the tracepoints' three arguments, printed */
static const char program[] =
	"tracepoint:iommu:map { printf(\"%lu %lu %lu\\n\", args->iova, args->paddr, args->size); }\n"
	"tracepoint:iommu:unmap { printf(\"%lu %lu %lu\\n\", args->iova, args->size,"
	" args->unmapped_size); }\n";

#define MAX_INSNS 4096

struct clone_src {
	struct bpf_insn insns[MAX_INSNS];
	size_t count;
};

/* Runs bpftrace with argv (NULL-terminated, after "bpftrace"), its output to log_path; pinned to
 * cpu when >= 0. Returns the pid, or -1. */
static pid_t spawn_bpftrace(const char *const *args, const char *log_path, int cpu,
			    unsigned perf_pages)
{
	const char *argv[16] = { "bpftrace" };
	pid_t pid;

	for (int i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	pid = fork();
	if (pid)
		return pid;
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (perf_pages) {
		char pages[32];

		snprintf(pages, sizeof(pages), "%u", perf_pages);
		setenv("BPFTRACE_PERF_RB_PAGES", pages, 1);
	}
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execvp("bpftrace", (char *const *)argv);
	fprintf(stderr, "cannot run bpftrace: %s\n", strerror(errno));
	_exit(127);
}

/* Reads the instructions of the ELF section whose name starts with prefix. */
static int read_section(const char *path, const char *prefix, struct clone_src *src)
{
	int fd = open(path, O_RDONLY), ret = -1;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strncmp(name, prefix, strlen(prefix)))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || data->d_size > sizeof(src->insns))
			break;
		memcpy(src->insns, data->d_buf, data->d_size);
		src->count = data->d_size / sizeof(struct bpf_insn);
		ret = 0;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* bpftrace's code for one probe, its map reference pointed at the running perf buffer, loaded as
 * raw_tp. Returns the fd, or -1 with the verifier's first words in err. */
static int load_clone(struct clone_src *src, const char *name, int perf_map_fd, char *err,
		      size_t errlen)
{
	static char log[8192];
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 0);
	int fd;

	for (size_t i = 0; i < src->count; i++)
		if (src->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (src->insns[i].src_reg == BPF_PSEUDO_MAP_FD)
				src->insns[i].imm = perf_map_fd;
			i++;
		}
	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, name, "GPL", src->insns, src->count,
			   &opts);
	if (fd < 0)
		snprintf(err, errlen, "loading bpftrace's %s code as raw_tp failed: %s (%.120s)",
			 name, strerror(errno), log);
	return fd;
}

/* The newest tracepoint program named name with an id above min_id; its perf map id and tag. */
static int find_program(const char *name, __u32 min_id, __u32 *map_id, __u8 tag[8])
{
	__u32 id = min_id, found = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info), maps[4] = {};
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.nr_map_ids = 4;
		info.map_ids = (__u64)(unsigned long)maps;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_PROG_TYPE_TRACEPOINT && !strcmp(info.name, name) &&
		    info.nr_map_ids >= 1) {
			found = id;
			*map_id = maps[0];
			memcpy(tag, info.tag, 8);
		}
		close(fd);
	}
	return found ? 0 : -1;
}

static __u32 highest_prog_id(void)
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id))
		;
	return id;
}

static int tag_of(int fd, __u8 tag[8])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	memcpy(tag, info.tag, 8);
	return 0;
}

/* Waits for the running bpftrace's programs; returns 0 with the perf map open, or -1. */
static int wait_for_programs(struct bpftrace_peer *p, __u32 min_id, __u8 map_tag[8],
			     __u8 unmap_tag[8])
{
	__u32 map_id = 0, unmap_map_id = 0;

	for (int tries = 0; tries < 300; tries++) {
		int status;

		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			p->pid = 0;
			return -1;
		}
		if (!find_program("map", min_id, &map_id, map_tag) &&
		    !find_program("unmap", min_id, &unmap_map_id, unmap_tag)) {
			p->perf_map_fd = bpf_map_get_fd_by_id(map_id);
			return p->perf_map_fd >= 0 && map_id == unmap_map_id ? 0 : -1;
		}
		usleep(100 * 1000);
	}
	return -1;
}

int bpftrace_peer_start(struct bpftrace_peer *p, const char *out_path, int cpu, unsigned perf_pages,
			char *err, size_t errlen)
{
	static struct clone_src map_src, unmap_src;
	char elf_path[600], log_path[600];
	__u8 live_map_tag[8], live_unmap_tag[8], map_tag[8], unmap_tag[8];
	__u32 min_id;
	int status;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->perf_map_fd = p->map_fd = p->unmap_fd = -1;
	snprintf(p->out_path, sizeof(p->out_path), "%s", out_path);
	snprintf(elf_path, sizeof(elf_path), "%s.elf", out_path);
	snprintf(log_path, sizeof(log_path), "%s.log", out_path);
	pid = spawn_bpftrace((const char *[]){ "--emit-elf", elf_path, "-e", program, NULL },
			     log_path, -1, 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || read_section(elf_path, "s_tracepoint:iommu:map_", &map_src) ||
	    read_section(elf_path, "s_tracepoint:iommu:unmap_", &unmap_src)) {
		snprintf(err, errlen,
			 "bpftrace --emit-elf gave no map/unmap code (see %s; "
			 "`make deps` installs bpftrace)",
			 log_path);
		return -1;
	}
	min_id = highest_prog_id();
	unlink(out_path);
	p->pid = spawn_bpftrace((const char *[]){ "-B", "full", "-o", out_path, "-e", program,
						  NULL },
				log_path, cpu, perf_pages);
	if (p->pid < 0 || wait_for_programs(p, min_id, live_map_tag, live_unmap_tag)) {
		snprintf(err, errlen, "bpftrace did not start its map/unmap programs (see %s)",
			 log_path);
		bpftrace_peer_stop(p);
		return -1;
	}
	p->map_fd = load_clone(&map_src, "bt_map", p->perf_map_fd, err, errlen);
	p->unmap_fd = p->map_fd < 0 ?
			      -1 :
			      load_clone(&unmap_src, "bt_unmap", p->perf_map_fd, err, errlen);
	if (p->unmap_fd < 0) {
		bpftrace_peer_stop(p);
		return -1;
	}
	p->tags_match = !tag_of(p->map_fd, map_tag) && !tag_of(p->unmap_fd, unmap_tag) &&
			!memcmp(map_tag, live_map_tag, 8) && !memcmp(unmap_tag, live_unmap_tag, 8);
	return 0;
}

void bpftrace_peer_read_output(struct bpftrace_peer *p)
{
	FILE *f = fopen(p->out_path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return;
	fseek(f, p->out_offset, SEEK_SET);
	while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
		unsigned long long lost;

		p->out_offset += n;
		if (sscanf(line, "Lost %llu events", &lost) == 1)
			p->lost += lost;
		else if (line[0] >= '0' && line[0] <= '9')
			p->lines++;
	}
	free(line);
	fclose(f);
}

void bpftrace_peer_stop(struct bpftrace_peer *p)
{
	int status;

	if (p->map_fd >= 0)
		close(p->map_fd);
	if (p->unmap_fd >= 0)
		close(p->unmap_fd);
	if (p->perf_map_fd >= 0)
		close(p->perf_map_fd);
	p->map_fd = p->unmap_fd = p->perf_map_fd = -1;
	/* SIGINT is bpftrace's Ctrl-C; where it does not end it (seen when started from a
	 * background job), SIGTERM does, and both flush its output */
	for (int tenths = 0; p->pid > 0; tenths++) {
		if (tenths == 0 || tenths == 50 || tenths == 100)
			kill(p->pid, tenths == 0 ? SIGINT : tenths == 50 ? SIGTERM : SIGKILL);
		pid_t r = wait4(p->pid, &status, WNOHANG, &p->usage);

		if (r == p->pid || r < 0)
			p->pid = 0;
		else
			usleep(100 * 1000);
	}
	bpftrace_peer_read_output(p);
}
