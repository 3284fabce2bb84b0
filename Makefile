# gpupool — the two commands a user needs: `make demo` and `make check`.
# Meson does the building (meson.build); this file only wraps it, installs
# missing Debian packages first (scripts/install-deps.sh) and names the
# everyday targets.

BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# The openb production trace (data/openb/README.md: its source, terms
# and citation) is part of the repository.
TRACES ?= data/openb
MESON_OPTS ?=

.PHONY: all deps check check-passes check-main check-asan check-tsan bench demo demo-trace \
	format clean abi-map install uninstall

# $(call each,PREFIX,NAMES): a shell command that makes PREFIX-NAME for
# every NAME whatever the others gave, then prints a line each
# ("check-main: passed", "bench-shim: FAILED") and fails when any failed;
# a recipe line calling it starts with + so that make -n shows the passes.
each = status=0; summary=; \
	for x in $(2); do \
		if $(MAKE) --no-print-directory $(addprefix -f ,$(MAKEFILE_LIST)) $(1)-$$x; \
		then result=passed; \
		else result=FAILED; status=1; fi; \
		summary="$$summary $(1)-$$x:$$result"; \
	done; \
	echo; for line in $$summary; do echo "$$line" | sed 's/:/: /'; done; \
	exit $$status

# Which of scripts/install-deps.sh's sets of Debian packages a target makes
# sure of first (`deps`): build for `make` and `make install`, demo (build's,
# and what the demo runs) for the demos, check (everything the tests run:
# Slurm, MariaDB, Prometheus, Chromium, Go, ...) for the tests and the
# benchmarks. A target's set holds for what it builds first (`all`, then
# `deps`): make's target-specific variables. `make deps DEPS=check`
# installs a set alone (tests/cli/test-make-check.sh checks the wiring).
DEPS = build
demo demo-trace: DEPS = demo
check check-passes check-main check-asan check-tsan bench: DEPS = check

all: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

deps:
	@scripts/install-deps.sh $(DEPS)

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debug $(MESON_OPTS)

$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) -Db_sanitize=thread -Db_lundef=false \
		-Dbuildtype=debug $(MESON_OPTS)

# make check: every test (check-main), then the unit and simdev tests again
# under AddressSanitizer + UBSan (check-asan), and the tests of what threads
# share under ThreadSanitizer (check-tsan). Every pass in CHECK_PASSES runs
# whatever the others gave, each gets a line at the end ("check-main:
# passed"), and make check fails when any failed. A pass is a target
# check-NAME; add its NAME here (tests/cli/test-make-check.sh checks this).
CHECK_PASSES = main asan tsan

check: all
	@$(MAKE) --no-print-directory check-passes

check-passes:
	@+$(call each,check,$(CHECK_PASSES))

check-main: all
	meson test -C $(BUILD) --print-errorlogs

check-asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C $(ASAN_BUILD) --suite unit --suite simdev --print-errorlogs

# Suite threads (the arbiter and region unit tests; tests/shim/test-threads.c
# with libgpushare's sources linked in, since the sanitizer's runtime cannot
# start under a preloaded dlsym) under ThreadSanitizer: any report fails.
check-tsan: deps $(TSAN_BUILD)/build.ninja
	ninja -C $(TSAN_BUILD)
	TSAN_OPTIONS=halt_on_error=1:atexit_sleep_ms=0 \
		meson test -C $(TSAN_BUILD) --suite threads --print-errorlogs

# make install [PREFIX=/usr/local] [DESTDIR=DIR]: the programs, the
# library, the manual page, the systemd unit and /etc/gpupool/gpupool.yaml
# (never replaced once there); docs/install.md. PREFIX stays with the
# build folder once given. make uninstall removes what make install put
# there, and keeps the configuration, the database and the logs.
PREFIX ?=
DESTDIR ?=
install: all
	$(if $(PREFIX),meson configure $(BUILD) -Dprefix=$(PREFIX) && ninja -C $(BUILD))
	@rm -f $(BUILD)/meson-logs/install-config.txt
	meson install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir "$(abspath $(DESTDIR))")
	@cat $(BUILD)/meson-logs/install-config.txt 2>/dev/null || true

uninstall:
	DESTDIR="$(if $(DESTDIR),$(abspath $(DESTDIR)))" dist/uninstall.sh $(BUILD)

# Benchmarks write JSON under $(BUILD)/bench/ (one object per line). Every
# benchmark in BENCHES runs whatever the others gave (a bench-NAME target
# writing $(BUILD)/bench/NAME.json), each gets a line at the end
# ("bench-shim: FAILED"), and make bench fails when any failed (its exit
# status not 0: a target missed, or the run broke), its JSON kept.
BENCHES = sched sched-scale search-cost openb-variants shim server verifier k8s slurm \
	operations
.PHONY: $(addprefix bench-,$(BENCHES))
RECORD = >$(BUILD)/bench/$(1).json; s=$$?; cat $(BUILD)/bench/$(1).json; exit $$s

bench: all
	@mkdir -p $(BUILD)/bench
	@+$(call each,bench,$(BENCHES))

bench-sched:
	$(BUILD)/gpupool bench sched --nodes 10000 --pods $(TRACES)/openb_pod_list_default.csv \
		--json $(call RECORD,sched)
bench-sched-scale:
	$(BUILD)/gpupool bench sched-scale --pods $(TRACES)/openb_pod_list_default.csv \
		--json $(call RECORD,sched-scale)
bench-search-cost:
	bench/bench-search-cost.sh $(BUILD)/gpupool $(TRACES) $(BUILD)/bench/search-cost \
		$(call RECORD,search-cost)
bench-openb-variants:
	bench/bench-openb-variants.sh $(BUILD)/gpupool $(TRACES) $(BUILD)/bench/variants \
		$(call RECORD,openb-variants)
bench-shim:
	bench/bench-shim.sh $(BUILD) $(call RECORD,shim)
bench-server:
	bench/bench-server.sh $(BUILD) $(call RECORD,server)
bench-verifier:
	bench/bench-verifier.sh $(BUILD) $(call RECORD,verifier)
bench-k8s:
	bench/bench-k8s.sh $(BUILD) $(TRACES) $(call RECORD,k8s)
bench-slurm:
	bench/bench-slurm.sh $(BUILD) $(call RECORD,slurm)
bench-operations:
	bench/bench-operations.sh $(BUILD) $(call RECORD,operations)

# The main job: the platform on simulated devices for about a minute, then
# a report (scripts/demo.sh; ARGS=--keep leaves the server running).
# demo-trace: every placement policy on the production trace, next to the
# published results.
demo: all
	@scripts/demo.sh $(ARGS)

demo-trace: all
	@scripts/demo-trace.sh $(ARGS)

# Regenerates the CUDA driver ABI map from an installed toolkit (committed,
# so that building needs no toolkit; tests/shim/test-abi-map.sh checks it).
CUDA_HOME ?= /usr/local/cuda
abi-map:
	tools/gen-abi-map.sh $(CUDA_HOME) >src/include/cuda-abi-map.txt

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
