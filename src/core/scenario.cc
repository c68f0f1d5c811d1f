#include "core/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/text_io.h"
#include "core/framework.h"
#include "io/model_catalog.h"
#include "core/units.h"

namespace trainplan {

namespace {

using nlohmann::json;

// Upper bounds that no real job reaches: larger values are typos (an extra zero, bytes for tokens).
constexpr int64_t kMaxSeqLen = 10'000'000;
constexpr int64_t kMaxGpus = 1'000'000;
constexpr int64_t kMaxGpusPerNode = 1024;
constexpr int64_t kMaxBatch = 100'000'000;
constexpr int64_t kMaxLoraRank = 65536;
constexpr double kMaxTokens = 1e16;  // ~600x the 15.6T tokens of Llama 3 405B
constexpr double kMaxEpochs = 10000;

std::string Show(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::string Join(std::initializer_list<std::string_view> items) {
  std::string out;
  for (auto item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

/// Rejects keys outside `allowed`, naming the key and listing what is allowed.
void CheckKeys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw InputError(path.empty() ? key : path + "." + key, Show(value),
                       fmt::format("unknown key; allowed keys: {}", Join(allowed)));
    }
  }
}

const json* Member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json& ObjectAt(const json& parent, const char* key, const std::string& field) {
  static const json kEmpty = json::object();
  const json* v = Member(parent, key);
  if (!v) return kEmpty;
  if (!v->is_object()) throw InputError(field, v->dump(), "a JSON object");
  return *v;
}

int64_t IntIn(const json& v, const std::string& field, int64_t lo, int64_t hi) {
  const std::string allowed = fmt::format("an integer from {} to {}", lo, hi);
  if (!v.is_number()) throw InputError(field, v.dump(), allowed);
  const double d = v.get<double>();
  if (std::floor(d) != d || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    throw InputError(field, v.dump(), allowed);
  }
  return static_cast<int64_t>(d);
}

double NumberIn(const json& v, const std::string& field, double lo_exclusive, double hi) {
  const std::string allowed = fmt::format("a number greater than {} and at most {:g}", lo_exclusive, hi);
  if (!v.is_number()) throw InputError(field, v.dump(), allowed);
  const double d = v.get<double>();
  if (!(d > lo_exclusive) || d > hi) throw InputError(field, v.dump(), allowed);
  return d;
}

bool Bool(const json& v, const std::string& field) {
  if (!v.is_boolean()) throw InputError(field, v.dump(), "true or false");
  return v.get<bool>();
}

std::string String(const json& v, const std::string& field) {
  if (!v.is_string()) throw InputError(field, v.dump(), "a string");
  return v.get<std::string>();
}

/// Reads section.key with `read` when present.
template <typename Read>
void Optional(const json& section, const char* key, const std::string& path, Read read) {
  if (const json* v = Member(section, key)) read(*v, path + "." + key);
}

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

ModelSpec ReadModel(const json& doc, bool allow_paths) {
  const json* m = Member(doc, "model");
  if (!m) throw InputError("model", "", "required: a catalog name, {\"config\": {...}} or {\"config_path\": \"...\"}");
  if (m->is_string()) return FindModel(m->get<std::string>());
  if (!m->is_object()) {
    throw InputError("model", m->dump(), "a catalog name, {\"config\": {...}} or {\"config_path\": \"...\"}");
  }
  CheckKeys(*m, "model", {"config", "config_path", "name"});
  const json* config = Member(*m, "config");
  const json* path = Member(*m, "config_path");
  if ((config != nullptr) == (path != nullptr)) {
    throw InputError("model", m->dump(), "exactly one of \"config\" or \"config_path\"");
  }
  ModelSpec spec;
  if (config) {
    if (!config->is_object()) throw InputError("model.config", config->dump(), "a Hugging Face config.json object");
    spec = ModelFromHfConfig(*config, "scenario model.config");
  } else {
    const std::string p = String(*path, "model.config_path");
    if (!allow_paths) throw InputError("model.config_path", p, "file paths are not accepted here; send {\"config\": {...}}");
    spec = ModelFromHfConfig(ReadJsonFile(p, "model.config_path", "a readable Hugging Face config.json file"), p);
  }
  if (const json* name = Member(*m, "name")) spec.name = String(*name, "model.name");
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

std::vector<std::string> ReadLoraTargets(const json& v, const std::string& field, const ModelSpec& model) {
  if (!v.is_array()) throw InputError(field, v.dump(), "an array of linear-layer names, or [\"all-linear\"]");
  const std::vector<std::string> known = LinearNames(model);
  std::vector<std::string> targets;
  for (const auto& item : v) {
    const std::string name = String(item, field);
    if (NormalizeName(name) == "alllinear") return {};  // PEFT's spelling for every linear layer
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string allowed = "linear layers of this model: all-linear";
      for (const auto& k : known) allowed += ", " + k;
      throw InputError(field, name, allowed);
    }
    targets.push_back(name);
  }
  return targets;
}

/// Total training tokens: `tokens`, or samples x mean_tokens_per_sample x epochs.
double ReadTokens(const json& t) {
  const json* tokens = Member(t, "tokens");
  const json* samples = Member(t, "samples");
  const json* mean = Member(t, "mean_tokens_per_sample");
  const json* epochs = Member(t, "epochs");
  if (tokens && (samples || mean)) {
    throw InputError("training.tokens", Show(*tokens),
                     "either training.tokens or training.samples with mean_tokens_per_sample, not both");
  }
  const double epoch_count = epochs ? NumberIn(*epochs, "training.epochs", 0, kMaxEpochs) : 1.0;
  if (tokens) {
    if (epochs) {
      throw InputError("training.epochs", Show(*epochs), "used with training.samples; training.tokens counts all epochs");
    }
    const double d = tokens->is_number() ? tokens->get<double>() : -1;
    if (!tokens->is_number() || d < 0 || d > kMaxTokens) {
      throw InputError("training.tokens", tokens->dump(), fmt::format("a number from 0 to {:g}", kMaxTokens));
    }
    return d;
  }
  if (!samples && !mean) {
    if (epochs) throw InputError("training.epochs", Show(*epochs), "used with training.samples");
    return 0;
  }
  if (!samples) throw InputError("training.samples", "", "required with training.mean_tokens_per_sample");
  if (!mean) throw InputError("training.mean_tokens_per_sample", "", "required with training.samples");
  const double n = static_cast<double>(IntIn(*samples, "training.samples", 1, 10'000'000'000'000LL));
  const double total = n * NumberIn(*mean, "training.mean_tokens_per_sample", 0, kMaxSeqLen) * epoch_count;
  if (total > kMaxTokens) {
    throw InputError("training.samples", Show(*samples), fmt::format("samples x mean length x epochs at most {:g}", kMaxTokens));
  }
  return total;
}

const LinkSpec& ReadLink(const json& v, const std::string& field, const GpuSpec& gpu) {
  const std::string name = String(v, field);
  const std::string n = NormalizeName(name);
  if (n == "nvlink" || n == "nvswitch") {
    const LinkSpec* nvlink = NvlinkOf(gpu);
    if (!nvlink) throw InputError(field, name, fmt::format("{} has no NVLink; it talks over PCIe", gpu.name));
    return *nvlink;
  }
  if (n == "pcie") {
    // GeForce drivers disable PCIe peer-to-peer.
    return FindLink(fmt::format("pcie{}{}", gpu.pcie_gen > 0 ? gpu.pcie_gen : 5, gpu.consumer ? "-nop2p" : ""));
  }
  try {
    return FindLink(name);
  } catch (const InputError& e) {
    throw InputError(field, e.value(), e.allowed() + " (or \"nvlink\" / \"pcie\" for the GPU's own)");
  }
}

bool IsMoe(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(), [](const LayerGroup& g) { return g.spec.is_moe(); });
}

int64_t DataParallel(const Scenario& s) {
  if (s.strategy.dp > 0) return s.strategy.dp;
  const int64_t model_parallel = int64_t{s.strategy.tp} * s.strategy.pp * s.strategy.cp;
  return model_parallel > 0 ? s.hardware.gpus / model_parallel : 0;
}

}  // namespace

const char* ToString(Method m) {
  switch (m) {
    case Method::kPretrain: return "pretrain";
    case Method::kFull: return "full";
    case Method::kFreeze: return "freeze";
    case Method::kLora: return "lora";
    case Method::kQlora: return "qlora";
  }
  return "?";
}

const char* ToString(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp32: return "fp32";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

const char* ToString(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kAdamW8bit: return "adamw-8bit";
    case Optimizer::kSgdMomentum: return "sgd";
    case Optimizer::kAdafactor: return "adafactor";
  }
  return "?";
}

const char* ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* ToString(Offload o) {
  switch (o) {
    case Offload::kNone: return "none";
    case Offload::kOptimizer: return "optimizer";
    case Offload::kOptimizerAndParams: return "optimizer+params";
  }
  return "?";
}

const char* ToString(Framework f) {
  switch (f) {
    case Framework::kHfTrainer: return "hf";
    case Framework::kTorchtune: return "torchtune";
    case Framework::kUnsloth: return "unsloth";
    case Framework::kDeepSpeed: return "deepspeed";
    case Framework::kFsdp: return "fsdp";
    case Framework::kMegatron: return "megatron";
  }
  return "?";
}

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
      {"fp8", Precision::kFp8},      {"float8", Precision::kFp8}};
  return ParseEnum(s, field, kSpellings, "bf16, fp16, fp32, fp8");
}

Optimizer ParseOptimizer(const std::string& s, const std::string& field) {
  static constexpr Spelling<Optimizer> kSpellings[] = {
      {"adamw", Optimizer::kAdamW},          {"adam", Optimizer::kAdamW},
      {"adamwtorch", Optimizer::kAdamW},     {"adamwtorchfused", Optimizer::kAdamW},
      {"adamw8bit", Optimizer::kAdamW8bit},  {"8bitadamw", Optimizer::kAdamW8bit},
      {"adam8bit", Optimizer::kAdamW8bit},   {"pagedadamw8bit", Optimizer::kAdamW8bit},
      {"adamwbnb8bit", Optimizer::kAdamW8bit}, {"bnbadamw8bit", Optimizer::kAdamW8bit},
      {"sgd", Optimizer::kSgdMomentum},      {"sgdmomentum", Optimizer::kSgdMomentum},
      {"momentum", Optimizer::kSgdMomentum}, {"adafactor", Optimizer::kAdafactor}};
  return ParseEnum(s, field, kSpellings, "adamw, adamw-8bit, sgd, adafactor");
}

Recompute ParseRecompute(const std::string& s, const std::string& field) {
  static constexpr Spelling<Recompute> kSpellings[] = {
      {"none", Recompute::kNone},         {"off", Recompute::kNone},  {"no", Recompute::kNone},
      {"false", Recompute::kNone},        {"selective", Recompute::kSelective},
      {"full", Recompute::kFull},         {"on", Recompute::kFull},   {"true", Recompute::kFull},
      {"gradientcheckpointing", Recompute::kFull}};
  return ParseEnum(s, field, kSpellings, "none, selective, full");
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
      {"mcore", Framework::kMegatron},         {"nemo", Framework::kMegatron}};
  return ParseEnum(s, field, kSpellings, "hf, torchtune, unsloth, deepspeed, fsdp, megatron");
}

Scenario ScenarioFromJson(const json& doc, bool allow_paths) {
  if (!doc.is_object()) throw InputError("scenario", Show(doc), "a JSON object with model, training, hardware, strategy");
  CheckKeys(doc, "", {"model", "training", "hardware", "strategy", "description"});
  const json& t = ObjectAt(doc, "training", "training");
  const json& h = ObjectAt(doc, "hardware", "hardware");
  const json& st = ObjectAt(doc, "strategy", "strategy");
  CheckKeys(t, "training",
            {"method", "precision", "optimizer", "framework", "seq_len", "micro_batch", "global_batch", "tokens",
             "samples", "mean_tokens_per_sample", "epochs", "lora_rank", "lora_alpha", "lora_targets",
             "trainable_layers"});
  CheckKeys(h, "hardware", {"gpu", "gpus", "gpus_per_node", "links"});
  CheckKeys(st, "strategy",
            {"tp", "pp", "dp", "cp", "ep", "zero", "recompute", "sequence_parallel", "offload", "flash_attention",
             "interleave"});

  if (const json* d = Member(doc, "description")) String(*d, "description");

  Scenario s;
  s.model = ReadModel(doc, allow_paths);

  Training& tr = s.training;
  Optional(t, "method", "training", [&](const json& v, const std::string& f) { tr.method = ParseMethod(String(v, f), f); });
  Optional(t, "precision", "training",
           [&](const json& v, const std::string& f) { tr.precision = ParsePrecision(String(v, f), f); });
  Optional(t, "optimizer", "training",
           [&](const json& v, const std::string& f) { tr.optimizer = ParseOptimizer(String(v, f), f); });
  Optional(t, "seq_len", "training", [&](const json& v, const std::string& f) { tr.seq_len = IntIn(v, f, 1, kMaxSeqLen); });
  Optional(t, "micro_batch", "training",
           [&](const json& v, const std::string& f) { tr.micro_batch = IntIn(v, f, 1, kMaxBatch); });
  Optional(t, "global_batch", "training",
           [&](const json& v, const std::string& f) { tr.global_batch = IntIn(v, f, 0, kMaxBatch); });
  tr.tokens = ReadTokens(t);
  Optional(t, "lora_rank", "training",
           [&](const json& v, const std::string& f) { tr.lora_rank = IntIn(v, f, 1, kMaxLoraRank); });
  Optional(t, "lora_alpha", "training",
           [&](const json& v, const std::string& f) { tr.lora_alpha = NumberIn(v, f, 0, 1e6); });
  Optional(t, "lora_targets", "training",
           [&](const json& v, const std::string& f) { tr.lora_targets = ReadLoraTargets(v, f, s.model); });
  Optional(t, "trainable_layers", "training", [&](const json& v, const std::string& f) {
    tr.trainable_layers = IntIn(v, f, 1, std::max<int64_t>(1, s.model.num_layers));
  });

  Strategy& sg = s.strategy;
  auto parallel = [&](const char* key, int& out) {
    Optional(st, key, "strategy",
             [&](const json& v, const std::string& f) { out = static_cast<int>(IntIn(v, f, 1, kMaxGpus)); });
  };
  parallel("tp", sg.tp);
  parallel("pp", sg.pp);
  parallel("dp", sg.dp);
  parallel("cp", sg.cp);
  parallel("ep", sg.ep);
  parallel("interleave", sg.interleave);
  Optional(st, "zero", "strategy", [&](const json& v, const std::string& f) { sg.zero = static_cast<int>(IntIn(v, f, 0, 3)); });
  Optional(st, "sequence_parallel", "strategy",
           [&](const json& v, const std::string& f) { sg.sequence_parallel = Bool(v, f); });
  Optional(st, "flash_attention", "strategy",
           [&](const json& v, const std::string& f) { sg.flash_attention = Bool(v, f); });
  Optional(st, "offload", "strategy", [&](const json& v, const std::string& f) { sg.offload = ParseOffload(String(v, f), f); });

  Hardware& hw = s.hardware;
  const std::string gpu_name = Member(h, "gpu") ? String(h["gpu"], "hardware.gpu") : std::string("h100-sxm");
  try {
    hw.gpu = FindGpu(gpu_name);
  } catch (const InputError& e) {
    throw InputError("hardware.gpu", e.value(), e.allowed());
  }
  // Absent gpus: as many as the strategy asks for (dp defaults to 1).
  const int64_t implied = int64_t{sg.tp} * sg.pp * sg.cp * std::max(sg.dp, 1);
  hw.gpus = static_cast<int>(Member(h, "gpus") ? IntIn(h["gpus"], "hardware.gpus", 1, kMaxGpus)
                                              : std::min<int64_t>(implied, kMaxGpus));
  hw.gpus_per_node = static_cast<int>(Member(h, "gpus_per_node")
                                          ? IntIn(h["gpus_per_node"], "hardware.gpus_per_node", 1, kMaxGpusPerNode)
                                          : std::min(hw.gpus, 8));
  const json& links = ObjectAt(h, "links", "hardware.links");
  CheckKeys(links, "hardware.links", {"intra_node", "inter_node"});
  hw.intra_node = Member(links, "intra_node") ? ReadLink(links["intra_node"], "hardware.links.intra_node", hw.gpu)
                                              : DefaultIntraNodeLink(hw.gpu);
  hw.inter_node = Member(links, "inter_node") ? ReadLink(links["inter_node"], "hardware.links.inter_node", hw.gpu)
                                              : DefaultInterNodeLink(hw.gpu);

  tr.framework = Member(t, "framework") ? ParseFramework(String(t["framework"], "training.framework"))
                                        : DefaultFramework(tr.method, hw.gpus, hw.gpus_per_node);
  sg.recompute = Member(st, "recompute") ? ParseRecompute(String(st["recompute"], "strategy.recompute"))
                                         : GetFrameworkProfile(tr.framework).default_recompute;

  ValidateScenario(s);
  return s;
}

void ValidateScenario(Scenario& s) {
  const ModelSpec& m = s.model;
  Training& tr = s.training;
  Hardware& hw = s.hardware;
  Strategy& sg = s.strategy;
  auto num = [](auto v) { return std::to_string(v); };

  if (m.num_layers < 1 || m.layers.empty()) throw InputError("model", m.name, "a model with at least one layer");
  if (tr.seq_len < 1 || tr.seq_len > kMaxSeqLen) {
    throw InputError("training.seq_len", num(tr.seq_len), fmt::format("an integer from 1 to {}", kMaxSeqLen));
  }
  if (tr.micro_batch < 1 || tr.micro_batch > kMaxBatch) {
    throw InputError("training.micro_batch", num(tr.micro_batch), fmt::format("an integer from 1 to {}", kMaxBatch));
  }
  if (tr.global_batch < 0) throw InputError("training.global_batch", num(tr.global_batch), "0 (derived) or a positive integer");
  if (!(tr.tokens >= 0) || tr.tokens > kMaxTokens) {
    throw InputError("training.tokens", fmt::format("{:g}", tr.tokens), fmt::format("a number from 0 to {:g}", kMaxTokens));
  }
  if (hw.gpus < 1 || hw.gpus > kMaxGpus) {
    throw InputError("hardware.gpus", num(hw.gpus), fmt::format("an integer from 1 to {}", kMaxGpus));
  }
  if (hw.gpus_per_node < 1 || hw.gpus_per_node > kMaxGpusPerNode) {
    throw InputError("hardware.gpus_per_node", num(hw.gpus_per_node),
                     fmt::format("an integer from 1 to {}", kMaxGpusPerNode));
  }
  if (hw.gpus > hw.gpus_per_node && hw.gpus % hw.gpus_per_node != 0) {
    throw InputError("hardware.gpus", num(hw.gpus),
                     fmt::format("a multiple of hardware.gpus_per_node ({}) when the job spans nodes", hw.gpus_per_node));
  }
  const std::pair<const char*, int> sizes[] = {{"strategy.tp", sg.tp}, {"strategy.pp", sg.pp}, {"strategy.cp", sg.cp},
                                               {"strategy.ep", sg.ep}, {"strategy.interleave", sg.interleave}};
  for (const auto& [name, value] : sizes) {
    if (value < 1 || value > kMaxGpus) throw InputError(name, num(value), "a positive integer");
  }
  if (sg.dp < 0) throw InputError("strategy.dp", num(sg.dp), "a positive integer (or absent: derived)");
  if (sg.zero < 0 || sg.zero > 3) throw InputError("strategy.zero", num(sg.zero), "0, 1, 2 or 3");

  // GPUs = tp x pp x dp x cp; dp is derived when absent.
  const int64_t model_parallel = int64_t{sg.tp} * sg.pp * sg.cp;
  if (sg.dp == 0) {
    if (hw.gpus % model_parallel != 0) {
      throw InputError("hardware.gpus", num(hw.gpus),
                       fmt::format("a multiple of tp x pp x cp = {} x {} x {} = {}", sg.tp, sg.pp, sg.cp, model_parallel));
    }
    sg.dp = static_cast<int>(hw.gpus / model_parallel);
  } else if (model_parallel * sg.dp != hw.gpus) {
    throw InputError("hardware.gpus", num(hw.gpus),
                     fmt::format("tp x pp x dp x cp = {} x {} x {} x {} = {}", sg.tp, sg.pp, sg.dp, sg.cp,
                                 model_parallel * sg.dp));
  }

  // Tensor parallelism splits heads and MLP columns. Fewer KV heads than tp is allowed when tp is a
  // multiple of them: each KV head is then replicated on tp / kv ranks (Megatron-LM, vLLM).
  for (const auto& group : m.layers) {
    const AttentionShape& a = group.spec.attention;
    if (a.num_heads % sg.tp != 0) {
      throw InputError("strategy.tp", num(sg.tp), fmt::format("must divide num_attention_heads ({})", a.num_heads));
    }
    if (a.num_kv_heads > 0 && a.num_kv_heads % sg.tp != 0 && sg.tp % a.num_kv_heads != 0) {
      throw InputError("strategy.tp", num(sg.tp),
                       fmt::format("must divide num_key_value_heads ({}) or be a multiple of it", a.num_kv_heads));
    }
    if (!group.spec.is_moe() && group.spec.mlp_intermediate % sg.tp != 0) {
      throw InputError("strategy.tp", num(sg.tp),
                       fmt::format("must divide intermediate_size ({})", group.spec.mlp_intermediate));
    }
  }
  if (sg.pp > m.num_layers) {
    throw InputError("strategy.pp", num(sg.pp), fmt::format("at most num_hidden_layers ({})", m.num_layers));
  }
  if (sg.interleave > 1) {
    if (sg.pp < 2) throw InputError("strategy.interleave", num(sg.interleave), "1 unless pipeline parallel (pp > 1)");
    if (m.num_layers % (int64_t{sg.pp} * sg.interleave) != 0) {
      throw InputError("strategy.interleave", num(sg.interleave),
                       fmt::format("pp x interleave must divide num_hidden_layers ({})", m.num_layers));
    }
  }
  // Experts are spread over expert-parallel groups carved out of the data-parallel (x context-parallel) ranks.
  if (sg.ep > 1) {
    int64_t experts = 0;
    for (const auto& group : m.layers) experts = std::max(experts, group.spec.num_experts);
    if (!IsMoe(m)) throw InputError("strategy.ep", num(sg.ep), "1 for a dense model (no experts)");
    if (experts % sg.ep != 0) {
      throw InputError("strategy.ep", num(sg.ep), fmt::format("must divide the number of experts ({})", experts));
    }
    if ((int64_t{sg.dp} * sg.cp) % sg.ep != 0) {
      throw InputError("strategy.ep", num(sg.ep), fmt::format("must divide dp x cp ({} x {})", sg.dp, sg.cp));
    }
  }
  // Context parallelism splits each sequence into 2 x cp chunks for load balance (Megatron-LM).
  if (sg.cp > 1 && tr.seq_len % (2 * sg.cp) != 0) {
    throw InputError("strategy.cp", num(sg.cp), fmt::format("2 x cp must divide seq_len ({})", tr.seq_len));
  }
  // Megatron-LM turns sequence parallelism off when tp is 1 (it is a split of the TP region).
  if (sg.tp == 1) sg.sequence_parallel = false;
  if (sg.sequence_parallel && tr.seq_len % sg.tp != 0) {
    throw InputError("strategy.sequence_parallel", "true", fmt::format("tp ({}) must divide seq_len ({})", sg.tp, tr.seq_len));
  }
  // DeepSpeed asserts that ZeRO-2/3 do not combine with its pipeline engine.
  if (sg.zero >= 2 && sg.pp > 1) {
    throw InputError("strategy.zero", num(sg.zero), "0 or 1 with pipeline parallelism (pp > 1)");
  }

  const int64_t per_step = int64_t{tr.micro_batch} * sg.dp;
  if (tr.global_batch != 0 && tr.global_batch % per_step != 0) {
    throw InputError("training.global_batch", num(tr.global_batch),
                     fmt::format("a multiple of micro_batch x dp = {} x {} = {}", tr.micro_batch, sg.dp, per_step));
  }

  // Precision must exist on the GPU's tensor cores.
  const GpuSpec& g = hw.gpu;
  if (tr.precision == Precision::kBf16 && g.bf16_tflops <= 0) {
    throw InputError("training.precision", "bf16", fmt::format("{} has no BF16; use fp16 or fp32", g.name));
  }
  if (tr.precision == Precision::kFp8 && g.fp8_tflops <= 0) {
    throw InputError("training.precision", "fp8", fmt::format("{} has no FP8 tensor cores; use bf16, fp16 or fp32", g.name));
  }
  // QLoRA dequantises its 4-bit base to a 16-bit compute dtype; LoRA adapters train in it.
  if (tr.method == Method::kQlora && tr.precision != Precision::kBf16 && tr.precision != Precision::kFp16) {
    throw InputError("training.precision", ToString(tr.precision), "bf16 or fp16 with qlora (its compute dtype)");
  }
  if (IsAdapterMethod(tr.method)) {
    if (tr.lora_rank < 1 || tr.lora_rank > kMaxLoraRank) {
      throw InputError("training.lora_rank", num(tr.lora_rank), fmt::format("an integer from 1 to {}", kMaxLoraRank));
    }
  }
  if (tr.method == Method::kFreeze && (tr.trainable_layers < 1 || tr.trainable_layers > m.num_layers)) {
    throw InputError("training.trainable_layers", num(tr.trainable_layers),
                     fmt::format("an integer from 1 to num_hidden_layers ({})", m.num_layers));
  }
}

bool IsLoraTarget(const Training& training, const Linear& linear) {
  if (linear.module == Module::kRouter) return false;
  if (training.lora_targets.empty()) return true;
  for (const std::string& name : training.lora_targets) {
    if (name == "all-linear" || name == linear.name) return true;
  }
  return false;
}

int64_t GlobalBatch(const Scenario& s) {
  return s.training.global_batch > 0 ? s.training.global_batch : s.training.micro_batch * DataParallel(s);
}

int64_t GradAccumSteps(const Scenario& s) {
  const int64_t per_step = s.training.micro_batch * DataParallel(s);
  return per_step > 0 ? GlobalBatch(s) / per_step : 0;
}

}  // namespace trainplan
