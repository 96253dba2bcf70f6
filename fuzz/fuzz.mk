# Fuzzing (included by the Makefile). `make fuzz` builds the library with clang, libFuzzer's
# instrumentation, ASan and UBSan in build-fuzz/ (FUZZ=1) and runs every fuzz/fuzz_*.c target
# for FUZZ_TIME seconds (default 60) from tests/fuzz/corpus; see fuzz/fuzz.h and fuzz/run. Every
# build also makes $(BUILD)/fuzz/replay_NAME, which `make unit-test` runs over the seed corpus
# and the regression inputs.
FUZZ_TIME ?= 60
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_REPLAYS := $(FUZZ_SRCS:fuzz/fuzz_%.c=$(BUILD)/fuzz/replay_%)

$(BUILD)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay_main.c $(wildcard fuzz/*.h) $(LIBS) | $(BUILD)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DFUZZ_TARGET='"$*"' $(LDFLAGS) $< fuzz/replay_main.c $(LIBS) \
		$(LDLIBS) -o $@

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(LIBS) | $(BUILD)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) $< $(LIBS) $(LDLIBS) -o $@

fuzz: deps
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-run

fuzz-run: $(FUZZ_BINS)
	@fuzz/run $(FUZZ_TIME) $(BUILD)/fuzz $(FUZZ_BINS)
