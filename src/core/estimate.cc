#include "core/estimate.h"

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/framework.h"
#include "core/units.h"

namespace trainplan {

namespace {


std::string RecomputeText(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "no activation recomputation";
    case Recompute::kSelective: return "selective recomputation of the attention core (Korthikanti et al. 2022)";
    case Recompute::kFull: return "full recomputation: only each layer's input is kept, one extra forward pass";
  }
  return "";
}

void Collect(const Scenario& s, const Estimate& e, std::vector<std::string>& assumptions,
             std::vector<std::string>& warnings) {
  const FrameworkProfile& fw = GetFrameworkProfile(s.training.framework);
  const Strategy& st = s.strategy;
  assumptions.push_back(fmt::format("framework profile: {} ({})", fw.name, fw.source));
  assumptions.push_back(fmt::format("precision {}, optimizer {}, method {}", ToString(s.training.precision),
                                    ToString(s.training.optimizer), ToString(s.training.method)));
  assumptions.push_back(RecomputeText(st.recompute));
  assumptions.push_back(st.flash_attention ? "flash attention: no s x s score matrix is stored"
                                           : "eager attention: scores, softmax and dropout mask are stored");
  assumptions.push_back(fmt::format("GPU peaks are dense datasheet figures for {} ({})", s.hardware.gpu.name,
                                    s.hardware.gpu.sources.empty() ? "no source" : s.hardware.gpu.sources[0]));
  assumptions.push_back(fmt::format("links: {} inside a node, {} between nodes", s.hardware.intra_node.name,
                                    s.hardware.inter_node.name));
  if (s.model.approximate)
    warnings.push_back(fmt::format("{} is a generic shape, not a published config: counts are approximate",
                                   s.model.name));
  for (const auto& w : s.model.warnings) warnings.push_back(w);
  if (!e.memory.fits)
    warnings.push_back(fmt::format("does not fit: needs {:.1f} GiB per GPU on {:.1f} GiB",
                                   e.memory.per_gpu_bytes / kGiB, e.memory.capacity_bytes / kGiB));
  if (s.strategy.tp > s.hardware.gpus_per_node)
    warnings.push_back(fmt::format("tp={} spans nodes ({} GPUs per node): TP traffic crosses {}",
                                   s.strategy.tp, s.hardware.gpus_per_node, s.hardware.inter_node.name));
  if (s.hardware.gpu.consumer && s.hardware.gpus > 1 && s.hardware.gpu.nvlink_gen == 0)
    warnings.push_back(fmt::format("{} has no NVLink: GPU-to-GPU traffic goes over {}", s.hardware.gpu.name,
                                   s.hardware.intra_node.name));
}

std::string Confidence(const Scenario& s) {
  std::vector<std::string> reasons;
  int level = 2;  // 2 high, 1 medium, 0 low
  if (s.model.approximate) {
    level = 0;
    reasons.push_back("generic model shape");
  }
  if (s.hardware.gpu.confidence == "low") {
    level = 0;
    reasons.push_back("GPU datasheet figures of low confidence");
  } else if (s.hardware.gpu.confidence == "medium") {
    level = std::min(level, 1);
    reasons.push_back("GPU figures partly from secondary sources");
  }
  if (s.hardware.gpu.vendor != "NVIDIA") {
    level = std::min(level, 1);
    reasons.push_back("efficiency model calibrated on NVIDIA measurements");
  }
  if (s.training.method == Method::kQlora || s.training.framework == Framework::kUnsloth) {
    level = std::min(level, 1);
    reasons.push_back("4-bit and fused-kernel speeds vary with library versions");
  }
  if (s.hardware.gpus > 1024) {
    level = std::min(level, 1);
    reasons.push_back("at this scale stragglers and network congestion are not modelled");
  }
  static const char* kLevels[] = {"low", "medium", "high"};
  std::string out = kLevels[level];
  if (reasons.empty()) return out + ": dense model, datasheet figures, calibrated efficiency model";
  return out + ": " + fmt::format("{}", fmt::join(reasons, "; "));
}

}  // namespace

std::vector<FitOption> FitOptions(const Scenario& scenario, const ParamCounts& params) {
  std::vector<FitOption> out;
  auto add = [&](std::string change, Scenario s) {
    const TrainableParams trainable = CountTrainable(s, params);
    const MemoryEstimate m = EstimateMemory(s, params, trainable);
    out.push_back({std::move(change), m.per_gpu_bytes, m.host_bytes, m.fits});
  };
  const Training& t = scenario.training;
  const Strategy& st = scenario.strategy;
  if (st.recompute != Recompute::kFull) {
    Scenario s = scenario;
    s.strategy.recompute = Recompute::kFull;
    add("full activation recomputation", s);
  }
  // DeepSpeed offloads through ZeRO; Megatron-LM has no optimizer offload, and ZeRO-2/3 excludes PP.
  const bool full_training = t.method == Method::kPretrain || t.method == Method::kFull || t.method == Method::kFreeze;
  if (full_training && st.offload == Offload::kNone && st.pp == 1 && t.framework != Framework::kMegatron) {
    Scenario s = scenario;
    s.strategy.zero = std::max(st.zero, 2);
    s.strategy.offload = Offload::kOptimizer;
    s.strategy.recompute = Recompute::kFull;
    add(fmt::format("optimizer offloaded to the host (ZeRO-{}) with full recomputation", s.strategy.zero), s);
  }
  if (full_training && t.optimizer == Optimizer::kAdamW) {
    Scenario s = scenario;
    s.training.optimizer = Optimizer::kAdamW8bit;
    s.strategy.recompute = Recompute::kFull;
    add("8-bit AdamW with full recomputation", s);
  }
  for (Method method : {Method::kLora, Method::kQlora}) {
    if (t.method == method || (method == Method::kLora && t.method == Method::kQlora)) continue;
    Scenario s = scenario;
    s.training.method = method;
    s.strategy.recompute = Recompute::kFull;
    add(fmt::format("method {} (rank {}) with full recomputation", ToString(method), t.lora_rank), s);
  }
  return out;
}

Estimate EstimateScenario(const Scenario& scenario) {
  Estimate e;
  e.params = CountParams(scenario.model);
  e.trainable = CountTrainable(scenario, e.params);
  e.memory = EstimateMemory(scenario, e.params, e.trainable);
  e.time = EstimateTime(scenario, e.params, e.trainable);
  Collect(scenario, e, e.assumptions, e.warnings);
  e.confidence = Confidence(scenario);
  if (!e.memory.fits) e.options = FitOptions(scenario, e.params);
  return e;
}

nlohmann::json ParamComponentsToJson(const ParamCounts& p) {
  return {{"embedding", p.embedding}, {"attention", p.attention},        {"mlp", p.mlp},
          {"experts", p.experts},     {"shared_experts", p.shared_experts}, {"router", p.router},
          {"norms", p.norms},         {"lm_head", p.lm_head}};
}

nlohmann::json EstimateToJson(const Scenario& s, const Estimate& e) {
  using nlohmann::json;
  json params = {{"total", e.params.total},
                 {"active", e.params.active},
                 {"trainable", static_cast<int64_t>(e.trainable.trainable)},
                 {"frozen", static_cast<int64_t>(e.trainable.frozen)},
                 {"lora", static_cast<int64_t>(e.trainable.lora)},
                 {"components", ParamComponentsToJson(e.params)},
                 {"checkpoint_extra", e.params.checkpoint_extra}};
  json mem_components = json::object();
  for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i)
    mem_components[MemTermName(static_cast<MemTerm>(i))] = e.memory.bytes[i];
  json memory = {{"per_gpu_bytes", e.memory.per_gpu_bytes},
                 {"per_gpu_gib", e.memory.per_gpu_bytes / kGiB},
                 {"capacity_bytes", e.memory.capacity_bytes},
                 {"components", mem_components},
                 {"host_bytes", e.memory.host_bytes},
                 {"fits", e.memory.fits}};
  json time_breakdown = json::object();
  for (size_t i = 0; i < static_cast<size_t>(TimeTerm::kCount); ++i)
    time_breakdown[TimeTermName(static_cast<TimeTerm>(i))] = e.time.seconds[i];
  const TimeEstimate& t = e.time;
  json time = {{"step_s", t.step_s},
               {"breakdown_s", time_breakdown},
               {"tokens_per_step", t.tokens_per_step},
               {"tokens_per_s", t.tokens_per_s},
               {"model_flops_per_step", t.model_flops_per_step},
               {"hardware_flops_per_step", t.hardware_flops_per_step},
               {"model_tflops_per_gpu", t.model_tflops_per_gpu},
               {"hardware_tflops_per_gpu", t.hardware_tflops_per_gpu},
               {"mfu", t.mfu},
               {"hfu", t.hfu},
               {"steps", t.steps},
               {"total_s", t.total_s},
               {"gpu_hours", t.gpu_hours}};
  const Strategy& st = s.strategy;
  json strategy = {{"tp", st.tp},
                   {"pp", st.pp},
                   {"dp", st.dp},
                   {"cp", st.cp},
                   {"ep", st.ep},
                   {"zero", st.zero},
                   {"recompute", ToString(st.recompute)},
                   {"sequence_parallel", st.sequence_parallel},
                   {"offload", ToString(st.offload)},
                   {"flash_attention", st.flash_attention},
                   {"interleave", st.interleave},
                   {"micro_batch", s.training.micro_batch},
                   {"global_batch", GlobalBatch(s)},
                   {"grad_accum_steps", GradAccumSteps(s)}};
  json training = {{"method", ToString(s.training.method)},
                   {"precision", ToString(s.training.precision)},
                   {"optimizer", ToString(s.training.optimizer)},
                   {"framework", ToString(s.training.framework)},
                   {"seq_len", s.training.seq_len},
                   {"tokens", s.training.tokens}};
  if (IsAdapterMethod(s.training.method))
    training["lora_rank"] = s.training.lora_rank;
  json hardware = {{"gpu", s.hardware.gpu.id},
                   {"gpu_name", s.hardware.gpu.name},
                   {"gpus", s.hardware.gpus},
                   {"gpus_per_node", s.hardware.gpus_per_node},
                   {"nodes", s.hardware.nodes()},
                   {"intra_node", s.hardware.intra_node.id},
                   {"inter_node", s.hardware.inter_node.id}};
  json model = {{"name", s.model.name},
                {"hf_id", s.model.hf_id},
                {"model_type", s.model.model_type},
                {"approximate", s.model.approximate},
                {"source", s.model.source}};
  json options = json::array();
  for (const auto& o : e.options)
    options.push_back({{"change", o.change}, {"per_gpu_bytes", o.per_gpu_bytes}, {"host_bytes", o.host_bytes},
                       {"fits", o.fits}});
  memory["options"] = options;
  return {{"model", model},       {"training", training},          {"hardware", hardware},
          {"strategy", strategy}, {"params", params},              {"memory", memory},
          {"time", time},         {"assumptions", e.assumptions},  {"warnings", e.warnings},
          {"confidence", e.confidence}};
}

}  // namespace trainplan
