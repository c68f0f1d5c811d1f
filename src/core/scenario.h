#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/hardware.h"
#include "core/model.h"

namespace trainplan {

/// What is trained and on what data.
struct Training {
  Method method = Method::kFull;
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Framework framework = Framework::kDeepSpeed;
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;     // sequences per GPU per micro-step
  int64_t global_batch = 0;    // sequences per optimizer step; 0: micro_batch * dp
  double tokens = 0;           // training tokens in total (all epochs); 0: one step's worth
  // LoRA / QLoRA
  int64_t lora_rank = 16;
  double lora_alpha = 32;
  std::vector<std::string> lora_targets;  // canonical linear names; empty: all linear layers
  // Freeze: the top `trainable_layers` layers (and the LM head) train, the rest are frozen.
  int64_t trainable_layers = 2;
};

/// How the job is split over GPUs. dp is derived as gpus / (tp * pp * cp) when 0.
struct Strategy {
  int tp = 1;
  int pp = 1;
  int dp = 0;
  int cp = 1;
  int ep = 1;
  int zero = 0;                 // 0..3; 3 = FSDP full shard
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  Offload offload = Offload::kNone;
  bool flash_attention = true;
  int interleave = 1;           // virtual pipeline stages per GPU
};

/// One job on one set of hardware with one strategy: the estimator's whole input.
struct Scenario {
  ModelSpec model;
  Training training;
  Hardware hardware;
  Strategy strategy;
};

/// Checks a filled scenario: positive sizes, heads divisible by tp, gpus == tp*pp*dp*cp, layers >= pp,
/// ep dividing experts, micro/global batch consistency. Throws InputError.
void ValidateScenario(Scenario& scenario);

/// Whether LoRA adapts this linear: every linear of attention, MLP and experts when the target list is
/// empty or holds PEFT's "all-linear", else the named ones; never the MoE router (LLaMA-Factory, Unsloth
/// and torchtune target lists omit it).
bool IsLoraTarget(const Training& training, const Linear& linear);

/// Global batch in sequences per optimizer step and the gradient-accumulation steps it implies.
int64_t GlobalBatch(const Scenario& scenario);
int64_t GradAccumSteps(const Scenario& scenario);

// Names as written in scenario files and flags (io/scenario_reader.h reads them).
const char* ToString(Method m);
const char* ToString(Precision p);
const char* ToString(Optimizer o);
const char* ToString(Recompute r);
const char* ToString(Offload o);
const char* ToString(Framework f);

}  // namespace trainplan
