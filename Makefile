# Thin wrapper over CMakePresets.json. `make test` is what CI runs first; see .ci/run for the whole pipeline.
#   make deps          install missing build dependencies (root on Debian only; a no-op otherwise)
#   make build         configure and build preset `default` (RelWithDebInfo) into build/default
#   make test          ... and run ctest --preset default
#   make demo ARGS=... ... and run build/default/examples/demo
#   make asan-test     ASan+UBSan build (tests only) into build/asan, and its tests
#   make tsan-test     TSan build (tests only) into build/tsan, and its tests
#   make llvm-test     the default build's tests with every kernel the LLVM code generator handles compiled
#   make nollvm-test   a build without LLVM (LAZYFUSE_LLVM=OFF, as on the GPU machine) into build/nollvm, and its tests
#   make format / format-check / clean

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# The CUDA toolkit (NVRTC, static runtime, headers) lives at /usr/local/cuda unless CUDA_PATH says otherwise.
CUDA_PATH ?= /usr/local/cuda
export CUDA_PATH
export PATH := $(CUDA_PATH)/bin:$(PATH)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
ARGS ?=
CTEST_ARGS ?=

# llvm-19-dev and clang-19: the LLVM CPU code generator (LAZYFUSE_LLVM, on when both are found).
DEB_PACKAGES := cmake ninja-build g++ libgtest-dev libgmock-dev libbenchmark-dev clang-format python3-venv libopenblas-dev \
                llvm-19-dev clang-19
FORMAT_DIRS := graph fusion codegen runtime api include tools examples tests bench
# tests/golden holds generated kernels compared byte for byte: not formatted.
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -path tests/golden -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) -print 2>/dev/null | sort)

.PHONY: all deps configure build test demo asan-configure asan-build asan-test tsan-configure tsan-build tsan-test \
        llvm-test nollvm-build nollvm-test \
        format format-check clean

all: build

# Installs only what is missing, so a second run does nothing and needs no network. Silent unless root on Debian.
deps:
	@if [ "$$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v dpkg >/dev/null; then \
	  missing=""; \
	  for p in $(DEB_PACKAGES); do \
	    dpkg -s "$$p" 2>/dev/null | grep '^Status: install ok installed' >/dev/null || missing="$$missing $$p"; \
	  done; \
	  if [ -n "$$missing" ]; then \
	    echo "deps: installing$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q --no-install-recommends $$missing >/dev/null \
	      || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null; }; \
	  fi; \
	fi

configure: deps
	$(CMAKE) --preset default

build: configure
	$(CMAKE) --build --preset default -j $(JOBS)

test: build
	$(CTEST) --preset default -j $(JOBS) $(CTEST_ARGS)

demo: build
	./build/default/examples/demo $(ARGS)

asan-configure: deps
	$(CMAKE) --preset asan

asan-build: asan-configure
	$(CMAKE) --build --preset asan -j $(JOBS)

asan-test: asan-build
	$(CTEST) --preset asan -j $(JOBS) $(CTEST_ARGS)

tsan-configure: deps
	$(CMAKE) --preset tsan

tsan-build: tsan-configure
	$(CMAKE) --build --preset tsan -j $(JOBS)

tsan-test: tsan-build
	$(CTEST) --preset tsan -j $(JOBS) $(CTEST_ARGS)

llvm-test: build
	$(CTEST) --preset llvm -j $(JOBS) -E install $(CTEST_ARGS)

nollvm-build: deps
	$(CMAKE) --preset nollvm
	$(CMAKE) --build --preset nollvm -j $(JOBS)

nollvm-test: nollvm-build
	$(CTEST) --preset nollvm -j $(JOBS) -E install $(CTEST_ARGS)

format:
	@files="$(FORMAT_FILES)"; [ -z "$$files" ] || clang-format -i $$files

format-check:
	@files="$(FORMAT_FILES)"; [ -z "$$files" ] || clang-format --dry-run -Werror $$files

clean:
	rm -rf build
