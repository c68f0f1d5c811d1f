# Thin wrappers over CMake. `make run` and `make test` install what they need first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_CONFIGURE = cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

.PHONY: build run test bench accuracy load fuzz clean

# The binary and the Python module, linked into the source root so `python3 -c "import trainplan"` works here
# (elsewhere: PYTHONPATH=build/python, or pip install ./python): installs what they build with, nothing for tests.
build:
	@scripts/install-deps.sh build
	@$(CMAKE_CONFIGURE) >/dev/null
	@cmake --build $(BUILD_DIR) --target trainplan trainplan_python -j $(JOBS)
	@ln -sf $(BUILD_DIR)/python/trainplan.*.so .

# The default job: Llama-3-8B full fine-tuning on 1e9 tokens. First the estimate on one 8x H100 node, then
# the recommendation: which hardware to buy or rent, the bill of materials, cost and reliability.
run: build
	@$(BUILD_DIR)/trainplan plan --model llama-3-8b --method full --seq-len 4096 --tokens 1e9 \
	  --gpu h100-sxm,a100-80gb-sxm --deadline 1d --top 5
	@echo
	@$(BUILD_DIR)/trainplan estimate --model llama-3-8b --method full --gpu h100-sxm --gpus 8 --zero 3 \
	  --seq-len 4096 --micro-batch 1 --tokens 1e9
	@echo
	@$(BUILD_DIR)/trainplan recommend --model llama-3-8b --method full --seq-len 4096 --tokens 1e9
	@echo
	@# A lab in China with 300,000 CNY, sensitive data and a year of LoRA fine-tuning, answered in Chinese and yuan.
	@$(BUILD_DIR)/trainplan recommend --model qwen2.5-14b --method lora --tokens 5e8 --usage continuous --months 12 \
	  --data-sensitivity high --region cn --currency CNY --budget 300000 --lang zh

# Everything, warnings as errors, then every test (unit, end-to-end, golden answers, layering, browser).
test:
	@scripts/install-deps.sh test
	@$(CMAKE_CONFIGURE) -DTRAINPLAN_BUILD_TESTS=ON -DTRAINPLAN_BUILD_BENCH=ON -DTRAINPLAN_BROWSER_TEST=ON \
	  -DTRAINPLAN_WERROR=ON >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench:
	@scripts/install-deps.sh test
	@$(CMAKE_CONFIGURE) -DTRAINPLAN_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD_DIR) --target trainplan_bench -j $(JOBS)
	@$(BUILD_DIR)/trainplan_bench --benchmark_min_time=0.2

accuracy: build
	@$(BUILD_DIR)/trainplan accuracy --reference tests/reference/measurements.jsonl -o docs/accuracy.md

# Load on `trainplan serve`: twice its search workers in clients, mixing estimates, plans and recommendations
# of small and huge models for LOAD_SECONDS, first with every request new (the server's answer cache never
# answers), then the same requests repeated; prints p50/p99 and statuses per endpoint and the server's peak
# memory, and fails on any answer but 200 and the documented 503 with Retry-After.
LOAD_SECONDS ?= 60
load: build
	@cmake --build $(BUILD_DIR) --target trainplan_load -j $(JOBS)
	@echo "every request new (no answer from the server's cache):"
	@scripts/load-test.sh $(BUILD_DIR) $(LOAD_SECONDS) "" --fresh
	@echo "the same requests repeated (answered from the cache after the first):"
	@scripts/load-test.sh $(BUILD_DIR) $(LOAD_SECONDS)

# libFuzzer over the API's request handler, then over the file readers (scenario, config.json, build), for
# FUZZ_SECONDS in all (a clang build in build-fuzz/).
FUZZ_SECONDS ?= 120
fuzz:
	@scripts/install-deps.sh fuzz
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	@rm -rf $(BUILD_DIR)
