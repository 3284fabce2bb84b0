# gpupool — the two commands a user needs: `make demo` and `make check`.
# Meson does the building (meson.build); this file only wraps it, installs
# missing Debian packages first (scripts/install-deps.sh) and names the
# everyday targets.

BUILD ?= build
ASAN_BUILD ?= build-asan
SHARED ?= ../shared
TRACES ?= $(SHARED)/traces/openb
MESON_OPTS ?=

.PHONY: all deps check check-asan bench demo format clean

all: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debug $(MESON_OPTS)

# Every test, then the unit and simdev tests again under AddressSanitizer +
# UBSan.
check: all check-asan
	meson test -C $(BUILD) --print-errorlogs

check-asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C $(ASAN_BUILD) --suite unit --suite simdev --print-errorlogs

# Benchmarks write JSON under $(BUILD)/bench/ (one object per line).
bench: all
	@mkdir -p $(BUILD)/bench
	$(BUILD)/gpupool bench sched --nodes 10000 --pods $(TRACES)/openb_pod_list_default.csv \
		--json | tee $(BUILD)/bench/sched.json
	bench/bench-openb-variants.sh $(BUILD)/gpupool $(TRACES) $(BUILD)/bench/variants \
		| tee $(BUILD)/bench/openb-variants.json

# The main job. For now: every placement policy on the production trace,
# next to the published results. ARGS are passed to the demo script.
demo: all
	@scripts/demo.sh $(ARGS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
