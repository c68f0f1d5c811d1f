#include "cli/commands.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/errors.h"
#include "cli/flags.h"
#include "cli/calibrate_command.h"
#include "cli/machine_commands.h"
#include "cli/recommend_commands.h"
#include "server/server.h"
#include "io/accuracy.h"
#include "io/csv.h"
#include "base/error.h"
#include "core/estimate.h"
#include "catalog/hardware.h"
#include "io/hf_hub.h"
#include "io/model_catalog.h"
#include "io/requests.h"
#include "io/text_io.h"
#include "io/user_catalog_files.h"
#include "io/writers.h"
#include "text/explain.h"
#include "text/render.h"
#include "core/search.h"

namespace trainplan::cli {

namespace {

using nlohmann::json;

/// An on/off flag value as the boolean its document `field` holds.
bool OnOff(const std::string& value, const char* field) {
  const std::string n = NormalizeName(value);
  if (n == "on" || n == "true" || n == "yes") return true;
  if (n == "off" || n == "false" || n == "no") return false;
  throw InputError(field, value, "on or off");
}

/// The job flags shared by `estimate` (and later `plan`), gathered into a scenario document so that
/// flags and scenario files go through one parser and one validator.
struct JobFlags {
  std::string scenario_path;
  std::string model, method, precision, optimizer, framework, framework_version, gpu, recompute, offload, intra_link,
      inter_link;
  std::string loss, optimizer_in_backward, master_weights, pipeline_schedule, moe_dispatcher, cp_comm, optimizer_state_dtype;
  bool dora = false, no_double_quant = false, activation_offloading = false;
  std::string attention, quantization;
  std::optional<int> gpus, gpus_per_node, tp, pp, dp, cp, ep, etp, zero, interleave;
  std::optional<int64_t> micro_batch, global_batch, seq_len, lora_rank, trainable_layers;
  std::optional<double> tokens, usable_memory, host_ram_gb, sample_mean_tokens, sample_max_tokens, moe_capacity_factor;
  std::string training_objective, sample_lengths;
  bool packing = false, group_by_length = false;
  bool liger = false, compile = false;
  std::optional<int64_t> dataloader_workers, mtp_layers, eval_interval_steps, eval_sequences;
  bool fp8_swiglu_input = false;
  std::vector<std::string> lora_targets, modules_to_save;
  bool sequence_parallel = false, no_flash = false, no_tp_overlap = false, no_pp_overlap = false,
       no_moe_a2a_overlap = false, moe_shared_expert_overlap = false, generic_config = false;

  /// Registers the job flags; `with_strategy` adds the hardware and strategy flags that `plan` searches,
  /// `with_scenario` the positional scenario file.
  void Register(CLI::App* cmd, bool with_strategy, bool with_scenario = true) {
    if (with_scenario) cmd->add_option("scenario", scenario_path, "scenario JSON file (flags override its fields)");
    cmd->add_option("--model", model, "catalog name, Hugging Face id, generic-<N>b, or a config.json path");
    cmd->add_flag("--generic-config", generic_config, "count a config.json of an unknown model_type as dense Llama");
    cmd->add_option("--method", method, "pretrain | full | freeze | lora | qlora");
    cmd->add_option("--precision", precision, "bf16 | bf16-mixed (fp32 weights, Lightning) | fp16 | fp32 | fp8");
    cmd->add_option("--optimizer", optimizer, "adamw | adamw-8bit | paged-adamw | paged-adamw-8bit | sgd | adafactor");
    cmd->add_option("--loss", loss, "standard | chunked | fused_linear (Liger) | cut (Cut Cross-Entropy); default: the engine's");
    cmd->add_option("--optimizer-in-backward", optimizer_in_backward,
                    "on | off: step each parameter group during backward (default: the engine's)");
    cmd->add_option("--master-weights", master_weights,
                    "on | off: an fp32 master copy of the trained weights (default: the engine's)");
    cmd->add_flag("--activation-offloading", activation_offloading, "move saved activations to host RAM (torchtune)");
    cmd->add_flag("--dora", dora, "DoRA adapters (PEFT use_dora)");
    cmd->add_flag("--no-double-quant", no_double_quant, "QLoRA without double quantisation of the NF4 constants");
    cmd->add_option("--quantization", quantization, "QLoRA base: nf4 (bitsandbytes, default) | gptq (4-bit, group 128)");
    cmd->add_option("--framework", framework, "hf | torchtune | unsloth | deepspeed | fsdp | megatron | litgpt | torchtitan");
    cmd->add_option("--framework-version", framework_version,
                    "the engine's release (0.3.13); earlier DeepSpeed releases run ZeRO-3 as they did");
    cmd->add_option("--seq-len", seq_len, "tokens per sequence");
    cmd->add_option("--global-batch", global_batch, "sequences per optimizer step");
    cmd->add_option("--tokens", tokens, "training tokens in total (e.g. 1e9)");
    cmd->add_option("--lora-rank", lora_rank, "LoRA rank");
    cmd->add_option("--lora-targets", lora_targets, "LoRA target modules (e.g. q_proj,v_proj)")->delimiter(',');
    cmd->add_option("--modules-to-save", modules_to_save,
                    "lora/qlora: modules PEFT trains a whole copy of (embed_tokens,lm_head)")
        ->delimiter(',');
    cmd->add_option("--trainable-layers", trainable_layers, "freeze: number of top layers that train");
    cmd->add_option("--training-objective", training_objective, "sft | dpo | orpo | kto | simpo");
    cmd->add_option("--sample-mean-tokens", sample_mean_tokens, "mean sample length in tokens (with --sample-max-tokens)");
    cmd->add_option("--sample-max-tokens", sample_max_tokens, "longest sample in tokens: rows are padded up to it");
    cmd->add_option("--sample-lengths", sample_lengths,
                    "MEAN,MAX tokens (e.g. 380,2048), or a file of lengths: one per line, `length count` per line, "
                    "JSON Lines or JSON of numbers or records with input_ids, length or num_tokens");
    cmd->add_flag("--packing", packing, "pack samples into rows of --seq-len instead of padding each batch");
    cmd->add_flag("--liger", liger, "Liger kernels: fused RMSNorm, RoPE, SwiGLU and linear cross-entropy");
    cmd->add_flag("--compile", compile, "torch.compile: fused elementwise kernels, less dispatch, compile time once");
    cmd->add_option("--dataloader-workers", dataloader_workers,
                    "DataLoader worker processes (default: the engine's; HF Trainer 0)");
    cmd->add_option("--optimizer-state-dtype", optimizer_state_dtype,
                    "fp32 | bf16: AdamW moments' dtype (DeepSeek-V3; Megatron --exp-avg-dtype)");
    cmd->add_flag("--fp8-swiglu-input", fp8_swiglu_input,
                  "save SwiGLU inputs in FP8 for the backward (Megatron --activation-func-fp8-input-store)");
    cmd->add_option("--moe-capacity-factor", moe_capacity_factor,
                    "MoE: pad each expert's input to this multiple of the mean load, dropping the rest (default: dropless)");
    cmd->add_option("--mtp-layers", mtp_layers, "multi-token-prediction depth trained beside the model (DeepSeek-V3: 1)");
    cmd->add_option("--eval-interval-steps", eval_interval_steps,
                    "evaluate every this many optimizer steps (Megatron --eval-interval, HF eval_steps; default: never)");
    cmd->add_option("--eval-sequences", eval_sequences,
                    "held-out sequences scored per evaluation, forward only (Megatron eval-iters x global batch)");
    cmd->add_flag("--group-by-length", group_by_length,
                  "HF group_by_length: micro-batches of similar lengths, so padding falls");
    cmd->add_option("--usable-memory", usable_memory,
                    fmt::format("share of each GPU's memory a plan may fill before it is at the edge (default {:g})",
                                DefaultUsableMemoryFraction()));
    cmd->add_option("--host-ram", host_ram_gb, "host RAM per node in GB: plans offloading more do not fit");
    if (!with_strategy) return;
    cmd->add_option("--gpu", gpu, "GPU type (see `trainplan gpus`)");
    cmd->add_option("--gpus", gpus, "number of GPUs");
    cmd->add_option("--gpus-per-node", gpus_per_node, "GPUs per node");
    cmd->add_option("--intra-link", intra_link, "link inside a node (default: the GPU's NVLink or PCIe)");
    cmd->add_option("--inter-link", inter_link, "network between nodes (e.g. ib-ndr400)");
    cmd->add_option("--tp", tp, "tensor-parallel size");
    cmd->add_option("--pp", pp, "pipeline-parallel size");
    cmd->add_option("--dp", dp, "data-parallel size (default gpus / (tp*pp*cp))");
    cmd->add_option("--cp", cp, "context-parallel size");
    cmd->add_option("--ep", ep, "expert-parallel size");
    cmd->add_option("--etp", etp, "expert-tensor-parallel size (default: as --tp, Megatron-Core's)");
    cmd->add_option("--zero", zero, "ZeRO stage 0-3 (3 = FSDP full shard)");
    cmd->add_option("--interleave", interleave, "virtual pipeline stages per GPU");
    cmd->add_option("--pipeline-schedule", pipeline_schedule, "1f1b | dualpipe | zb1p (pipeline micro-batch order)");
    cmd->add_option("--moe-dispatcher", moe_dispatcher,
                    "alltoall (NCCL all-to-all, default) | flex (DeepEP / HybridEP kernels): how tokens reach their experts");
    cmd->add_option("--cp-comm", cp_comm,
                    "p2p (ring, overlapped; default) | all_gather | a2a: how context parallelism moves K and V");
    cmd->add_option("--micro-batch", micro_batch, "sequences per GPU per micro-step");
    cmd->add_option("--recompute", recompute, "none | selective | full");
    cmd->add_option("--offload", offload, "none | optimizer | optimizer+params");
    cmd->add_flag("--sequence-parallel", sequence_parallel, "Megatron sequence parallelism");
    cmd->add_flag("--no-flash-attention", no_flash, "eager attention (stores the s x s scores)");
    cmd->add_flag("--no-tp-comm-overlap", no_tp_overlap,
                  "TP collectives wait for their GEMMs even where the engine overlaps them (Megatron-LM's default)");
    cmd->add_flag("--no-pp-comm-overlap", no_pp_overlap,
                  "pipeline sends wait for their stage's compute (Megatron-LM's --no-overlap-p2p-communication)");
    cmd->add_flag("--no-moe-a2a-overlap", no_moe_a2a_overlap,
                  "the expert all-to-all waits for the expert GEMMs (Megatron-Bridge presets' moe_a2a_overlap False)");
    cmd->add_flag("--moe-shared-expert-overlap", moe_shared_expert_overlap,
                  "shared experts run beside the dispatch and combine all-to-alls (Megatron-Core's "
                  "moe_shared_expert_overlap)");
    cmd->add_option("--attention", attention,
                    "auto | eager | sdpa | fa2 | fa3 | triton | cudnn (auto: the engine's default kernel)");
  }

  json ToDocument() const {
    json doc = scenario_path.empty() ? json::object() : ReadJsonFile(scenario_path, "scenario");
    if (!doc.is_object()) throw InputError("scenario", scenario_path, "a JSON object");
    doc = ApplyTo(std::move(doc));
    if (!doc.contains("model")) throw InputError("model", "", "a model is required: --model NAME or a scenario file");
    return doc;
  }

  /// The parsed flags written over a scenario document.
  json ApplyTo(json doc) const {
    if (!model.empty()) {
      const std::optional<std::string> config = LocalModelConfig(model);
      doc["model"] = config ? json{{"config_path", *config}} : json(model);
    }
    if (generic_config && doc.contains("model") && doc["model"].is_object()) doc["model"]["generic_config"] = true;
    auto set = [&](const char* section, const char* key, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
        if (!value.empty()) doc[section][key] = value;
      } else {
        if (value) doc[section][key] = *value;
      }
    };
    set("training", "method", method);
    set("training", "precision", precision);
    set("training", "optimizer", optimizer);
    set("training", "framework", framework);
    set("training", "framework_version", framework_version);
    set("training", "attention", attention);
    set("training", "micro_batch", micro_batch);
    set("training", "global_batch", global_batch);
    set("training", "seq_len", seq_len);
    set("training", "tokens", tokens);
    set("training", "lora_rank", lora_rank);
    set("training", "trainable_layers", trainable_layers);
    if (!lora_targets.empty()) doc["training"]["lora_targets"] = lora_targets;
    set("training", "loss", loss);
    if (!optimizer_in_backward.empty())
      doc["training"]["optimizer_in_backward"] = OnOff(optimizer_in_backward, "training.optimizer_in_backward");
    if (!master_weights.empty()) doc["training"]["master_weights"] = OnOff(master_weights, "training.master_weights");
    if (!modules_to_save.empty()) doc["training"]["modules_to_save"] = modules_to_save;
    set("training", "moe_capacity_factor", moe_capacity_factor);
    if (activation_offloading) doc["training"]["activation_offloading"] = true;
    if (dora) doc["training"]["dora"] = true;
    if (no_double_quant) doc["training"]["double_quant"] = false;
    set("training", "quantization", quantization);
    set("training", "objective", training_objective);
    set("training", "sample_mean_tokens", sample_mean_tokens);
    set("training", "sample_max_tokens", sample_max_tokens);
    if (!sample_lengths.empty()) {
      if (sample_mean_tokens || sample_max_tokens)
        throw InputError("--sample-lengths", sample_lengths,
                         "either --sample-lengths or --sample-mean-tokens with --sample-max-tokens");
      json& training = doc["training"];
      if (training.is_null()) training = json::object();
      for (const char* key : {"sample_mean_tokens", "sample_max_tokens", "sample_lengths"}) training.erase(key);
      training.update(SampleLengthsFromFlag(sample_lengths, "--sample-lengths"));
    }
    if (packing) doc["training"]["packing"] = true;
    if (liger) doc["training"]["liger"] = true;
    if (compile) doc["training"]["compile"] = true;
    set("training", "dataloader_workers", dataloader_workers);
    set("training", "optimizer_state_dtype", optimizer_state_dtype);
    set("training", "mtp_layers", mtp_layers);
    set("training", "eval_interval_steps", eval_interval_steps);
    set("training", "eval_sequences", eval_sequences);
    if (fp8_swiglu_input) doc["training"]["fp8_swiglu_input"] = true;
    if (group_by_length) doc["training"]["group_by_length"] = true;
    set("hardware", "gpu", gpu);
    set("hardware", "gpus", gpus);
    set("hardware", "gpus_per_node", gpus_per_node);
    set("hardware", "usable_memory_fraction", usable_memory);
    set("hardware", "host_ram_gb", host_ram_gb);
    if (!intra_link.empty()) doc["hardware"]["links"]["intra_node"] = intra_link;
    if (!inter_link.empty()) doc["hardware"]["links"]["inter_node"] = inter_link;
    set("strategy", "tp", tp);
    set("strategy", "pp", pp);
    set("strategy", "dp", dp);
    set("strategy", "cp", cp);
    set("strategy", "ep", ep);
    set("strategy", "etp", etp);
    set("strategy", "zero", zero);
    set("strategy", "interleave", interleave);
    set("strategy", "pipeline_schedule", pipeline_schedule);
    set("strategy", "moe_dispatcher", moe_dispatcher);
    set("strategy", "cp_comm", cp_comm);
    set("strategy", "recompute", recompute);
    set("strategy", "offload", offload);
    if (sequence_parallel) doc["strategy"]["sequence_parallel"] = true;
    if (no_flash) doc["strategy"]["flash_attention"] = false;
    if (no_tp_overlap) doc["strategy"]["tp_comm_overlap"] = false;
    if (no_pp_overlap) doc["strategy"]["pp_comm_overlap"] = false;
    if (no_moe_a2a_overlap) doc["strategy"]["moe_a2a_overlap"] = false;
    if (moe_shared_expert_overlap) doc["strategy"]["moe_shared_expert_overlap"] = true;
    return doc;
  }
};

ModelSpec ResolveModel(const std::string& name, bool generic_config) {
  if (const auto config = LocalModelConfig(name)) return ModelFromHfConfigFile(*config, "model", generic_config);
  return FindModel(name);
}

/// What the command-line flags of the commands below are parsed into.
struct Options {
  bool as_json = false;
  std::string format = "text";  // estimate and plan: text | json | csv (--json: json)
  std::string lang = "en";  // text reports: en | zh (JSON is always English)
  std::string output_path;
  std::string model_name;
  bool generic_config = false;  // `model`: count an unknown config.json as dense Llama
  JobFlags job;  // estimate
  JobFlags plan_job;
  std::vector<std::string> plan_gpu_types, price_overrides;
  std::optional<int> plan_gpus, max_gpus, plan_gpus_per_node, top, max_rent_gpus;
  std::optional<double> budget;
  std::optional<std::string> currency;
  std::string deadline, objective, plan_inter_link;
  bool no_offload = false;
  int threads = 0;
  ServeOptions serve;
  std::string reference_path;
};

/// `--format text|json|csv` and `-o` of estimate and plan; --json is short for --format json.
void AddFormatFlags(CLI::App* cmd, Options& o) {
  CLI::Option* format = cmd->add_option("--format", o.format, "text | json | csv (default text)");
  cmd->add_flag("--json", o.as_json, "short for --format json")->excludes(format);
  cmd->add_option("-o,--output", o.output_path, "write the answer to this file (default: stdout)");
}

enum class AnswerFormat { kText, kJson, kCsv };

/// Read before any work, so a misspelt format fails at once rather than after a search.
AnswerFormat ParseAnswerFormat(const Options& o) {
  if (o.as_json) return AnswerFormat::kJson;
  const std::string format = NormalizeName(o.format);
  if (format == "text") return AnswerFormat::kText;
  if (format == "json") return AnswerFormat::kJson;
  if (format == "csv") return AnswerFormat::kCsv;
  throw InputError("format", o.format, "text, json or csv");
}

/// The answer in the format asked for: the text report, the JSON answer, or the CSV made from that JSON.
void WriteAnswer(const Options& o, AnswerFormat format, const std::function<json()>& answer,
                 const std::function<std::string()>& text, std::string (*csv)(const json&)) {
  switch (format) {
    case AnswerFormat::kText: return WriteText(text(), o.output_path);
    case AnswerFormat::kJson: return WriteText(answer().dump(2) + "\n", o.output_path);
    case AnswerFormat::kCsv: return WriteText(csv(answer()), o.output_path);
  }
}

int RunPlan(Options& o) {
  const Lang lang = ParseLang(o.lang, "--lang");
  const AnswerFormat format = ParseAnswerFormat(o);
  // The flags become the same request document the HTTP API takes, read by the same parser.
  json doc = o.plan_job.ToDocument();
  json& p = doc["plan"];
  p = json::object();
  if (!o.plan_gpu_types.empty()) p["gpu"] = o.plan_gpu_types;
  if (o.plan_gpus) p["gpus"] = *o.plan_gpus;
  if (o.max_gpus) p["max_gpus"] = *o.max_gpus;
  if (o.max_rent_gpus) p["max_rent_gpus"] = *o.max_rent_gpus;
  if (o.plan_gpus_per_node) p["gpus_per_node"] = *o.plan_gpus_per_node;
  if (!o.plan_inter_link.empty()) p["inter_link"] = o.plan_inter_link;
  if (!o.deadline.empty()) p["deadline"] = o.deadline;
  if (o.budget) p["budget"] = *o.budget;
  if (o.currency) p["currency"] = *o.currency;
  if (!o.objective.empty()) p["objective"] = o.objective;
  if (o.no_offload) p["offload"] = false;
  if (o.top) p["top"] = *o.top;
  if (!o.price_overrides.empty()) p["prices"] = PricesFromFlags(o.price_overrides, "--price");
  PlanRequest request = PlanRequestFromJson(doc, /*allow_paths=*/true);
  const Scenario& job = request.job;
  PlanConstraints& constraints = request.constraints;
  const auto started = std::chrono::steady_clock::now();
  bool shown = false;
  if (isatty(STDERR_FILENO)) {
    constraints.progress = [&](size_t done, size_t total) {
      if (std::chrono::steady_clock::now() - started < std::chrono::milliseconds(300)) return;
      std::cerr << fmt::format("\rsearching: {}/{} GPU types and counts", done, total) << std::flush;
      shown = true;
    };
  }
  PlanResult result = SearchPlans(job, constraints, o.threads);
  if (shown) std::cerr << "\r\033[K" << std::flush;
  const Currency& currency = *request.currency;
  WriteAnswer(
      o, format, [&] { return PlanResultToJson(job, result, currency); },
      [&] { return RenderPlan(job, result, currency, lang); }, PlanCsv);
  // A CSV of no plan is its header alone: say why where a person reads it.
  if (format == AnswerFormat::kCsv && !result.feasible)
    std::cerr << "no plan: " << NoPlanText(result.reason, currency) << "\n";
  return 0;
}

void AddPlanFlags(CLI::App* cmd, Options& o) {
  o.plan_job.Register(cmd, /*with_strategy=*/false);
  cmd->add_option("--gpu", o.plan_gpu_types, "GPU types to consider (comma-separated; default: all)")->delimiter(',');
  cmd->add_option("--gpus", o.plan_gpus, "exact GPU count (default: search)");
  cmd->add_option("--max-gpus", o.max_gpus, "largest GPU count to consider");
  cmd->add_option("--max-rent-gpus", o.max_rent_gpus,
                  "most GPUs you can rent, e.g. a contract's size (default: each offer's self-serve limit)");
  cmd->add_option("--gpus-per-node", o.plan_gpus_per_node, "GPUs per node (default 8, or the 72 of an NVL72 rack)");
  cmd->add_option("--inter-link", o.plan_inter_link, "network between nodes (e.g. ib-ndr400)");
  cmd->add_option("--deadline", o.deadline, "finish within this time: 15d, 36h, 90m");
  cmd->add_option("--budget", o.budget, "spend at most this much, in --currency");
  cmd->add_option("--currency", o.currency, "USD | CNY | EUR: budget, prices and the costs shown (default USD)");
  cmd->add_option("--objective", o.objective, "time | cost | gpus (default: cost within the deadline; time with --budget and no --deadline)");
  cmd->add_flag("--no-offload", o.no_offload, "exclude CPU offload from the search");
  cmd->add_option("--top", o.top, "plans to show");
  cmd->add_option("--price", o.price_overrides, "price per GPU-hour override in --currency, e.g. h100-sxm=2.5")->delimiter(',');
  cmd->add_option("--threads", o.threads, "search threads (default: all cores)");
  AddFormatFlags(cmd, o);
  AddLangFlag(cmd, o.lang);
}

/// One subcommand: its name and help, the flags it registers, and what it runs (returning the exit status).
struct Command {
  const char* name;
  const char* help;
  void (*add)(CLI::App* cmd, Options& o);
  int (*run)(Options& o);
};

constexpr Command kCommands[] = {
    {"models", "list the model catalog (built-in and user catalogs)",
     [](CLI::App* cmd, Options& o) { cmd->add_flag("--json", o.as_json, "machine-readable output"); },
     [](Options& o) {
       if (o.as_json) {
         std::cout << ModelCatalogJson().dump(2) << "\n";
         return 0;
       }
       std::vector<CatalogModel> models;
       for (const auto& entry : ModelCatalog())
         models.push_back({entry.id, entry.hf_id, CountParams(FindModel(entry.id))});
       std::cout << RenderModelCatalog(models);
       return 0;
     }},
    {"gpus", "list the GPU catalog (built-in and user catalogs)",
     [](CLI::App* cmd, Options& o) {
       cmd->add_flag("--json", o.as_json, "the catalog as a user catalog file (--catalog reads it back)");
     },
     [](Options& o) {
       std::cout << (o.as_json ? GpuCatalogFile().dump(2) + "\n" : RenderGpuCatalog());
       return 0;
     }},
    {"model", "exact parameter breakdown of a model",
     [](CLI::App* cmd, Options& o) {
       cmd->add_option("name", o.model_name, "catalog name, Hugging Face id or config.json path")->required();
       cmd->add_flag("--generic-config", o.generic_config, "count an unknown model_type as dense Llama");
       cmd->add_flag("--json", o.as_json, "machine-readable output");
     },
     [](Options& o) {
       const ModelSpec m = ResolveModel(o.model_name, o.generic_config);
       const ParamCounts p = CountParams(m);
       std::cout << (o.as_json ? ModelToJson(m, p).dump(2) + "\n" : RenderModel(m, p));
       return 0;
     }},
    {"estimate", "memory per GPU and training time for one job",
     [](CLI::App* cmd, Options& o) {
       o.job.Register(cmd, /*with_strategy=*/true);
       AddFormatFlags(cmd, o);
       AddLangFlag(cmd, o.lang);
     },
     [](Options& o) {
       const Lang lang = ParseLang(o.lang, "--lang");
       const AnswerFormat format = ParseAnswerFormat(o);
       const Scenario scenario = ScenarioFromJson(o.job.ToDocument(), /*allow_paths=*/true);
       const Estimate estimate = EstimateScenario(scenario);
       WriteAnswer(
           o, format, [&] { return EstimateToJson(scenario, estimate); },
           [&] { return RenderEstimate(scenario, estimate, lang); }, EstimateCsv);
       return 0;
     }},
    {"plan", "search GPU types, counts and strategies for the best plan", AddPlanFlags, RunPlan},
    {"serve", "the web page and JSON API over the same engine",
     [](CLI::App* cmd, Options& o) {
       cmd->add_option("--host", o.serve.host, "address to bind (default loopback; 0.0.0.0 exposes it to the network)");
       cmd->add_option("--port", o.serve.port, "TCP port (0: any free port, printed on start)");
       cmd->add_option("--workers", o.serve.workers, "searches computing at once (default: the cores)");
       cmd->add_option("--token", o.serve.token, "require `Authorization: Bearer TOKEN` on every request but /healthz")
           ->envname("TRAINPLAN_TOKEN");
       cmd->add_flag("--allow-unauthenticated", o.serve.allow_unauthenticated,
                     "serve beyond loopback without a token (refused otherwise)");
       cmd->add_option("--allowed-host", o.serve.allowed_hosts,
                       "a Host name to answer besides localhost and IP addresses (repeatable; * for any)");
       cmd->add_option("--max-connections", o.serve.max_connections, "connections open at once (default 512)")
           ->check(CLI::Range(1, 100000));
       cmd->add_option("--max-per-client", o.serve.max_per_client,
                       "requests in progress per client address, beyond which 429 (default 16)")
           ->check(CLI::Range(1, 100000));
       cmd->add_option("--max-queued", o.serve.max_queued, "searches waiting for a worker, beyond which 503 (default 64)")
           ->check(CLI::Range(1, 100000));
       cmd->add_option("--request-timeout", o.serve.request_timeout_s,
                       "seconds for a request's headers and body to arrive, beyond which 408 (default 10)")
           ->check(CLI::Range(0.1, 3600.0));
       cmd->add_option("--time-limit", o.serve.compute_timeout_s,
                       "seconds from a request's arrival to its answer, queueing included, beyond which 503 (default 10)")
           ->check(CLI::Range(0.1, 3600.0));
     },
     [](Options& o) {
       switch (RunServer(o.serve)) {
         case ServeEnd::kStopped: return kExitAnswer;
         case ServeEnd::kRefused: return kExitBadInput;
         case ServeEnd::kCannotListen: return kExitMachineCannot;
       }
       return kExitInternal;
     }},
    {"accuracy", "compare estimates with published measurements",
     [](CLI::App* cmd, Options& o) {
       cmd->add_option("--reference", o.reference_path, "measurements.jsonl (tests/reference/ in the source tree)")
           ->required();
       cmd->add_option("-o,--output", o.output_path, "write the Markdown report here");
     },
     [](Options& o) {
       WriteText(AccuracyMarkdown(RunAccuracy(o.reference_path)), o.output_path);
       return 0;
     }},
};

}  // namespace

namespace {

/// The --catalog files of the command line, found before the command table is built: its help texts quote
/// catalog figures, and the catalogs are read once, with the user's files already laid over them.
std::vector<std::string> CatalogFlags(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--catalog" && i + 1 < argc) {
      files.emplace_back(argv[++i]);
    } else if (arg.rfind("--catalog=", 0) == 0) {
      files.emplace_back(arg.substr(std::string_view("--catalog=").size()));
    }
  }
  return files;
}

}  // namespace

int Main(int argc, char** argv) {
  try {
    LoadUserCatalogs(UserCatalogPaths(CatalogFlags(argc, argv)));
  } catch (...) {
    return ReportError(std::current_exception(), std::vector<std::string>(argv + 1, argv + argc));
  }
  CLI::App app{"trainplan: what it takes to train or fine-tune a large language model"};
  app.require_subcommand(1);
  app.footer(kExitStatusHelp);
  // --catalog is global: before the command or among its flags (subcommands pass flags they lack up here).
  app.fallthrough();
  std::vector<std::string> catalog_files;  // read above, before the table; declared for parsing and --help
  app.add_option("--catalog", catalog_files,
                 "user catalog file: GPUs, links, CPUs, drives, prices, efficiencies or models over the built-in "
                 "ones (repeatable; after the *.json of ~/.config/trainplan/; docs/catalogs.md)")
      ->allow_extra_args(false);  // one file per --catalog, so a positional argument after it stays the command's
  Options options;
  bool offline = false;
  app.add_flag("--offline", offline, "read Hugging Face models from the local cache only, never the network (as "
                                     "HF_HUB_OFFLINE=1)");
  app.fallthrough();  // global options may follow the command
  std::vector<std::pair<CLI::App*, const Command*>> commands;
  for (const Command& c : kCommands) {
    CLI::App* cmd = app.add_subcommand(c.name, c.help);
    c.add(cmd, options);
    commands.emplace_back(cmd, &c);
  }
  // The machine commands and recommend/review take the `plan` job flags (without the hardware and strategy).
  JobFlags machine_job;
  MachineCommands machine(app, {[&](CLI::App* cmd) { machine_job.Register(cmd, /*with_strategy=*/false); },
                                [&] { return machine_job.ToDocument(); }, {}, {}});
  JobFlags recommend_job;
  RegisterRecommendCommands(app, {[&](CLI::App* cmd) { recommend_job.Register(cmd, /*with_strategy=*/false); },
                                  [&] { return recommend_job.ToDocument(); },
                                  [&](CLI::App* cmd) {
                                    recommend_job.Register(cmd, /*with_strategy=*/false, /*with_scenario=*/false);
                                  },
                                  [&](json doc) { return recommend_job.ApplyTo(std::move(doc)); }});
  JobFlags calibrate_job;
  RegisterCalibrateCommand(app, {[&](CLI::App* cmd) { calibrate_job.Register(cmd, /*with_strategy=*/true); },
                                 [&] { return calibrate_job.ToDocument(); }, {}, {}});

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }

  try {
    SetHubOffline(offline);
    for (const auto& [cmd, command] : commands) {
      if (cmd->parsed()) return FinishAnswer(command->run(options));
    }
    int status = kExitAnswer;
    if (machine.Run(status) || RunRecommendCommands(status) || RunCalibrateCommand(status)) return FinishAnswer(status);
    return FinishAnswer(kExitAnswer);
  } catch (...) {
    return ReportError(std::current_exception(), std::vector<std::string>(argv + 1, argv + argc));
  }
}

}  // namespace trainplan::cli
