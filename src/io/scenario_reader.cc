#include "io/scenario_reader.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/framework.h"
#include "core/limits.h"
#include "core/units.h"
#include "io/hf_config.h"
#include "io/model_catalog.h"

namespace trainplan {

namespace {

/// Maps forgiving spellings (compared after NormalizeName) to enum values.
template <typename E>
struct Spelling {
  std::string_view normalized;
  E value;
};

template <typename E, size_t N>
E ParseEnum(const std::string& s, const std::string& field, const Spelling<E> (&spellings)[N], const char* allowed) {
  const std::string n = NormalizeName(s);
  for (const auto& sp : spellings) {
    if (sp.normalized == n) return sp.value;
  }
  throw InputError(field, s, fmt::format("one of: {}", allowed));
}

constexpr const char* kModelAllowed = "a catalog name, {\"config\": {...}} or {\"config_path\": \"...\"}";

ModelSpec ReadModel(const Field& doc, bool allow_paths) {
  const std::optional<Field> m = doc.Get("model");
  if (!m) doc.FailMember("model", "", std::string("required: ") + kModelAllowed);
  if (m->value().is_string()) {
    const std::optional<std::string> config = allow_paths ? LocalModelConfig(m->String()) : std::nullopt;
    return config ? ModelFromHfConfigFile(*config, m->path()) : FindModel(m->String());
  }
  m->RequireObject(kModelAllowed);
  m->CheckKeys({"config", "config_path", "name", "generic_config"});
  const std::optional<Field> config = m->Get("config");
  const std::optional<Field> path = m->Get("config_path");
  if (config.has_value() == path.has_value()) m->Fail("exactly one of \"config\" or \"config_path\"");
  const std::optional<Field> generic_field = m->Get("generic_config");
  const bool generic = generic_field && generic_field->Bool();  // count an unknown type as dense Llama
  ModelSpec spec;
  if (config) {
    config->RequireObject("a Hugging Face config.json object");
    spec = ModelFromHfConfig(*config, "scenario model.config", generic);
  } else {
    const std::string p = path->String();
    if (!allow_paths) path->Fail("file paths are not accepted here; send {\"config\": {...}}");
    spec = ModelFromHfConfigFile(p, path->path(), generic);
  }
  if (const auto name = m->Get("name")) spec.name = name->String();
  return spec;
}

std::vector<std::string> LinearNames(const ModelSpec& model) {
  std::vector<std::string> names;
  for (const auto& group : model.layers) {
    for (const auto& l : group.spec.linears) {
      if (std::find(names.begin(), names.end(), l.name) == names.end()) names.push_back(l.name);
    }
  }
  return names;
}

// Besides the layers' linears, PEFT adapts the input embedding and the LM head when named (all-linear
// leaves the head out).
std::vector<std::string> ReadLoraTargets(const Field& v, const ModelSpec& model) {
  std::vector<std::string> known = LinearNames(model);
  known.insert(known.end(), {"embed_tokens", "lm_head"});
  std::vector<std::string> targets;
  bool all_linear = false;
  for (const Field& item : v.Items("an array of linear-layer names, or [\"all-linear\"]")) {
    const std::string name = item.String();
    if (NormalizeName(name) == "alllinear") {  // PEFT's spelling for every linear layer
      all_linear = true;
      continue;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string allowed = "linear layers of this model: all-linear";
      for (const auto& k : known) allowed += ", " + k;
      item.Fail(allowed);
    }
    targets.push_back(name);
  }
  // Empty means every linear; all-linear beside the embedding or head keeps its own entry.
  if (all_linear && !targets.empty()) targets.push_back("all-linear");
  return targets;
}

Loss ParseLoss(const Field& v) {
  static constexpr Spelling<Loss> kSpellings[] = {
      {"standard", Loss::kStandard},       {"crossentropy", Loss::kStandard},  {"chunked", Loss::kChunked},
      {"chunkedce", Loss::kChunked},       {"fused", Loss::kFused},             {"fusedce", Loss::kFused},
      {"fusedcrossentropy", Loss::kFused}, {"fusedlinear", Loss::kFusedLinear}, {"liger", Loss::kFusedLinear},
      {"fusedlinearce", Loss::kFusedLinear}, {"cut", Loss::kCut},               {"cce", Loss::kCut},
      {"cutcrossentropy", Loss::kCut}};
  return ParseEnum(v.String(), v.path(), kSpellings,
                   "standard, chunked, fused (flash-attn cross-entropy), fused_linear (Liger), cut (Cut Cross-Entropy)");
}

/// Total training tokens: `tokens`, or samples x mean_tokens_per_sample x epochs.
double ReadTokens(const Field& t) {
  const auto tokens = t.Get("tokens");
  const auto samples = t.Get("samples");
  const auto mean = t.Get("mean_tokens_per_sample");
  const auto epochs = t.Get("epochs");
  if (tokens && (samples || mean)) {
    tokens->Fail("either training.tokens or training.samples with mean_tokens_per_sample, not both");
  }
  const double epoch_count = epochs ? epochs->Number(0, limits::kMaxEpochs) : 1.0;
  if (tokens) {
    if (epochs) epochs->Fail("used with training.samples; training.tokens counts all epochs");
    return tokens->Number(0, limits::kMaxTokens, /*lo_inclusive=*/true);
  }
  if (!samples && !mean) {
    if (epochs) epochs->Fail("used with training.samples");
    return 0;
  }
  if (!samples) t.FailMember("samples", "", "required with training.mean_tokens_per_sample");
  if (!mean) t.FailMember("mean_tokens_per_sample", "", "required with training.samples");
  const double n = static_cast<double>(samples->Int(limits::kSamples));
  const double total = n * mean->Number(0, static_cast<double>(limits::kSeqLen.hi)) * epoch_count;
  if (total > limits::kMaxTokens) {
    samples->Fail(fmt::format("samples x mean length x epochs at most {:g}", limits::kMaxTokens));
  }
  return total;
}

const LinkSpec& ReadLink(const Field& v, const GpuSpec& gpu) {
  const std::string name = v.String();
  const std::string n = NormalizeName(name);
  if (n == "nvlink" || n == "nvswitch") {
    const LinkSpec* nvlink = NvlinkOf(gpu);
    if (!nvlink) v.Fail(fmt::format("{} has no NVLink; it talks over PCIe", gpu.name));
    return *nvlink;
  }
  if (n == "pcie") {
    // GeForce drivers disable PCIe peer-to-peer.
    return FindLink(fmt::format("pcie{}{}", gpu.pcie_gen > 0 ? gpu.pcie_gen : 5, gpu.consumer ? "-nop2p" : ""));
  }
  try {
    return FindLink(name);
  } catch (const InputError& e) {
    throw InputError(v.path(), e.value(), e.allowed() + " (or \"nvlink\" / \"pcie\" for the GPU's own)");
  }
}

/// training.quantization: how a QLoRA base is stored ("nf4": bitsandbytes, "gptq": a GPTQ 4-bit checkpoint
/// with group size 128).
Quantization ParseQuantization(const std::string& s, const std::string& field) {
  static constexpr Spelling<Quantization> kSpellings[] = {
      {"nf4", Quantization::kNf4}, {"gptq", Quantization::kGptq4}, {"gptqint4", Quantization::kGptq4}};
  return ParseEnum(s, field, kSpellings, "nf4, gptq");
}

AttentionKernel ParseAttention(const std::string& s, const std::string& field) {
  static constexpr Spelling<AttentionKernel> kSpellings[] = {
      {"auto", AttentionKernel::kAuto},         {"default", AttentionKernel::kAuto},
      {"eager", AttentionKernel::kEager},       {"math", AttentionKernel::kEager},
      {"sdpa", AttentionKernel::kSdpa},         {"fa2", AttentionKernel::kFa2},
      {"flashattention2", AttentionKernel::kFa2}, {"flashattn2", AttentionKernel::kFa2},
      {"fa3", AttentionKernel::kFa3},           {"flashattention3", AttentionKernel::kFa3},
      {"flashattn3", AttentionKernel::kFa3},    {"triton", AttentionKernel::kTriton},
      {"cudnn", AttentionKernel::kCudnn},       {"fusedattention", AttentionKernel::kCudnn}};
  return ParseEnum(s, field, kSpellings, "auto, eager, sdpa, fa2, fa3, triton, cudnn");
}

int ReadInt(const Field& section, std::string_view key, IntRange range, int fallback) {
  const auto v = section.Get(key);
  return v ? static_cast<int>(v->Int(range)) : fallback;
}

TrainingObjective ParseObjective(const std::string& s, const std::string& field) {
  static constexpr Spelling<TrainingObjective> kSpellings[] = {
      {"sft", TrainingObjective::kSft},     {"supervised", TrainingObjective::kSft},
      {"dpo", TrainingObjective::kDpo},     {"orpo", TrainingObjective::kOrpo},
      {"kto", TrainingObjective::kKto},     {"simpo", TrainingObjective::kSimpo}};
  return ParseEnum(s, field, kSpellings, "sft, dpo, orpo, kto, simpo");
}

/// The objective and the samples as they are: lengths by mean and maximum (the mean defaulting to
/// mean_tokens_per_sample) or a histogram of [tokens, fraction], packing, and group_by_length. ValidateScenario checks them
/// together.
void ReadSamples(const Field& t, Training& tr) {
  const double longest = static_cast<double>(limits::kSeqLen.hi);
  if (const auto v = t.Get("objective")) tr.objective = ParseObjective(v->String(), v->path());
  if (const auto v = t.Get("packing")) tr.packing = v->Bool();
  if (const auto v = t.Get("group_by_length")) {
    tr.group_by_length = v->Bool();
    if (tr.group_by_length && tr.packing) v->Fail("false with packing (packed rows are all seq_len long)");
  }
  if (const auto v = t.Get("sample_max_tokens")) tr.sample_max_tokens = v->Number(0, longest);
  if (const auto v = t.Get("sample_mean_tokens")) {
    tr.sample_mean_tokens = v->Number(0, longest);
  } else if (const auto mean = t.Get("mean_tokens_per_sample"); mean && tr.sample_max_tokens > 0) {
    tr.sample_mean_tokens = mean->Number(0, longest);
  }
  if (const auto v = t.Get("sample_lengths")) {
    constexpr const char* kBin = "a [tokens, fraction] pair";
    for (const Field& bin : v->Items("an array of [tokens, fraction] pairs")) {
      const std::vector<Field> pair = bin.Items(kBin);
      if (pair.size() != 2) bin.Fail(kBin);
      tr.sample_lengths.emplace_back(pair[0].Number(0, longest), pair[1].Number(0, 1));
    }
    if (tr.sample_lengths.empty()) v->Fail("a non-empty array of [tokens, fraction] pairs");
  }
}

void ReadTraining(const Field& t, Training& tr, const ModelSpec& model) {
  t.CheckKeys({"method", "precision", "optimizer", "framework", "seq_len", "micro_batch", "global_batch", "tokens",
               "samples", "mean_tokens_per_sample", "epochs", "lora_rank", "lora_alpha", "lora_targets",
               "trainable_layers", "loss", "optimizer_in_backward", "activation_offloading", "dora", "double_quant",
               "quantization", "master_weights", "modules_to_save",
               "fp32_weights", "objective", "sample_mean_tokens",
               "sample_max_tokens", "sample_lengths", "packing", "group_by_length", "attention",
               "liger", "compile", "dataloader_workers", "optimizer_state_dtype", "fp8_swiglu_input", "mtp_layers",
               "moe_capacity_factor", "framework_version", "eval_interval_steps", "eval_sequences"});
  if (const auto v = t.Get("attention")) tr.attention = ParseAttention(v->String(), v->path());
  if (const auto v = t.Get("method")) tr.method = ParseMethod(v->String(), v->path());
  if (const auto v = t.Get("precision")) {
    // Lightning's "bf16-mixed" autocasts to bf16 over fp32 parameters; "bf16-true" is plain bf16.
    tr.fp32_weights = NormalizeName(v->String()) == "bf16mixed";
    tr.precision = tr.fp32_weights ? Precision::kBf16 : ParsePrecision(v->String(), v->path());
  }
  if (const auto v = t.Get("fp32_weights")) tr.fp32_weights = v->Bool();
  if (const auto v = t.Get("master_weights")) tr.master_weights = v->Bool();
  if (const auto v = t.Get("modules_to_save")) {
    for (const Field& item : v->Items("an array of module names: embed_tokens, lm_head")) {
      const std::string name = item.String();
      if (name != "embed_tokens" && name != "lm_head") item.Fail("embed_tokens or lm_head");
      tr.modules_to_save.push_back(name);
    }
  }
  if (const auto v = t.Get("loss")) tr.loss = ParseLoss(*v);
  if (const auto v = t.Get("optimizer_in_backward")) tr.optimizer_in_backward = v->Bool();
  if (const auto v = t.Get("activation_offloading")) tr.activation_offloading = v->Bool();
  if (const auto v = t.Get("dora")) tr.dora = v->Bool();
  if (const auto v = t.Get("double_quant")) tr.double_quant = v->Bool();
  if (const auto v = t.Get("quantization")) tr.quantization = ParseQuantization(v->String(), v->path());
  if (const auto v = t.Get("liger")) tr.liger = v->Bool();
  if (const auto v = t.Get("compile")) tr.compile = v->Bool();
  if (const auto v = t.Get("dataloader_workers")) tr.dataloader_workers = v->Int({0, 256});
  if (const auto v = t.Get("optimizer_state_dtype")) {
    const std::string dtype = NormalizeName(v->String());
    if (dtype != "fp32" && dtype != "bf16") throw InputError(v->path(), v->Shown(), "fp32 or bf16");
    tr.bf16_optimizer_states = dtype == "bf16";
  }
  if (const auto v = t.Get("fp8_swiglu_input")) tr.fp8_swiglu_input = v->Bool();
  if (const auto v = t.Get("mtp_layers")) tr.mtp_layers = v->Int(limits::kMtpLayers);
  if (const auto v = t.Get("eval_interval_steps")) tr.eval_interval_steps = v->Int(limits::kEvalIntervalSteps);
  if (const auto v = t.Get("eval_sequences")) tr.eval_sequences = v->Int(limits::kEvalSequences);
  if (const auto v = t.Get("moe_capacity_factor")) tr.moe_capacity_factor = v->Number(0, limits::kMaxMoeCapacityFactor, true);
  if (const auto v = t.Get("framework_version")) {
    if (!IsVersion(v->String())) v->Fail("a release number of digits and dots, such as \"0.3.13\"");
    tr.framework_version = v->String();
  }
  if (const auto v = t.Get("optimizer")) tr.optimizer = ParseOptimizer(v->String(), v->path());
  if (const auto v = t.Get("seq_len")) tr.seq_len = v->Int(limits::kSeqLen);
  if (const auto v = t.Get("micro_batch")) tr.micro_batch = v->Int(limits::kMicroBatch);
  if (const auto v = t.Get("global_batch")) tr.global_batch = v->Int(limits::kGlobalBatch);
  tr.tokens = ReadTokens(t);
  if (const auto v = t.Get("lora_rank")) tr.lora_rank = v->Int(limits::kLoraRank);
  if (const auto v = t.Get("lora_alpha")) tr.lora_alpha = v->Number(0, limits::kMaxLoraAlpha);
  if (const auto v = t.Get("lora_targets")) tr.lora_targets = ReadLoraTargets(*v, model);
  if (const auto v = t.Get("trainable_layers")) tr.trainable_layers = v->Int({1, std::max<int64_t>(1, model.num_layers)});
  ReadSamples(t, tr);
}

}  // namespace

Method ParseMethod(const std::string& s, const std::string& field) {
  static constexpr Spelling<Method> kSpellings[] = {
      {"pretrain", Method::kPretrain},   {"pretraining", Method::kPretrain},
      {"pt", Method::kPretrain},         {"cpt", Method::kPretrain},
      {"continuedpretraining", Method::kPretrain},
      {"full", Method::kFull},           {"fullfinetune", Method::kFull},
      {"fullfinetuning", Method::kFull}, {"fullft", Method::kFull},
      {"sft", Method::kFull},            {"finetune", Method::kFull},
      {"freeze", Method::kFreeze},       {"frozen", Method::kFreeze},
      {"lora", Method::kLora},           {"qlora", Method::kQlora}};
  return ParseEnum(s, field, kSpellings, "pretrain, full, freeze, lora, qlora");
}

Precision ParsePrecision(const std::string& s, const std::string& field) {
  static constexpr Spelling<Precision> kSpellings[] = {
      {"bf16", Precision::kBf16},    {"bfloat16", Precision::kBf16}, {"ampbf16", Precision::kBf16},
      {"fp16", Precision::kFp16},    {"float16", Precision::kFp16},  {"half", Precision::kFp16},
      {"ampfp16", Precision::kFp16}, {"fp32", Precision::kFp32},     {"float32", Precision::kFp32},
      {"fp8", Precision::kFp8},      {"float8", Precision::kFp8},    {"bf16true", Precision::kBf16}};
  return ParseEnum(s, field, kSpellings, "bf16, bf16-mixed (fp32 weights), fp16, fp32, fp8");
}

Optimizer ParseOptimizer(const std::string& s, const std::string& field) {
  static constexpr Spelling<Optimizer> kSpellings[] = {
      {"adamw", Optimizer::kAdamW},          {"adam", Optimizer::kAdamW},
      {"adamwtorch", Optimizer::kAdamW},     {"adamwtorchfused", Optimizer::kAdamW},
      {"adamw8bit", Optimizer::kAdamW8bit},  {"8bitadamw", Optimizer::kAdamW8bit},
      {"adam8bit", Optimizer::kAdamW8bit},   {"pagedadamw8bit", Optimizer::kPagedAdamW8bit},
      {"pagedadamw", Optimizer::kPagedAdamW}, {"pagedadamw32bit", Optimizer::kPagedAdamW},
      {"pagedadam", Optimizer::kPagedAdamW},  {"pagedadam8bit", Optimizer::kPagedAdamW8bit},
      {"adamwbnb8bit", Optimizer::kAdamW8bit}, {"bnbadamw8bit", Optimizer::kAdamW8bit},
      {"sgd", Optimizer::kSgdMomentum},      {"sgdmomentum", Optimizer::kSgdMomentum},
      {"momentum", Optimizer::kSgdMomentum}, {"adafactor", Optimizer::kAdafactor}};
  return ParseEnum(s, field, kSpellings, "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, adafactor");
}

Recompute ParseRecompute(const std::string& s, const std::string& field) {
  static constexpr Spelling<Recompute> kSpellings[] = {
      {"none", Recompute::kNone},         {"off", Recompute::kNone},  {"no", Recompute::kNone},
      {"false", Recompute::kNone},        {"selective", Recompute::kSelective},
      {"full", Recompute::kFull},         {"on", Recompute::kFull},   {"true", Recompute::kFull},
      {"gradientcheckpointing", Recompute::kFull}};
  return ParseEnum(s, field, kSpellings, "none, selective, full");
}

PipelineSchedule ParsePipelineSchedule(const std::string& s, const std::string& field) {
  static constexpr Spelling<PipelineSchedule> kSpellings[] = {{"1f1b", PipelineSchedule::k1F1B},
                                                              {"dualpipe", PipelineSchedule::kDualPipe},
                                                              {"zb1p", PipelineSchedule::kZeroBubble1P}};
  return ParseEnum(s, field, kSpellings, "1f1b, dualpipe, zb1p");
}

MoeDispatcher ParseMoeDispatcher(const std::string& s, const std::string& field) {
  static constexpr Spelling<MoeDispatcher> kSpellings[] = {{"alltoall", MoeDispatcher::kAllToAll},
                                                           {"flex", MoeDispatcher::kFlex}};
  return ParseEnum(s, field, kSpellings, "alltoall, flex");
}

CpComm ParseCpComm(const std::string& s, const std::string& field) {
  static constexpr Spelling<CpComm> kSpellings[] = {
      {"p2p", CpComm::kP2p}, {"allgather", CpComm::kAllGather}, {"a2a", CpComm::kAllToAll}};
  return ParseEnum(s, field, kSpellings, "p2p, all_gather, a2a");
}

Offload ParseOffload(const std::string& s, const std::string& field) {
  static constexpr Spelling<Offload> kSpellings[] = {
      {"none", Offload::kNone},
      {"off", Offload::kNone},
      {"no", Offload::kNone},
      {"optimizer", Offload::kOptimizer},
      {"cpu", Offload::kOptimizer},
      {"optimizer+params", Offload::kOptimizerAndParams},
      {"optimizerandparams", Offload::kOptimizerAndParams},
      {"optimizer+parameters", Offload::kOptimizerAndParams},
      {"params", Offload::kOptimizerAndParams},
      {"all", Offload::kOptimizerAndParams}};
  return ParseEnum(s, field, kSpellings, "none, optimizer, optimizer+params");
}

Framework ParseFramework(const std::string& s, const std::string& field) {
  static constexpr Spelling<Framework> kSpellings[] = {
      {"hf", Framework::kHfTrainer},           {"hftrainer", Framework::kHfTrainer},
      {"transformers", Framework::kHfTrainer}, {"huggingface", Framework::kHfTrainer},
      {"trainer", Framework::kHfTrainer},      {"peft", Framework::kHfTrainer},
      {"torchtune", Framework::kTorchtune},    {"unsloth", Framework::kUnsloth},
      {"deepspeed", Framework::kDeepSpeed},    {"ds", Framework::kDeepSpeed},
      {"fsdp", Framework::kFsdp},              {"fsdp2", Framework::kFsdp},
      {"pytorchfsdp", Framework::kFsdp},       {"megatron", Framework::kMegatron},
      {"megatronlm", Framework::kMegatron},    {"megatroncore", Framework::kMegatron},
      {"mcore", Framework::kMegatron},         {"nemo", Framework::kMegatron},
      {"litgpt", Framework::kLitGpt},          {"lightning", Framework::kLitGpt},
      {"torchtitan", Framework::kTorchtitan}};
  return ParseEnum(s, field, kSpellings, "hf, torchtune, unsloth, deepspeed, fsdp, megatron, litgpt, torchtitan");
}

const GpuSpec& ReadGpu(const Field& v) {
  const std::string name = v.String();
  try {
    return FindGpu(name);
  } catch (const InputError& e) {
    throw InputError(v.path(), e.value(), e.allowed());
  }
}

void ReadStrategy(const Field& st, Strategy& sg) {
  st.CheckKeys({"tp", "pp", "dp", "cp", "ep", "zero", "recompute", "sequence_parallel", "offload", "flash_attention",
                "interleave", "tp_comm_overlap", "pp_comm_overlap", "pipeline_schedule", "etp", "moe_a2a_overlap",
                "moe_shared_expert_overlap", "moe_dispatcher", "cp_comm", "reduce_bucket_elements"});
  sg.tp = ReadInt(st, "tp", limits::kParallel, sg.tp);
  sg.pp = ReadInt(st, "pp", limits::kParallel, sg.pp);
  sg.dp = ReadInt(st, "dp", limits::kParallel, sg.dp);
  sg.cp = ReadInt(st, "cp", limits::kParallel, sg.cp);
  sg.ep = ReadInt(st, "ep", limits::kParallel, sg.ep);
  sg.etp = ReadInt(st, "etp", limits::kParallel, sg.etp);
  sg.interleave = ReadInt(st, "interleave", limits::kParallel, sg.interleave);
  sg.zero = ReadInt(st, "zero", limits::kZeroStage, sg.zero);
  if (const auto v = st.Get("sequence_parallel")) sg.sequence_parallel = v->Bool();
  if (const auto v = st.Get("flash_attention")) sg.flash_attention = v->Bool();
  if (const auto v = st.Get("tp_comm_overlap")) sg.tp_comm_overlap = v->Bool();
  if (const auto v = st.Get("pp_comm_overlap")) sg.pp_comm_overlap = v->Bool();
  if (const auto v = st.Get("moe_a2a_overlap")) sg.moe_a2a_overlap = v->Bool();
  if (const auto v = st.Get("moe_shared_expert_overlap")) sg.moe_shared_expert_overlap = v->Bool();
  if (const auto v = st.Get("offload")) sg.offload = ParseOffload(v->String(), v->path());
  if (const auto v = st.Get("recompute")) sg.recompute = ParseRecompute(v->String(), v->path());
  if (const auto v = st.Get("pipeline_schedule"))
    sg.pipeline_schedule = ParsePipelineSchedule(v->String(), v->path());
  if (const auto v = st.Get("moe_dispatcher")) sg.moe_dispatcher = ParseMoeDispatcher(v->String(), v->path());
  if (const auto v = st.Get("cp_comm")) sg.cp_comm = ParseCpComm(v->String(), v->path());
  if (const auto v = st.Get("reduce_bucket_elements")) {
    const nlohmann::json& x = v->value();
    if (x.is_string() && x.get<std::string>() == "auto") {
      sg.reduce_bucket_elements = kReduceBucketAuto;
    } else if (x.is_number() && x.get<double>() >= 1 && x.get<double>() <= limits::kMaxReduceBucketElements) {
      sg.reduce_bucket_elements = x.get<double>();
    } else {
      v->Fail(fmt::format("\"auto\" or a number of elements in [1, {:g}]", limits::kMaxReduceBucketElements));
    }
  }
}

void ReadHardware(const Field& h, Hardware& hw, const Strategy& sg) {
  h.CheckKeys({"gpu", "gpus", "gpus_per_node", "links", "usable_memory_fraction", "host_ram_gb"});
  const auto gpu = h.Get("gpu");
  hw.gpu = gpu ? ReadGpu(*gpu) : FindGpu("h100-sxm");
  // Absent gpus: as many as the strategy asks for (dp defaults to 1).
  const int64_t implied = int64_t{sg.tp} * sg.pp * sg.cp * std::max(sg.dp, 1);
  hw.gpus = ReadInt(h, "gpus", limits::kGpus, static_cast<int>(std::min<int64_t>(implied, limits::kGpus.hi)));
  hw.gpus_per_node = ReadInt(h, "gpus_per_node", limits::kGpusPerNode, std::min(hw.gpus, DefaultGpusPerNode(hw.gpu)));
  const Field links = h.Section("links");
  links.CheckKeys({"intra_node", "inter_node"});
  const auto intra = links.Get("intra_node");
  const auto inter = links.Get("inter_node");
  hw.intra_node = intra ? ReadLink(*intra, hw.gpu) : DefaultIntraNodeLink(hw.gpu);
  hw.inter_node = inter ? ReadLink(*inter, hw.gpu) : DefaultInterNodeLink(hw.gpu);
  if (const auto v = h.Get("usable_memory_fraction"))
    hw.usable_memory_fraction = v->Number(kMinUsableMemoryFraction, 1, /*lo_inclusive=*/true);
  if (const auto v = h.Get("host_ram_gb")) hw.host_ram_bytes = v->Number(0, kMaxHostRamGb) * kGB;
}

namespace {

// training.attention names the kernel; strategy.flash_attention (older files) only says fused or not. A named
// kernel sets it; the two may not disagree.
void ReconcileAttention(const Field& st, const Training& tr, Strategy& sg) {
  if (tr.attention == AttentionKernel::kAuto) return;
  const bool fused = tr.attention != AttentionKernel::kEager;
  if (const auto v = st.Get("flash_attention"); v && v->Bool() != fused) {
    throw InputError(v->path(), v->Shown(),
                     fmt::format("{} to agree with training.attention {} (or leave it out)", fused ? "true" : "false",
                                 AttentionKernelKey(tr.attention)));
  }
  sg.flash_attention = fused;
}

}  // namespace

void CheckScenarioShape(const Field& doc) {
  if (!doc.IsObject()) {
    throw InputError(doc.path().empty() ? "scenario" : doc.path(), doc.Shown(),
                     "a JSON object with model, training, hardware, strategy");
  }
  doc.CheckKeys({"model", "training", "hardware", "strategy", "description"});
}

Scenario ScenarioFromDocument(const Field& doc, bool allow_paths) {
  CheckScenarioShape(doc);
  const Field t = doc.Section("training");
  const Field h = doc.Section("hardware");
  const Field st = doc.Section("strategy");
  if (const auto d = doc.Get("description")) d->String();

  Scenario s;
  s.model = ReadModel(doc, allow_paths);
  ReadTraining(t, s.training, s.model);
  ReadStrategy(st, s.strategy);
  ReconcileAttention(st, s.training, s.strategy);
  ReadHardware(h, s.hardware, s.strategy);
  const auto framework = t.Get("framework");
  s.training.framework = framework ? ParseFramework(framework->String(), framework->path())
                                   : DefaultFramework(s.training.method, s.hardware.gpus, s.hardware.gpus_per_node);
  const FrameworkProfile& profile = GetFrameworkProfile(s.training.framework);
  if (!st.Has("recompute")) s.strategy.recompute = profile.default_recompute;
  // Megatron's distributed optimizer is ZeRO-1; `zero: 0` asks for the plain one.
  if (!st.Has("zero") && profile.distributed_optimizer) s.strategy.zero = 1;
  if (const auto v = st.Get("reduce_bucket_elements"); v && profile.reduce_bucket_elements == 0)
    v->Fail(fmt::format("absent: {} keeps no gradient reduce bucket (only deepspeed does)", profile.name));
  ValidateScenario(s);
  return s;
}

Scenario ScenarioFromJson(const nlohmann::json& doc, bool allow_paths) {
  return ScenarioFromDocument(Field(doc, ""), allow_paths);
}

}  // namespace trainplan
