#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/scenario.h"

namespace trainplan {

/// What a launcher needs from a plan, read back from `trainplan plan --json` (its first plan) or
/// `trainplan estimate --json`.
struct LaunchPlan {
  std::string model;  // catalog name or the config's name
  std::string hf_id;
  Method method = Method::kFull;
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Framework framework = Framework::kDeepSpeed;
  int64_t seq_len = 0;
  double tokens = 0;
  int64_t lora_rank = 0;  // 0 unless LoRA or QLoRA
  // Input pipeline and kernel options (absent from documents written before they existed: off, 0 workers).
  bool group_by_length = false;
  bool liger = false;
  bool compile = false;
  int64_t dataloader_workers = 0;
  // DeepSeek-V3's options (absent from older documents: off): MTP depth, bf16 AdamW moments, FP8 SwiGLU inputs.
  int64_t mtp_layers = 0;
  bool bf16_optimizer_states = false;
  // Evaluation during training (absent: none): every eval_interval_steps steps, eval_sequences sequences.
  int64_t eval_interval_steps = 0;
  int64_t eval_sequences = 0;
  bool fp8_swiglu_input = false;
  std::string gpu_id;
  int gpus = 1;
  int gpus_per_node = 1;
  int nodes = 1;
  Strategy strategy;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  int64_t grad_accum_steps = 1;
};

/// Reads a plan or estimate document; throws InputError naming `source` when it is neither, when the
/// parallel sizes do not multiply to the GPU count (tp * pp * cp * dp), when ep does not divide
/// dp * cp, or when the batch sizes disagree (global = micro * accumulation * dp).
LaunchPlan LaunchPlanFromJson(const nlohmann::json& doc, const std::string& source);

/// The job the plan was made for, as a scenario document without hardware or strategy (the model by its
/// Hugging Face id when known, else its name), so that it can be planned again on another machine.
nlohmann::json JobDocument(const LaunchPlan& plan);

enum class LaunchFormat { kTorchrun, kDeepSpeed, kAccelerate, kMegatron, kSlurm, kK8s };
const char* ToString(LaunchFormat format);
LaunchFormat ParseLaunchFormat(const std::string& s, const std::string& field = "format");

/// Names the generated files refer to; the defaults suit a Hugging Face style training script.
struct LaunchOptions {
  std::string script = "train.py";  // Megatron plans use pretrain_gpt.py unless set
  std::string job_name = "trainplan";
  std::string deepspeed_config = "ds_config.json";
  std::string image = "nvcr.io/nvidia/pytorch:24.05-py3";
  int master_port = 29500;
};

/// The DeepSpeed configuration: ZeRO stage and offload, bf16/fp16, micro-batch, accumulation and
/// train_batch_size = micro * accumulation * dp.
nlohmann::json DeepSpeedConfig(const LaunchPlan& plan);

/// Megatron-LM arguments: model shape (for catalog models), TP, PP, virtual stages, CP, EP, sequence
/// parallel, recompute, batch sizes, precision and the distributed optimizer.
std::vector<std::string> MegatronArguments(const LaunchPlan& plan);

/// The training script and its arguments for the plan's engine (HF Trainer flags, --deepspeed,
/// FSDP, torchtune recipe overrides, torchtitan config overrides or Megatron arguments), or LitGPT's whole `litgpt finetune_*` command,
/// which starts its own processes (throws InputError for what litgpt cannot run: multi-GPU QLoRA, offload,
/// fp8, freeze, SGD or Adafactor).
std::vector<std::string> EngineCommand(const LaunchPlan& plan, const LaunchOptions& options);

/// The whole generated file for `format`: a shell script (torchrun, megatron, slurm), JSON (deepspeed)
/// or YAML (accelerate, k8s).
std::string RenderLaunch(const LaunchPlan& plan, LaunchFormat format, const LaunchOptions& options);

}  // namespace trainplan
