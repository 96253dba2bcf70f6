# iommutrace build. `make` builds build/iommutrace; `make test` runs the unit, host and testbed
# tests; `make demo` records in the testbed; `make deps` installs the Debian packages all of them
# need. V=1 for full commands; SAN=1 for an ASan/UBSan build in build-san/.

# SAN=1: AddressSanitizer + UBSan, in a build folder of its own
# FUZZ=1: clang with libFuzzer instrumentation, ASan and UBSan, in build-fuzz/ (make fuzz)
BUILD ?= $(if $(filter 1,$(FUZZ)),build-fuzz,$(if $(filter 1,$(SAN)),build-san,build))
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKGS := libbpf libelf zlib sqlite3 libtracecmd libtracefs libtraceevent liburing
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	  -DIT_VERSION='"$(VERSION)"' -I$(BUILD) -I. \
	  $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -lz -lsqlite3) -lm -lpthread

ifeq ($(FUZZ),1)
CC := $(CLANG)
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	  -Wno-gnu-variable-sized-type-not-at-end
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: all deps test unit-test host-test vmtest demo bench clean fuzz fuzz-run format

# Debian packages: build and tests; the testbed (tests/vm) adds QEMU and the initramfs tools.
DEPS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libsqlite3-dev sqlite3 \
	libtraceevent-dev libtracefs-dev libtracecmd-dev liburing-dev libcmocka-dev pkg-config \
	trace-cmd qemu-system-x86 busybox-static cpio xz-utils kmod debootstrap gnuplot-nox \
	bpftrace fio valgrind python3 clang-format

all: $(BUILD)/iommutrace

deps:
	@missing=""; for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: missing packages:$$missing; run as root or: sudo apt-get install$$missing" >&2; exit 1; fi; \
		echo "make deps: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

# The layers, one static library each, each using only those below it: common, then tracer,
# analyzer and harness (probes, nvme, io) beside each other, then cli. tests/check-layers fails
# the build when a library names a symbol of one that is not below it, or a source includes its
# headers.
common_SRCS := $(wildcard common/*.c)
tracer_SRCS := $(wildcard tracer/*.c)
analyzer_SRCS := $(wildcard analyzer/*.c)
harness_SRCS := $(wildcard probes/*.c nvme/*.c io/*.c)
cli_SRCS := $(filter-out cli/main.c,$(wildcard cli/*.c))
LAYERS := cli tracer analyzer harness common
$(foreach l,$(LAYERS),$(eval $(l)_OBJS := $($(l)_SRCS:%.c=$(BUILD)/%.o)))
# built through the libraries' pattern rule, they would be deleted as intermediate files
.SECONDARY: $(foreach l,$(LAYERS),$($(l)_OBJS))
# every library, in link order (a library before those it uses)
LIBS := $(LAYERS:%=$(BUILD)/lib%.a)
MAIN_OBJ := $(BUILD)/cli/main.o

include fuzz/fuzz.mk

# the recorder's programs (iommutrace) and the page-table walk of snapshots (snapshot), each with
# its skeleton, NAME_bpf
BPF_NAMES := iommutrace snapshot
SKELS := $(BPF_NAMES:%=$(BUILD)/%.skel.h)
.SECONDARY: $(SKELS) $(BPF_NAMES:%=$(BUILD)/%.bpf.o)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -I/usr/include/$(shell uname -m)-linux-gnu -I.

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o
	$(Q)rm -f $@.tmp.o

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# the skeletons are made before any object; depfiles then rebuild only the objects that include one
$(BUILD)/%.o: %.c | $(SKELS) $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/lib%.a: $$($$*_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BUILD)/layers.ok: tests/check-layers $(LIBS) $(wildcard common/*.h tracer/*.h analyzer/*.h probes/*.h nvme/*.h io/*.h)
	$(call msg,CHECK,layers)
	$(Q)tests/check-layers $(BUILD)
	$(Q)touch $@

$(BUILD)/iommutrace: $(MAIN_OBJ) $(LIBS) $(BUILD)/layers.ok
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(MAIN_OBJ) $(LIBS) $(LDLIBS) -o $@

$(BUILD):
	$(Q)mkdir -p $@

# Tests: one cmocka binary per tests/unit/test_*.c and tests/host/test_*.c, linked with its own
# layer's library and those below it only (tests/layer-libs: the layers whose headers it
# includes), so that a call up from the layer under test does not link; with depfiles (a change
# to a tests/*.h header rebuilds its users). Host tests need root and a BPF-capable kernel; they
# skip loudly otherwise.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
HOST_SRCS := $(wildcard tests/host/test_*.c)
HOST_BINS := $(HOST_SRCS:tests/host/%.c=$(BUILD)/tests/host_%)

$(BUILD)/tests/host_%: tests/host/%.c tests/layer-libs $(LIBS) | $(BUILD)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(LDFLAGS) $< $$(tests/layer-libs $(BUILD) $<) $(LDLIBS) \
		-lcmocka -o $@

$(BUILD)/tests/%: tests/unit/%.c tests/layer-libs $(LIBS) | $(BUILD)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(LDFLAGS) $< $$(tests/layer-libs $(BUILD) $<) $(LDLIBS) \
		-lcmocka -o $@

TEST_ENV := IOMMUTRACE=$(BUILD)/iommutrace \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1

# The fuzz replays run under ASan and UBSan (built in $(BUILD)-san, as SAN=1 does): without them a
# replay would catch crashes only, not the overflows and undefined behaviour the fuzzers look for.
SAN_BUILD := $(if $(filter 1,$(SAN) $(FUZZ)),$(BUILD),$(BUILD)-san)
SAN_REPLAYS := $(FUZZ_SRCS:fuzz/fuzz_%.c=$(SAN_BUILD)/fuzz/replay_%)
.PHONY: san-replays
san-replays: $(FUZZ_REPLAYS)

unit-test: $(UNIT_BINS)
	@$(MAKE) --no-print-directory SAN=1 BUILD=$(SAN_BUILD) san-replays
	@$(TEST_ENV) tests/run-tests unit $(UNIT_BINS) $(SAN_REPLAYS)

host-test: $(BUILD)/iommutrace $(HOST_BINS)
	@$(TEST_ENV) tests/run-tests host $(HOST_BINS) $(wildcard tests/host/test_*.sh)

# The testbed: the tracer against the real VT-d and AMD-Vi drivers of a QEMU guest, on each kernel
# line of VM_KERNELS (default 6.1 6.12 newest; a line or a version such as 7.2, tests/vm/run --kernel).
VM_KERNELS ?=
vmtest: $(BUILD)/iommutrace
	@$(TEST_ENV) BUILD=$(BUILD) tests/vm/smoke-all $(VM_KERNELS)

# make test is the whole proof, and most of it (BPF, device binding, the testbed's module builds)
# needs root: without it, one line and a failure rather than a run of skips.
.PHONY: need-root
need-root:
	@[ "$$(id -u)" = 0 ] || { echo "make test: needs root (BPF programs, device binding, the testbed's module builds): run it as root, e.g. sudo make test" >&2; exit 1; }

test: need-root deps
	@$(MAKE) --no-print-directory all unit-test host-test vmtest

demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/iommutrace
	@tests/demo $(BUILD)

# Benchmarks: one program per bench/bench_*.c, linked with every layer's library and the other
# bench/*.c as helpers; bench/run runs them (and bench/testbed when it is there) and prints one
# table. BENCH_ARGS=--no-testbed skips the testbed, --profile profiles misses.
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
BENCH_HELPER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(BENCH_SRCS),$(wildcard bench/*.c)))
.SECONDARY: $(BENCH_HELPER_OBJS)
# tests/host/test_bench_smoke.sh runs the host parts with small settings
host-test: $(BENCH_BINS)

$(BUILD)/bench/bench_%: bench/bench_%.c $(BENCH_HELPER_OBJS) $(LIBS) | $(BUILD)
	$(call msg,BENCH-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(LDFLAGS) $< $(BENCH_HELPER_OBJS) $(LIBS) $(LDLIBS) -lpthread -o $@

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/iommutrace $(BENCH_BINS)
	@BUILD=$(BUILD) bench/run $(BENCH_ARGS)

# The C style of .clang-format on every C file git tracks; the probe module (probes/kmod) keeps
# the kernel's, and SQL and --help text sit between clang-format off and on.
format:
	@clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^probes/kmod/\|^tests/fixtures/')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
