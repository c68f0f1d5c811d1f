// End-to-end estimates on the cards fine-tuners have, one per efficiency generation they added or stretch:
// the T4 (Turing, FP16 only), the L4 (24 GB Ada) and one MI250X GCD (CDNA2).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_cli.h"

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

nlohmann::json Estimate(const std::string& args) {
  const CliRun run = RunCli("estimate " + args + " --json");
  EXPECT_EQ(run.status, 0) << run.out;
  return nlohmann::json::parse(run.out);
}

/// The dense peak the time model divided by: model TFLOP/s per GPU over MFU.
double PeakTflops(const nlohmann::json& e) {
  return e["time"]["model_tflops_per_gpu"].get<double>() / e["time"]["mfu"].get<double>();
}

// The T4 has no BF16, like the V100: a bf16 job is refused naming the field, the value and what is allowed.
TEST(FineTuningGpus, Bf16OnAT4IsRefusedAsOnAV100) {
  const CliRun run = RunCli("estimate --model llama-3-8b --method qlora --gpu t4 --precision bf16");
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("--precision: 'bf16'"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NVIDIA T4 has no BF16; use fp16 or fp32"), std::string::npos) << run.out;
}

// Llama-3-8B QLoRA in fp16 on one 16 GB T4 (the Colab recipe): ~3.6 GB of 4-bit base plus ~4 GB of fp32
// embeddings and LM head fits with recomputation at 1k tokens; at 4k tokens without recomputation the stored
// activations and logits (over 25 GiB) do not; full fine-tuning needs ~16 bytes per parameter and cannot.
TEST(FineTuningGpus, Llama3QloraOnAT4FitsAndFullFineTuningDoesNot) {
  const std::string qlora_job = "--model llama-3-8b --method qlora --gpu t4 --gpus 1 --precision fp16";
  const nlohmann::json qlora = Estimate(qlora_job + " --seq-len 1024 --recompute full");
  EXPECT_DOUBLE_EQ(qlora["memory"]["capacity_bytes"].get<double>(), 16 * kGiB);
  EXPECT_TRUE(qlora["memory"]["fits"].get<bool>()) << qlora["memory"]["per_gpu_gib"];
  EXPECT_NEAR(PeakTflops(qlora), 65, 1e-6);  // timed against the FP16 tensor peak
  const nlohmann::json long_rows = Estimate(qlora_job + " --seq-len 4096 --recompute none");
  EXPECT_FALSE(long_rows["memory"]["fits"].get<bool>()) << long_rows["memory"]["per_gpu_gib"];
  const nlohmann::json full = Estimate("--model llama-3-8b --method full --gpu t4 --gpus 1 --precision fp16");
  EXPECT_FALSE(full["memory"]["fits"].get<bool>());
  EXPECT_GT(full["memory"]["per_gpu_bytes"].get<double>(), 8.03e9 * 12);  // fp16 weights, grads, fp32 Adam states
}

// The power-capped Turing ceiling (0.37 of peak) against Ada's (0.7): the same fp16 QLoRA step runs slower on a
// 65-TFLOP/s T4 than on a 121-TFLOP/s L4 by more than their peaks alone say.
TEST(FineTuningGpus, TuringRunsBelowAdaForTheSameJob) {
  const std::string job = "--model llama-3-8b --method qlora --gpus 1 --precision fp16 --seq-len 2048 --recompute full";
  const nlohmann::json t4 = Estimate(job + " --gpu t4");
  const nlohmann::json l4 = Estimate(job + " --gpu l4");
  EXPECT_GT(t4["time"]["step_s"].get<double>(), l4["time"]["step_s"].get<double>() * 121 / 65);
  EXPECT_LT(t4["time"]["mfu"].get<double>(), l4["time"]["mfu"].get<double>());
}

// 24 GB L4: Llama-3-8B LoRA keeps 15 GiB of bf16 weights and fits with recomputation at 1k tokens; the same
// model with full fine-tuning does not.
TEST(FineTuningGpus, Llama3LoraOnAnL4) {
  const nlohmann::json lora =
      Estimate("--model llama-3-8b --method lora --gpu l4 --gpus 1 --seq-len 1024 --recompute full");
  EXPECT_DOUBLE_EQ(lora["memory"]["capacity_bytes"].get<double>(), 24 * kGiB);
  EXPECT_TRUE(lora["memory"]["fits"].get<bool>()) << lora["memory"]["per_gpu_gib"];
  EXPECT_GT(lora["memory"]["per_gpu_bytes"].get<double>(), 8.03e9 * 2);  // the frozen bf16 base alone
  EXPECT_NEAR(PeakTflops(lora), 121, 1e-6);
  EXPECT_FALSE(Estimate("--model llama-3-8b --method full --gpu l4 --gpus 1")["memory"]["fits"].get<bool>());
}

// An MI250X is two GCDs: eight catalog GPUs are four packages, each GCD with 64 GB and 191.5 BF16 TFLOP/s.
// Llama-3-8B full fine-tuning with ZeRO-3 over eight GCDs fits (16 bytes per parameter / 8 = 16 GB of states).
TEST(FineTuningGpus, Llama3FullFineTuningOnEightMi250xGcds) {
  const nlohmann::json e =
      Estimate("--model llama-3-8b --method full --gpu mi250x --gpus 8 --zero 3 --seq-len 4096 --global-batch 64");
  EXPECT_DOUBLE_EQ(e["memory"]["capacity_bytes"].get<double>(), 64 * kGiB);
  EXPECT_TRUE(e["memory"]["fits"].get<bool>()) << e["memory"]["per_gpu_gib"];
  EXPECT_NEAR(PeakTflops(e), 191.5, 1e-6);
  EXPECT_LT(e["time"]["mfu"].get<double>(), 0.58);  // never above the CDNA2 matmul ceiling
}

}  // namespace
