// The accuracy harness: every published measurement in tests/reference/measurements.jsonl mapped to the
// scenario it describes, estimated, and compared. How each family of records is mapped, and what had to
// be assumed, is written into each row's note and into docs/performance.md. Records in the generic form carry
// their scenario document and need no mapping here (tests/reference/README.md).
#include "io/accuracy.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "catalog/frameworks.h"
#include "core/calibration.h"
#include "core/estimate.h"
#include "io/model_catalog.h"
#include "io/scenario_reader.h"
#include "text/calibration_text.h"
#include "core/units.h"

namespace trainplan {
namespace {

using nlohmann::json;

/// Why a record cannot be compared; thrown inside the mapping, caught per record.
struct Skip {
  std::string reason;
};

/// A number, or the leading number of a string such as "11008 (config value; ...)".
std::optional<double> Number(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
  const json& v = obj.at(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t used = 0;
    try {
      const double d = std::stod(s, &used);
      if (used > 0) return d;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

double Required(const json& obj, const char* key, const char* what) {
  auto v = Number(obj, key);
  if (!v) throw Skip{fmt::format("{} has no numeric '{}'", what, key)};
  return *v;
}

std::string Text(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_string()) return "";
  std::string s = obj.at(key).get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool Has(const std::string& haystack, const char* needle) { return haystack.find(needle) != std::string::npos; }

/// "A100-SXM-80GB (700W TDP)" -> the catalog GPU; a bare "A100-80GB" is read as the SXM part of HGX servers.
GpuSpec Gpu(const json& hardware, std::string& note) {
  std::string name = hardware.value("gpu", "");
  if (auto paren = name.find('('); paren != std::string::npos) name = name.substr(0, paren);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  try {
    return FindGpu(name);
  } catch (const InputError&) {
  }
  try {
    GpuSpec gpu = FindGpu(name + " SXM");
    note += "GPU form factor assumed SXM (HGX/DGX servers); ";
    return gpu;
  } catch (const InputError&) {
    throw Skip{fmt::format("GPU '{}' is not in the catalog", name)};
  }
}

Hardware MakeHardware(const json& rec, int gpus, std::string& note) {
  Hardware hw;
  hw.gpu = Gpu(rec.at("hardware"), note);
  hw.gpus = gpus;
  hw.gpus_per_node = std::min(gpus, static_cast<int>(Number(rec.at("hardware"), "gpus_per_node").value_or(8)));
  hw.intra_node = DefaultIntraNodeLink(hw.gpu);
  hw.inter_node = DefaultInterNodeLink(hw.gpu);
  if (Has(Text(rec.at("hardware"), "inter_node"), "roce 400")) hw.inter_node = FindLink("roce-400g");
  return hw;
}

/// Megatron-style GPT fields (num_layers, hidden_size, ...) as in the papers.
ModelSpec MegatronModel(const json& rec) {
  json config = rec.at("model");
  if (!config.contains("seq_len")) config["seq_len"] = rec.at("strategy").at("seq_len");
  return ModelFromHfConfig(config, rec.at("id").get<std::string>());
}

ModelSpec LlamaModel(const json& rec) {
  const json& m = rec.at("model");
  const double heads = Required(m, "num_attention_heads", "model");
  json config = {{"model_type", "llama"},
                 {"hidden_size", Required(m, "hidden_size", "model")},
                 {"intermediate_size", Required(m, "intermediate_size", "model")},
                 {"num_hidden_layers", Required(m, "num_layers", "model")},
                 {"num_attention_heads", heads},
                 {"num_key_value_heads", Number(m, "num_key_value_heads").value_or(heads)},
                 {"vocab_size", Required(m, "vocab_size", "model")},
                 {"tie_word_embeddings", false}};
  return ModelFromHfConfig(config, rec.at("id").get<std::string>());
}

/// First-generation Qwen (remote code): intermediate_size is w1 + w2, q/k/v carry biases.
ModelSpec QwenModel(const json& rec) {
  const json& m = rec.at("model");
  json config = {{"model_type", "qwen"},
                 {"hidden_size", Required(m, "hidden_size", "model")},
                 {"num_hidden_layers", Required(m, "num_layers", "model")},
                 {"num_attention_heads", Required(m, "num_attention_heads", "model")},
                 {"intermediate_size", Required(m, "intermediate_size", "model")},
                 {"vocab_size", Required(m, "vocab_size", "model")}};
  return ModelFromHfConfig(config, rec.at("id").get<std::string>());
}

/// MPT as benchmarked by llm-foundry: no biases, learned positions, 4h GeLU MLP.
ModelSpec MptModel(const json& rec) {
  const json& m = rec.at("model");
  const double h = Required(m, "hidden_size", "model");
  json config = {{"model_type", "mpt"},
                 {"d_model", h},
                 {"n_heads", Required(m, "num_attention_heads", "model")},
                 {"n_layers", Required(m, "num_layers", "model")},
                 {"expansion_ratio", Required(m, "ffn_hidden_size", "model") / h},
                 {"vocab_size", Required(m, "vocab_size", "model")},
                 {"max_seq_len", Required(rec.at("strategy"), "seq_len", "strategy")},
                 {"no_bias", true},
                 {"learned_pos_emb", true}};
  return ModelFromHfConfig(config, rec.at("id").get<std::string>());
}

Recompute ReadRecompute(const json& st) {
  const std::string r = Text(st, "recompute");
  if (Has(r, "selective")) return Recompute::kSelective;
  if (Has(r, "full") || Text(st, "gradient_checkpointing").rfind("on", 0) == 0) return Recompute::kFull;
  return Recompute::kNone;
}

int ReadZero(const json& st) {
  const std::string z = Text(st, "zero_stage");
  if (Has(z, "full_shard") || Has(z, "zero-3")) return 3;
  if (Has(z, "shard_grad_op")) return 2;
  return static_cast<int>(Number(st, "zero_stage").value_or(0));
}

/// What one record is compared on.
struct Mapped {
  Scenario scenario;
  std::string source;  // short citation; rows of one source form one group of the summary
  std::string note;
};

void Finish(Scenario& sc) {
  try {
    ValidateScenario(sc);
  } catch (const InputError& e) {
    throw Skip{fmt::format("scenario rejected: {}", e.what())};
  }
}

/// Megatron-LM 2021 (Tables 1-2) and Korthikanti et al. 2022 (Table 5): Selene DGX A100, eager
/// attention (these runs predate flash attention in Megatron-LM).
Mapped MegatronRecord(const json& rec, const std::string& source) {
  const json& st = rec.at("strategy");
  Mapped m;
  m.source = source;
  Scenario& sc = m.scenario;
  sc.model = MegatronModel(rec);
  sc.training.method = Method::kPretrain;
  sc.training.precision = Has(Text(st, "precision"), "fp16") ? Precision::kFp16 : Precision::kBf16;
  const bool zero3 = ReadZero(st) == 3;
  sc.training.framework = zero3 ? Framework::kDeepSpeed : Framework::kMegatron;
  if (zero3) {
    // The paper (April 2021) names no release; ZeRO-3 first shipped in DeepSpeed v0.3.13 (2021-03-16), and every
    // release before 0.6.0 gathers and reduces as it does (data/efficiency.json zero3_legacy_source).
    sc.training.framework_version = "0.3.13";
    m.note += "DeepSpeed v0.3.13 (ZeRO-3's first release; the paper names none); ";
  }
  sc.training.seq_len = static_cast<int64_t>(Required(st, "seq_len", "strategy"));
  sc.training.global_batch = static_cast<int64_t>(Required(st, "global_batch_seqs", "strategy"));
  sc.strategy.tp = static_cast<int>(Number(st, "tp").value_or(1));
  sc.strategy.pp = static_cast<int>(Number(st, "pp").value_or(1));
  sc.strategy.dp = static_cast<int>(Number(st, "dp").value_or(1));
  sc.strategy.zero = ReadZero(st);
  sc.strategy.recompute = ReadRecompute(st);
  sc.strategy.sequence_parallel = st.value("sequence_parallel", false);
  sc.strategy.flash_attention = false;
  // Nor had they Transformer Engine's userbuffers, or overlapped pipeline sends: every TP collective ran in line
  // with the GEMMs and every send waited for its stage.
  sc.strategy.tp_comm_overlap = false;
  sc.strategy.pp_comm_overlap = false;
  if (auto b = Number(st, "micro_batch")) {
    sc.training.micro_batch = static_cast<int64_t>(*b);
  } else {
    sc.training.micro_batch = 1;
    m.note += "micro-batch not in the table: 1 assumed (Table 2's PTD-P rows use 1); ";
  }
  if (auto v = Number(st, "interleaved_stages")) {
    sc.strategy.interleave = static_cast<int>(*v);
  } else if (sc.strategy.pp > 1 && Has(Text(st, "schedule"), "interleaved")) {
    // Table 1 says "interleaved 1F1B" without the chunk count: the smallest v > 1 that splits each
    // stage's layers evenly.
    const int64_t per_stage = sc.model.num_layers / sc.strategy.pp;
    sc.strategy.interleave = per_stage % 2 == 0 ? 2 : (per_stage % 3 == 0 ? 3 : 1);
    m.note += fmt::format("interleave {} assumed; ", sc.strategy.interleave);
  }
  const int gpus = sc.strategy.tp * sc.strategy.pp * sc.strategy.dp;
  sc.hardware = MakeHardware(rec, gpus, m.note);
  Finish(sc);
  return m;
}

Mapped Llama3Record(const json& rec) {
  const json& st = rec.at("strategy");
  Mapped m;
  m.source = "Llama 3 405B, Table 4";
  Scenario& sc = m.scenario;
  sc.model = LlamaModel(rec);
  sc.training.method = Method::kPretrain;
  sc.training.framework = Framework::kFsdp;
  sc.training.seq_len = static_cast<int64_t>(Required(st, "seq_len", "strategy"));
  sc.training.micro_batch = 1;
  sc.strategy.tp = static_cast<int>(Required(st, "tp", "strategy"));
  sc.strategy.cp = static_cast<int>(Number(st, "cp").value_or(1));
  sc.strategy.pp = static_cast<int>(Required(st, "pp", "strategy"));
  sc.strategy.dp = static_cast<int>(Required(st, "dp", "strategy"));
  sc.training.global_batch = static_cast<int64_t>(Required(st, "batch_size_per_dp", "strategy")) * sc.strategy.dp;
  // Section 3.3.2: "Our use of FSDP for Llama 3 shards the optimizer states and gradients, but for model
  // shards we do not reshard after forward computation": FSDP's SHARD_GRAD_OP, ZeRO-2 over DP x CP.
  sc.strategy.zero = 2;
  sc.strategy.sequence_parallel = true;
  sc.strategy.flash_attention = true;
  sc.training.attention = AttentionKernel::kFa2;  // Meta's stack: flash attention kernels (assumed FA2's rate)
  // Section 3.3.2: "we use an all-gather based method where we first all-gather the key (K) and value (V)
  // tensors ... the all-gather communication latency is exposed in the critical path".
  sc.strategy.cp_comm = CpComm::kAllGather;
  sc.hardware = MakeHardware(rec, sc.strategy.tp * sc.strategy.cp * sc.strategy.pp * sc.strategy.dp, m.note);
  Finish(sc);
  // Section 3.3.2: a layer trimmed from the first and last of 16 stages (126 = 16 x 8 - 2) and "the first
  // model chunk on the first stage has only the embedding": one virtual stage per layer slot, 8 per stage.
  // ValidateScenario requires pp x v to divide the layers, so the chunk count is set after validation; the
  // time model takes the slowest stage, ceil(L/p) layers. No activation checkpointing: "we could pre-train
  // Llama 3 on 8K tokens sequences without activation checkpointing".
  sc.strategy.interleave = static_cast<int>((sc.model.num_layers + 2) / sc.strategy.pp);
  m.note += fmt::format("micro-batch 1, interleave {} (one virtual stage per layer slot), SP on, no recompute, {}"
                        "FSDP sharding optimizer states and gradients (ZeRO-2); model TFLOP/s with the full s^2 attention convention; ",
                        sc.strategy.interleave,
                        sc.strategy.cp > 1 ? "all-gather CP (K and V gathered, not overlapped), " : "");
  return m;
}

Mapped MosaicRecord(const json& rec) {
  const json& st = rec.at("strategy");
  Mapped m;
  const std::string gpu = Text(rec.at("hardware"), "gpu");
  m.source = Has(gpu, "h100") ? "MosaicML llm-foundry (H100)" : "MosaicML llm-foundry (A100)";
  Scenario& sc = m.scenario;
  sc.model = MptModel(rec);
  sc.training.method = Method::kPretrain;
  sc.training.framework = Framework::kFsdp;
  // llm-foundry's own loss, not the Hugging Face model's: ComposerMPTCausalLM's loss_fn defaults to
  // 'fused_crossentropy', flash-attn's CrossEntropyLoss, and the benchmark yamls (scripts/train/yamls/pretrain/
  // mpt-*.yaml) leave it (mosaicml/llm-foundry @8c8dd48f, llmfoundry/models/mpt/modeling_mpt.py).
  sc.training.loss = Loss::kFused;
  m.note += "llm-foundry as fsdp with its fused cross-entropy; ";
  sc.training.precision = Has(Text(st, "precision"), "fp8") ? Precision::kFp8 : Precision::kBf16;
  sc.training.seq_len = static_cast<int64_t>(Required(st, "seq_len", "strategy"));
  sc.training.micro_batch = static_cast<int64_t>(Required(st, "micro_batch", "strategy"));
  sc.training.global_batch = static_cast<int64_t>(Required(st, "global_batch_seqs", "strategy"));
  const int gpus = static_cast<int>(Required(rec.at("hardware"), "count", "hardware"));
  sc.strategy.dp = gpus;
  sc.strategy.zero = ReadZero(st);
  sc.strategy.recompute = ReadRecompute(st);
  sc.strategy.flash_attention = true;
  // attn_impl as the benchmark scripts set it: triton (Triton FlashAttention) unless the record says flash.
  sc.training.attention = Has(Text(st, "attention"), "triton") ? AttentionKernel::kTriton : AttentionKernel::kFa2;
  sc.hardware = MakeHardware(rec, gpus, m.note);
  Finish(sc);
  return m;
}

Mapped QwenRecord(const json& rec) {
  const json& st = rec.at("strategy");
  Mapped m;
  m.source = Has(Text(st, "precision"), "gptq") ? "Qwen-1 README profile (GPTQ Q-LoRA)" : "Qwen-1 README profile";
  Scenario& sc = m.scenario;
  sc.model = QwenModel(rec);
  const std::string method = Text(st, "method");
  sc.training.method = Has(method, "qlora") ? Method::kQlora : (Has(method, "lora") ? Method::kLora : Method::kFull);
  // finetune.py trains PEFT modules_to_save copies of wte and lm_head when LoRA tunes a base (non-chat) model:
  // the README's 'LoRA (emb)' rows (QwenLM/Qwen @2df8e8ac finetune.py).
  if (Has(method, "embedding")) sc.training.modules_to_save = {"embed_tokens", "lm_head"};
  // Full fine-tuning runs finetune/finetune_ds.sh: the HF Trainer inside DeepSpeed ZeRO-3
  // (finetune/ds_config_zero3.json, no offload), even on one GPU. Q-LoRA runs finetune_qlora_single_gpu.sh:
  // the GPTQ-Int4 chat checkpoint (GPTQConfig(bits=4, disable_exllama=True)) in fp16 under DeepSpeed ZeRO-2
  // (ds_config_zero2.json). The LoRA script uses no DeepSpeed.
  const bool full = sc.training.method == Method::kFull;
  const bool qlora = sc.training.method == Method::kQlora;
  sc.training.framework = full || qlora ? Framework::kDeepSpeed : Framework::kHfTrainer;
  if (full) m.note += "finetune_ds.sh: DeepSpeed ZeRO-3; ";
  // Qwen-1's remote code casts itself to bf16 when the config names no dtype (modeling_qwen.py: autoset_precision,
  // then self.transformer.bfloat16() and self.lm_head.bfloat16()), and the Trainer keeps no master copy.
  if (!full && !qlora) sc.training.master_weights = false;
  if (qlora) {
    sc.training.quantization = Quantization::kGptq4;
    m.note += "finetune_qlora_single_gpu.sh: GPTQ-Int4 base, DeepSpeed ZeRO-2, fp16; ";
  }
  sc.training.precision =
      qlora || Has(Text(st, "precision"), "fp16") ? Precision::kFp16 : Precision::kBf16;
  sc.training.seq_len = static_cast<int64_t>(Required(st, "seq_len", "strategy"));
  sc.training.micro_batch = static_cast<int64_t>(Required(st, "micro_batch", "strategy"));
  const int dp = static_cast<int>(Number(st, "dp").value_or(1));
  sc.training.global_batch = sc.training.micro_batch * static_cast<int64_t>(Number(st, "grad_accum").value_or(1)) * dp;
  sc.training.lora_rank = static_cast<int64_t>(Number(st, "lora_r").value_or(64));
  sc.strategy.dp = dp;
  sc.strategy.zero = full ? 3 : (qlora ? 2 : ReadZero(st));
  // ds_config_zero3.json leaves reduce_bucket_size "auto" (the Trainer fills hidden_size^2); ds_config_zero2.json
  // sets 2e8 (QwenLM/Qwen finetune/ @2df8e8ac).
  if (full) sc.strategy.reduce_bucket_elements = kReduceBucketAuto;
  if (qlora) sc.strategy.reduce_bucket_elements = 2e8;
  sc.strategy.recompute = ReadRecompute(st);
  sc.strategy.flash_attention = true;
  sc.training.attention = AttentionKernel::kFa2;  // the profile states FlashAttention-2
  sc.hardware = MakeHardware(rec, dp, m.note);
  Finish(sc);
  return m;
}

/// Llama 2 pre-training: the GPU count is not published; GPU-hours barely depend on it at fixed global
/// batch, so 1024 GPUs (one 4k sequence each per step) with FSDP full sharding is assumed.
Mapped Llama2Record(const json& rec) {
  Mapped m;
  m.source = "Llama 2 GPU-hours";
  Scenario& sc = m.scenario;
  sc.model = LlamaModel(rec);
  sc.training.method = Method::kPretrain;
  sc.training.framework = Framework::kFsdp;
  sc.training.seq_len = static_cast<int64_t>(Required(rec.at("strategy"), "seq_len", "strategy"));
  // "4M tokens" of 4k sequences: 1024 sequences (4.19M tokens) per step.
  sc.training.global_batch = 1024;
  sc.training.tokens = Required(rec.at("measured"), "tokens", "measured");
  sc.strategy.dp = 1024;
  sc.strategy.zero = 3;
  sc.strategy.flash_attention = true;
  sc.training.attention = AttentionKernel::kFa2;
  sc.strategy.recompute = Recompute::kFull;  // 70B at 4k context does not fit 80 GB without it
  m.note = "GPU count not published: 1024 GPUs, FSDP full shard, micro-batch 1, flash attention and "
           "activation checkpointing assumed; ";
  sc.hardware = MakeHardware(rec, sc.strategy.dp, m.note);
  Finish(sc);
  return m;
}

void AddRow(AccuracyReport& report, const json& rec, const Mapped& m, const std::string& kind,
            const std::string& metric, double measured, double estimated) {
  AccuracyRow row;
  row.id = rec.at("id").get<std::string>();
  row.kind = kind;
  row.metric = metric;
  row.source = m.source;
  row.measured = measured;
  row.estimated = estimated;
  row.error = (estimated - measured) / measured;
  row.note = m.note;
  const bool counted = kind == "param_count";
  row.engine = counted ? "-" : ToString(m.scenario.training.framework);
  row.method = counted ? "-" : ToString(m.scenario.training.method);
  row.role = rec.at("role").get<std::string>();
  while (!row.note.empty() && (row.note.back() == ' ' || row.note.back() == ';')) row.note.pop_back();
  report.rows.push_back(std::move(row));
}

/// The row as a run `trainplan calibrate` could fit, when its estimate is the figure calibration compares: the
/// step time, the token rate, or the peak memory of a counter without the load peak.
void AddCalibrationRun(AccuracyReport& report, const Estimate& e, const Mapped& m, const std::string& metric,
                       double measured, double estimated) {
  CalibrationRun run;
  run.scenario = m.scenario;
  run.label = report.rows.back().id;
  const auto same = [&](double x) { return std::abs(x - estimated) <= 1e-9 * std::abs(x); };
  const double gpus = m.scenario.hardware.gpus;
  const double overhead = AllocatorOverhead(m.scenario, GetFrameworkProfile(m.scenario.training.framework));
  const auto counted = [&](MemoryCounter c) { return CountedBytes(e.memory, c, false, overhead) / kGiB; };
  if ((metric.starts_with("sec_per") || metric == "iteration_time_s") && same(e.time.step_s)) {
    run.step_s = measured;
  } else if (metric == "tokens_per_s" && same(e.time.tokens_per_s)) {
    run.tokens_per_s = measured;
  } else if (metric == "tokens_per_s_per_gpu" && same(e.time.tokens_per_s / gpus)) {
    run.tokens_per_s = measured * gpus;
  } else if (metric == "gib_per_gpu_reserved" && same(counted(MemoryCounter::kReserved))) {
    run.reserved_bytes = measured * kGiB;
  } else if (metric == "gib_per_gpu_allocated" && same(counted(MemoryCounter::kAllocated))) {
    run.allocated_bytes = measured * kGiB;
  } else if ((metric == "gib_per_gpu" || metric == "gib_per_gpu_device") && same(counted(MemoryCounter::kDevice))) {
    run.device_bytes = measured * kGiB;
  } else {
    return;
  }
  report.calibration_runs.push_back({report.rows.size() - 1, std::move(run)});
}

/// A row compared with an estimate: a published run ran, so an estimate that it does not fit is flagged.
void AddEstimatedRow(AccuracyReport& report, const Estimate& e, const json& rec, const Mapped& m,
                     const std::string& kind, const std::string& metric, double measured, double estimated) {
  AddRow(report, rec, m, kind, metric, measured, estimated);
  AddCalibrationRun(report, e, m, metric, measured, estimated);
  AccuracyRow& row = report.rows.back();
  row.fits = e.memory.fits;
  if (!row.fits) {
    const std::string fit = fmt::format("estimated not to fit ({:.1f} GiB per GPU)", e.memory.per_gpu_bytes / kGiB);
    row.note = row.note.empty() ? fit : fit + "; " + row.note;
  }
}

/// Narayanan et al. 2021 eq. 3: the TFLOP/s the paper reports (recomputation included).
double MegatronTflops(const Scenario& sc, double step_s) {
  const double B = static_cast<double>(GlobalBatch(sc)), s = sc.training.seq_len, l = sc.model.num_layers;
  const double h = sc.model.hidden_size, V = sc.model.vocab_size;
  const double flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  return flops / (step_s * sc.hardware.gpus) / 1e12;
}

void Compare(AccuracyReport& report, const json& rec) {
  const std::string id = rec.at("id").get<std::string>();
  const std::string kind = rec.at("kind").get<std::string>();
  const json& measured = rec.at("measured");
  const std::string role = rec.value("role", "");
  if (role != "calibration" && role != "validation") throw Skip{"role is neither calibration nor validation"};
  auto starts = [&](const char* prefix) { return id.rfind(prefix, 0) == 0; };

  if (kind == "param_count") {
    // "LLaMA 13B / Llama 2 13B": the last alternative names the released checkpoint.
    std::string name = rec.at("model").at("name").get<std::string>();
    if (auto slash = name.rfind(" / "); slash != std::string::npos) name = name.substr(slash + 3);
    const ModelSpec model = FindModel(name);
    const ParamCounts counts = CountParams(model);
    Mapped m{{}, "Parameter counts", "catalog model " + model.name};
    if (auto n = Number(measured, "num_params")) AddRow(report, rec, m, kind, "params", *n, counts.total);
    if (auto n = Number(measured, "num_params_million")) AddRow(report, rec, m, kind, "params", *n * 1e6, counts.total);
    if (auto n = Number(measured, "active_params")) AddRow(report, rec, m, kind, "active_params", *n, counts.active);
    return;
  }
  if (kind == "time_to_train") throw Skip{"MLPerf time-to-train: dataset tokens and GPU counts are not in the record"};
  if (starts("palm")) throw Skip{"TPU v4, not a GPU in the catalog"};
  if (starts("llamafactory")) throw Skip{"an estimate by the LLaMA-Factory authors, not a measurement"};
  if (starts("unsloth")) throw Skip{"maximum context on an unnamed GPU class; no catalog GPU to map to"};
  if (starts("korthikanti2022_fig7")) throw Skip{"activation memory as a percentage of a baseline, not a figure per GPU"};
  if (starts("korthikanti2022_22B_layer")) throw Skip{"one-layer timing (Table 4), not a training step"};

  if (starts("megatron2021_t1")) {
    const Mapped m = MegatronRecord(rec, "Megatron-LM 2021, Table 1");
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, kind, "tflops_per_gpu", Required(measured, "tflops_per_gpu", "measured"),
           MegatronTflops(m.scenario, e.time.step_s));
    return;
  }
  if (starts("megatron2021_t2")) {
    const bool zero3 = starts("megatron2021_t2_zero3");
    const Mapped m = MegatronRecord(rec, zero3 ? "Megatron-LM 2021, Table 2 ZeRO-3" : "Megatron-LM 2021, Table 2 PTD-P");
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, kind, "tflops_per_gpu", Required(measured, "tflops_per_gpu", "measured"),
           MegatronTflops(m.scenario, e.time.step_s));
    return;
  }
  if (starts("korthikanti2022") && kind == "throughput") {
    const Mapped m = MegatronRecord(rec, "Korthikanti 2022, Table 5");
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, "iteration_time", "iteration_time_s", Required(measured, "iteration_time_s", "measured"),
           e.time.step_s);
    return;
  }
  if (starts("korthikanti2022_fig1")) {
    const Mapped m = MegatronRecord(rec, "Korthikanti 2022, Figure 1");
    const Estimate e = EstimateScenario(m.scenario);
    const MemoryEstimate& mem = e.memory;
    const double states = mem[MemTerm::kWeights] + mem[MemTerm::kMasterWeights] + mem[MemTerm::kGradients] +
                          mem[MemTerm::kOptimizerStates];
    AddEstimatedRow(report, e, rec, m, kind, "params_and_optimizer_gib",
           Required(measured, "params_and_optimizer_gib_per_gpu", "measured"), states / kGiB);
    AddEstimatedRow(report, e, rec, m, kind, "activations_gib", Required(measured, "activations_gib_per_gpu", "measured"),
           mem[MemTerm::kActivations] / kGiB);
    return;
  }
  if (starts("llama3_gpu_hours")) {  // the whole run at Table 4's 16k-GPU layout, with its tokens
    Mapped m = Llama3Record(rec);
    m.source = "Published pre-training GPU-hours";
    m.scenario.training.tokens = Required(measured, "tokens", "measured");
    const Estimate e = EstimateScenario(m.scenario);
    AddRow(report, rec, m, kind, "gpu_hours", Required(measured, "gpu_hours", "measured"), e.time.gpu_hours);
    return;
  }
  if (starts("llama3_t4")) {
    const Mapped m = Llama3Record(rec);
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, kind, "tflops_per_gpu", Required(measured, "tflops_per_gpu", "measured"),
           e.time.model_tflops_per_gpu);
    return;
  }
  if (starts("mosaic")) {
    const Mapped m = MosaicRecord(rec);
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, kind, "tokens_per_s_per_gpu",
           Required(measured, "throughput_tokens_per_s_per_gpu", "measured"),
           e.time.tokens_per_s / m.scenario.hardware.gpus);
    return;
  }
  if (starts("qwen1")) {
    Mapped m = QwenRecord(rec);
    const Estimate e = EstimateScenario(m.scenario);
    if (kind == "throughput") {
      m.note += "s/iter read as one optimizer step of 8 micro-batches; ";
      AddEstimatedRow(report, e, rec, m, kind, "sec_per_iter", Required(measured, "sec_per_iter", "measured"), e.time.step_s);
    } else if (auto per_gpu = Number(measured, "memory_gb_per_gpu_inferred")) {
      m.note += "README figure is the sum over GPUs; compared per GPU; ";
      AddEstimatedRow(report, e, rec, m, kind, "gib_per_gpu", *per_gpu, e.memory.per_gpu_bytes / kGiB);
    } else {
      AddEstimatedRow(report, e, rec, m, kind, "gib_per_gpu", Required(measured, "memory_gb_as_stated", "measured"),
             e.memory.per_gpu_bytes / kGiB);
    }
    return;
  }
  if (starts("llama2")) {
    if (!rec.at("model").contains("num_layers")) throw Skip{"architecture not published (Llama 2 34B)"};
    const Mapped m = Llama2Record(rec);
    const Estimate e = EstimateScenario(m.scenario);
    AddEstimatedRow(report, e, rec, m, kind, "gpu_hours", Required(measured, "gpu_hours", "measured"), e.time.gpu_hours);
    return;
  }
  throw Skip{"no mapping for this record family"};
}

/// What a published peak-memory figure counted. nvidia-smi sees the whole process; the caching allocator's
/// reserved bytes leave out the CUDA context and library workspaces; allocated (or torchtune's "active")
/// bytes also leave out the allocator's cached free blocks. Paged optimizer states sit in CUDA unified
/// memory, outside the allocator, so neither allocator counter sees them.
/// A peak read over the whole run without resetting the counter (LitGPT prints max_memory_allocated() after
/// fit) also covers loading the weights: the larger of the load-time peak and the step peak.
double CountedBytes(const MemoryEstimate& mem, const Field& counter, bool includes_load, double fragmentation) {
  const std::string c = counter.String();
  if (c == "device") return CountedBytes(mem, MemoryCounter::kDevice, includes_load, fragmentation);
  if (c == "reserved") return CountedBytes(mem, MemoryCounter::kReserved, includes_load, fragmentation);
  if (c == "allocated") return CountedBytes(mem, MemoryCounter::kAllocated, includes_load, fragmentation);
  counter.Fail("device (nvidia-smi), reserved (torch.cuda.max_memory_reserved) or allocated "
               "(torch.cuda.max_memory_allocated, torchtune peak_memory_active)");
}

constexpr const char* kMetricsAllowed =
    "exactly one of peak_memory_gib, peak_memory_gb (with counter), tokens_per_s (all GPUs), "
    "tokens_per_s_per_gpu, sec_per_step, train_runtime_s, gpu_hours";

/// A record in the generic form: `scenario` is a scenario document, read by the scenario reader exactly as
/// `trainplan estimate` reads it, and `measured` holds one metric. A malformed record is an input error
/// naming the record's id and the field, never a skipped row.
void CompareScenarioRecord(AccuracyReport& report, const json& rec, const std::string& id) {
  const Field doc(rec, id);
  doc.CheckKeys({"id", "label", "source", "role", "kind", "published_engine", "scenario", "measured", "notes",
                 "excluded"});
  const std::string role = doc.At("role").String();
  if (role != "calibration" && role != "validation") doc.At("role").Fail("calibration or validation");
  if (doc.At("source").String().empty()) doc.At("source").Fail("the citation: URL, commit or date read, table");
  Mapped m;
  m.source = doc.At("label").String();
  m.scenario = ScenarioFromDocument(doc.At("scenario"), /*allow_paths=*/false);
  const Field measured = doc.At("measured");
  measured.RequireObject();
  measured.CheckKeys({"peak_memory_gib", "peak_memory_gb", "counter", "includes_load", "tokens_per_s",
                      "tokens_per_s_per_gpu", "sec_per_step", "train_runtime_s", "gpu_hours"});
  const Estimate e = EstimateScenario(m.scenario);
  std::vector<std::tuple<std::string, std::string, double, double>> metrics;  // kind, metric, measured, estimated
  for (const auto& [key, value] : measured.Members()) {
    if (key == "counter" || key == "includes_load") continue;
    const double v = value.Number(0, 1e15);
    if (key == "peak_memory_gib" || key == "peak_memory_gb") {
      const std::optional<Field> counter = measured.Get("counter");
      if (!counter) measured.FailMember("counter", "", "device, reserved or allocated: what the figure counted");
      const double gib = key == "peak_memory_gib" ? v : v * kGB / kGiB;
      const std::optional<Field> load = measured.Get("includes_load");
      const double fragmentation = AllocatorOverhead(m.scenario, GetFrameworkProfile(m.scenario.training.framework));
      const double counted = CountedBytes(e.memory, *counter, load && load->Bool(), fragmentation);
      metrics.emplace_back("memory", "gib_per_gpu_" + counter->String(), gib, counted / kGiB);
    } else if (key == "tokens_per_s") {
      metrics.emplace_back("throughput", "tokens_per_s", v, e.time.tokens_per_s);
    } else if (key == "tokens_per_s_per_gpu") {
      metrics.emplace_back("throughput", "tokens_per_s_per_gpu", v, e.time.tokens_per_s / m.scenario.hardware.gpus);
    } else if (key == "sec_per_step") {
      metrics.emplace_back("throughput", "sec_per_step", v, e.time.step_s);
    } else if (key == "gpu_hours") {  // the whole run: steps, start-up, failures and restarts
      if (m.scenario.training.tokens <= 0) value.Fail("a scenario that states training.tokens");
      metrics.emplace_back("gpu_hours", "gpu_hours", v, e.time.gpu_hours);
    } else {
      if (m.scenario.training.tokens <= 0) {
        value.Fail("a scenario that states training.tokens (or samples x mean_tokens_per_sample x epochs)");
      }
      metrics.emplace_back("throughput", "train_runtime_s", v, e.time.training_s);
    }
  }
  if (metrics.size() != 1) measured.Fail(kMetricsAllowed);
  if (const auto load = measured.Get("includes_load"); load && std::get<0>(metrics.front()) != "memory") {
    load->Fail("only with a peak-memory figure");
  }
  if (const auto engine = doc.Get("published_engine")) {
    // A published engine with a profile of its own runs as itself, not labelled as another.
    for (Framework f : kAllFrameworks)
      if (engine->String() == FrameworkKey(f)) engine->Fail(fmt::format("absent: {} has a profile", FrameworkKey(f)));
    m.note = fmt::format("{} has no profile: run as {}; ", engine->String(), ToString(m.scenario.training.framework));
  }
  if (const auto notes = doc.Get("notes")) m.note += notes->String();
  const auto& [kind, metric, measured_value, estimated] = metrics.front();
  if (const auto given = doc.Get("kind"); given && given->String() != kind) {
    given->Fail(fmt::format("{}, the kind of the measured metric", kind));
  }
  AddEstimatedRow(report, e, rec, m, kind, metric, measured_value, estimated);
  if (const auto engine = doc.Get("published_engine")) {
    report.rows.back().engine = fmt::format("{} (as {})", engine->String(), report.rows.back().engine);
  }
  if (const auto excluded = doc.Get("excluded")) {
    report.rows.back().excluded = excluded->String();
    if (report.rows.back().excluded.empty()) {
      excluded->Fail("why the published figure contradicts the stated run (the arithmetic or the inconsistency)");
    }
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> Absolute(std::vector<double> errors) {
  for (double& e : errors) e = std::abs(e);
  return errors;
}

/// Seconds or GPU-hours per run or step ("iteration_time_s", "sec_per_iter"), not a rate per second
/// ("tokens_per_s").
bool IsDuration(const std::string& metric) {
  return metric.starts_with("sec_per") || metric == "gpu_hours" ||
         (metric.ends_with("_s") && metric.find("_per_") == std::string::npos);
}

/// Which way a group leans: the median signed error, and what its sign means for the metric. A duration
/// (seconds, GPU-hours) over the measurement is a slow estimate, a rate (TFLOP/s, tokens/s) over it a fast one;
/// sizes (memory, parameters) are over or under.
std::string SignedBias(const std::vector<double>& errors, const std::string& kind, const std::string& metric) {
  const double median = Median(errors);
  if (std::abs(median) < 0.0005) return "0.0%";
  const bool size = kind == "memory" || kind == "param_count";
  const bool slow = IsDuration(metric) ? median > 0 : median < 0;
  return fmt::format("{:+.1f}% ({})", 100 * median, size ? (median > 0 ? "over" : "under") : (slow ? "slow" : "fast"));
}

/// Error per engine, method and kind, calibration rows apart from validation rows: a constant fitted on a row
/// says little about the rows it was not fitted on. The signed column reads every speed metric as a rate (a
/// duration's error e is the rate error 1/(1+e) - 1), so a group mixing step times and tokens/s has one lean.
std::string EngineSection(const AccuracyReport& report) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<double>> groups, rate_errors;
  for (const auto& r : report.rows) {
    if (r.kind == "param_count" || !r.excluded.empty()) continue;
    groups[{r.engine, r.method, r.kind, r.role}].push_back(std::abs(r.error));
    const bool duration = r.kind != "memory" && IsDuration(r.metric);
    rate_errors[{r.engine, r.method, r.kind, r.role}].push_back(duration ? 1 / (1 + r.error) - 1 : r.error);
  }
  std::string out = "\n## Error per engine and method\n\nCalibration rows fitted a constant of data/efficiency.json "
                    "or data/frameworks.json (each constant names them); validation rows were only compared. The "
                    "signed error of speed rows is that of the rate (a step time 10% long is -9.1%, `slow`).\n\n"
                    "| engine | method | kind | role | rows | median abs error | median signed error | max abs error |\n"
                    "|---|---|---|---|---:|---:|---:|---:|\n";
  for (const auto& [key, errors] : groups) {
    const auto& [engine, method, kind, role] = key;
    out += fmt::format("| {} | {} | {} | {} | {} | {:.1f}% | {} | {:.1f}% |\n", engine, method, kind, role,
                       errors.size(), 100 * Median(errors), SignedBias(rate_errors[key], kind, "rate"),
                       100 * *std::max_element(errors.begin(), errors.end()));
  }
  return out;
}

/// `trainplan calibrate` on the published runs: per engine and GPU generation, factors fitted on two of every
/// three calibratable rows (file order) and the error on the third before and after.
std::string CalibrationSection(const AccuracyReport& report) {
  std::vector<CalibrationRun> runs;
  for (const AccuracyCalibrationRun& r : report.calibration_runs)
    if (report.rows[r.row].excluded.empty()) runs.push_back(r.run);
  std::string out =
      "\n## Calibration on held-out rows\n\nWhat `trainplan calibrate` (docs/calibration.md) does with the rows above "
      "that it can fit (a step time, a token rate or a peak-memory counter without the load peak, excluded rows left "
      "out): per engine and GPU generation, every third row in file order is held out, the factors are fitted on the "
      "others, and the held-out rows' mean |error| is shown before (the built-in model) and after. What calibrate "
      "writes is fitted on all rows of the group, less the factors the rows cannot determine and those whose fit on "
      "the kept rows made the held-out rows worse (the reason is shown). Reproduce a group with `trainplan calibrate "
      "--runs FILE --no-write` on its records.\n\n"
      "| engine on generation | rows (time, memory) | fitted on the kept rows | held-out step time: before -> after | "
      "held-out peak memory (reserved or device): before -> after | written (fitted on all rows) | not written |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const CalibrationGroup& g : Calibrate(runs, false)) {
    int time_runs = 0, memory_runs = 0;
    for (size_t i : g.runs) time_runs += runs[i].HasTime(), memory_runs += runs[i].HasReserved();
    std::vector<std::string> refused;
    for (auto [f, name] : {std::pair{&g.fit.compute, "compute efficiency"},
                           std::pair{&g.fit.communication, "communication efficiency"},
                           std::pair{&g.fit.allocator_overhead, "allocator overhead"}}) {
      if (f->status != FactorStatus::kFitted && f->status != FactorStatus::kNoRuns)
        refused.push_back(FactorRefusal(*f, name, time_runs, g.fit.comm_share_spread));
    }
    // Mean |error| of the held-out rows, memory as reserved where counted so, else as the device counts it.
    const auto held = [&](bool memory) {
      double before = 0, after = 0;
      int n = 0;
      for (size_t k = 0; k < g.held_before.size(); ++k) {
        const RunErrors &b = g.held_before[k], &a = g.held_after[k];
        const std::optional<double> eb = memory ? (b.reserved ? b.reserved : b.device) : b.step_time;
        const std::optional<double> ea = memory ? (a.reserved ? a.reserved : a.device) : a.step_time;
        if (!eb || !ea) continue;
        before += std::abs(*eb), after += std::abs(*ea), ++n;
      }
      return n ? fmt::format("{:.1f}% -> {:.1f}% ({} row{})", 100 * before / n, 100 * after / n, n, n == 1 ? "" : "s") : std::string("-");
    };
    out += fmt::format("| {} | {} ({}, {}) | {} | {} | {} | {} | {} |\n", GroupName(g), g.runs.size(), time_runs,
                       memory_runs, g.kept_fit ? FactorsText(g.kept_fit->Factors()) : "fewer than 3 rows: none held out",
                       held(false), held(true), FactorsText(g.fit.Factors()),
                       refused.empty() ? "-" : fmt::format("{}", fmt::join(refused, "; ")));
  }
  return out;
}

}  // namespace

AccuracyReport RunAccuracy(const std::string& measurements_path) {
  std::ifstream in(measurements_path);
  if (!in) throw InputError("measurements", measurements_path, "a readable measurements.jsonl file");
  AccuracyReport report;
  std::string line;
  int line_no = 0;
  std::set<std::string> generic_ids;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json rec = ParseDocument(line, fmt::format("{} line {}", measurements_path, line_no));
    if (rec.is_object() && rec.contains("scenario")) {
      const json& id = rec.contains("id") ? rec.at("id") : json();
      if (!id.is_string() || !generic_ids.insert(id.get<std::string>()).second) {
        throw InputError(fmt::format("{} line {}: id", measurements_path, line_no), id.dump(),
                         "a string naming the record, unique in the file");
      }
      CompareScenarioRecord(report, rec, id.get<std::string>());
      continue;
    }
    const json id_value = rec.is_object() && rec.contains("id") ? rec.at("id") : json(fmt::format("line {}", line_no));
    const std::string id = id_value.is_string() ? id_value.get<std::string>() : id_value.dump();
    try {
      Compare(report, rec);
    } catch (const Skip& s) {
      report.skipped.push_back(id + ": " + s.reason);
    } catch (const std::exception& e) {
      report.skipped.push_back(id + ": " + e.what());
    }
  }
  return report;
}

std::string AccuracyMarkdown(const AccuracyReport& report) {
  // Summary groups: one per source and metric.
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;  // signed errors
  std::map<std::pair<std::string, std::string>, std::string> kinds;
  for (const auto& r : report.rows) {
    if (!r.excluded.empty()) continue;
    groups[{r.source, r.metric}].push_back(r.error);
    kinds[{r.source, r.metric}] = r.kind;
  }
  std::string out = "# Accuracy against published measurements\n\n";
  out += "Generated by `trainplan accuracy` from tests/reference/measurements.jsonl; error = "
         "(estimate - measured) / measured. Records in the generic form (a scenario document as `trainplan estimate` "
         "reads it, one measured metric and what a memory figure counted: device, reserved or allocated) are "
         "described in tests/reference/README.md; memory metrics name that counter (`gib_per_gpu_allocated`).\n\n"
         "## Summary\n\n";
  out += "The median signed error shows which way a source leans: a rate (TFLOP/s, tokens/s) above the "
         "measurement, or a duration (seconds, GPU-hours) below it, is an estimate too fast (`fast`); memory and "
         "parameter counts are `over` or `under`.\n\n";
  out += "| kind | source | metric | rows | median abs error | median signed error | mean abs error | max abs error |\n"
         "|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [key, signed_errors] : groups) {
    const std::vector<double> errors = Absolute(signed_errors);
    const double mean = std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
    out += fmt::format("| {} | {} | {} | {} | {:.1f}% | {} | {:.1f}% | {:.1f}% |\n", kinds[key], key.first,
                       key.second, errors.size(), 100 * Median(errors), SignedBias(signed_errors, kinds[key], key.second),
                       100 * mean, 100 * *std::max_element(errors.begin(), errors.end()));
  }
  out += EngineSection(report);
  out += "\n## Rows\n\n| id | role | source | metric | measured | estimated | error | note |\n"
         "|---|---|---|---|---:|---:|---:|---|\n";
  std::vector<const AccuracyRow*> excluded;
  for (const auto& r : report.rows) {
    if (!r.excluded.empty()) {
      excluded.push_back(&r);
      continue;
    }
    out += fmt::format("| {} | {} | {} | {} | {:.4g} | {:.4g} | {:+.1f}% | {} |\n", r.id, r.role, r.source, r.metric,
                       r.measured, r.estimated, 100 * r.error, r.note);
  }
  out += fmt::format("\n## Excluded rows ({})\n\nPublished figures that contradict the run their source states "
                     "(arithmetic on the stated configuration, or the source disagreeing with itself): shown with "
                     "the estimate, left out of every statistic above.\n\n", excluded.size());
  if (!excluded.empty()) {
    out += "| id | source | metric | measured | estimated | error | why excluded |\n|---|---|---|---:|---:|---:|---|\n";
  }
  for (const AccuracyRow* r : excluded) {
    out += fmt::format("| {} | {} | {} | {:.4g} | {:.4g} | {:+.1f}% | {} |\n", r->id, r->source, r->metric, r->measured,
                       r->estimated, 100 * r->error, r->excluded);
  }
  out += fmt::format("\n## Skipped records ({})\n\n", report.skipped.size());
  for (const auto& s : report.skipped) out += "- " + s + "\n";
  return out + CalibrationSection(report);
}

}  // namespace trainplan
