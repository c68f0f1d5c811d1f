# Thin wrappers over CMake. `make run` and `make test` install what they need first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: deps configure build run test bench accuracy load fuzz clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The default job: Llama-3-8B full fine-tuning on 1e9 tokens. First the estimate on one 8x H100 node, then
# the recommendation: which hardware to buy or rent, the bill of materials, cost and reliability.
run: build
	@$(BUILD_DIR)/trainplan estimate --model llama-3-8b --method full --gpu h100-sxm --gpus 8 --zero 3 \
	  --seq-len 4096 --micro-batch 1 --global-batch 64 --tokens 1e9
	@echo
	@$(BUILD_DIR)/trainplan recommend --model llama-3-8b --method full --seq-len 4096 --global-batch 64 --tokens 1e9

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD_DIR)/trainplan_bench --benchmark_min_time=0.2

accuracy: build
	@$(BUILD_DIR)/trainplan accuracy --reference tests/reference/measurements.jsonl -o docs/accuracy.md

# Load on `trainplan serve`: 8 connections posting /api/plan for 10 s; prints requests/s and p50/p99 latency.
load: build
	@scripts/load-test.sh $(BUILD_DIR) 8 10

# libFuzzer over the API's request handler for FUZZ_SECONDS (a clang build in build-fuzz/).
FUZZ_SECONDS ?= 120
fuzz: deps
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	@rm -rf $(BUILD_DIR)
