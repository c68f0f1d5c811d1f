#include "text/explain.h"

#include <cmath>

#include <fmt/format.h>

#include "catalog/efficiency.h"
#include "catalog/user_catalog.h"
#include "core/framework.h"
#include "core/moe_time.h"
#include "core/sequences.h"
#include "core/units.h"
#include "text/calibration_text.h"
#include "text/format.h"
#include "text/job_costs_text.h"
#include "text/stack_text.h"

namespace trainplan {

namespace {

/// "16,384": GPU counts with thousands separators.
std::string GroupedCount(int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    const size_t left = digits.size() - i;
    if (i > 0 && digits[i - 1] != '-' && left % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string RecomputeText(Recompute r, Lang lang) {
  switch (r) {
    case Recompute::kNone: return Say(lang, "asm.recompute_none");
    case Recompute::kSelective: return Say(lang, "asm.recompute_selective");
    case Recompute::kFull: return Say(lang, "asm.recompute_full");
  }
  return "";
}

std::string ContextParallelText(const Strategy& st, Lang lang) {
  switch (st.cp_comm) {
    case CpComm::kP2p: return Say(lang, "asm.cp_p2p", fmt::arg("cp", st.cp));
    case CpComm::kAllGather: return Say(lang, "asm.cp_all_gather", fmt::arg("cp", st.cp));
    case CpComm::kAllToAll: return Say(lang, "asm.cp_a2a", fmt::arg("cp", st.cp));
  }
  return "";
}

/// How the expert all-to-alls meet the compute: the dispatcher, the pairing the schedule runs, and the shared
/// experts' own stream.
std::string ExpertParallelText(const Scenario& s, Lang lang) {
  const Strategy& st = s.strategy;
  const char* overlap = "asm.ep_exposed";
  switch (ScheduledOverlap(s)) {
    case MoeOverlap::kNone: break;
    case MoeOverlap::kA2aOverlap: overlap = "asm.ep_paired"; break;
    case MoeOverlap::kDualPipe: overlap = "asm.ep_dualpipe"; break;
  }
  return Say(lang, "asm.ep", fmt::arg("ep", st.ep), fmt::arg("dispatcher", ToString(st.moe_dispatcher)),
             fmt::arg("overlap", Say(lang, overlap)),
             fmt::arg("shared", st.moe_shared_expert_overlap ? Say(lang, "asm.ep_shared") : ""));
}

std::string WarningText(const Scenario& s, const EstimateWarning& w, Lang lang) {
  switch (w.code) {
    case WarningCode::kApproximateModel: return Say(lang, "warn.generic_model", fmt::arg("model", s.model.name));
    case WarningCode::kModelNote: return s.model.warnings.at(w.model_note);
    case WarningCode::kDoesNotFit:
      return Say(lang, "warn.does_not_fit", fmt::arg("needed", w.needed_bytes / kGiB),
                 fmt::arg("capacity", w.capacity_bytes / kGiB));
    case WarningCode::kAtEdge:
      return Say(lang, "warn.at_edge", fmt::arg("needed", w.needed_bytes / kGiB),
                 fmt::arg("capacity", w.capacity_bytes / kGiB), fmt::arg("pct", 100 * w.usable_bytes / w.capacity_bytes),
                 fmt::arg("usable", w.usable_bytes / kGiB));
    case WarningCode::kHostRamShort:
      return Say(lang, "warn.host_short", fmt::arg("needed", HostRamText(w.needed_bytes)),
                 fmt::arg("given", HostRamText(w.capacity_bytes)));
    case WarningCode::kTpSpansNodes:
      return Say(lang, "warn.tp_spans", fmt::arg("tp", w.tp), fmt::arg("per_node", w.gpus_per_node),
                 fmt::arg("link", s.hardware.inter_node.name));
    case WarningCode::kNoNvlink:
      return Say(lang, "warn.no_nvlink", fmt::arg("gpu", s.hardware.gpu.name), fmt::arg("link", s.hardware.intra_node.name));
    case WarningCode::kUnsupportedOnStack:
      return Say(lang, "warn.unsupported", fmt::arg("gap", StackGapText(w.stack_gap, lang)));
  }
  return "";
}

/// The phrase key of a confidence reason.
const char* ReasonKey(ConfidenceReason r) {
  switch (r) {
    case ConfidenceReason::kGenericModel: return "conf.generic_model";
    case ConfidenceReason::kLowGpuData: return "conf.low_gpu_data";
    case ConfidenceReason::kSecondaryGpuData: return "conf.secondary_gpu_data";
    case ConfidenceReason::kNonNvidia: return "conf.non_nvidia";
    case ConfidenceReason::kLibraryDependent: return "conf.library_dependent";
    case ConfidenceReason::kLargeScale: return "conf.large_scale";
    case ConfidenceReason::kMoeHostSync: return "conf.moe_host_sync";
  }
  return "";
}

const char* LevelKey(ConfidenceLevel level) {
  switch (level) {
    case ConfidenceLevel::kLow: return "conf.low";
    case ConfidenceLevel::kMedium: return "conf.medium";
    case ConfidenceLevel::kHigh: return "conf.high";
  }
  return "";
}

/// "1,234": a token count rounded to a whole token.
std::string Tokens(double tokens) { return GroupedCount(static_cast<int64_t>(std::llround(tokens))); }

/// How the samples fill the rows: padded per micro-batch or packed, and what that costs.
std::string SamplesText(const Training& tr, Lang lang) {
  const SequenceShape shape = ShapeOf(tr);
  const std::string lengths =
      tr.sample_lengths.empty()
          ? Say(lang, "asm.samples_assumed", fmt::arg("mean", Tokens(tr.sample_mean_tokens)),
                fmt::arg("max", Tokens(tr.sample_max_tokens)))
          : Say(lang, "asm.samples_histogram", fmt::arg("mean", Tokens(shape.mean_sample_tokens)),
                fmt::arg("max", Tokens(shape.peak_row_tokens)), fmt::arg("count", tr.sample_lengths.size()));
  const std::string cut =
      shape.truncated ? Say(lang, "asm.samples_cut", fmt::arg("seq", GroupedCount(tr.seq_len))) : "";
  if (tr.packing)
    return Say(lang, "asm.samples_packed", fmt::arg("lengths", lengths), fmt::arg("cut", cut),
               fmt::arg("seq", GroupedCount(tr.seq_len)), fmt::arg("keys", Tokens(shape.attention_tokens)));
  const double rows = static_cast<double>(tr.micro_batch) * shape.rows_per_example;
  return Say(lang, "asm.samples_padded", fmt::arg("lengths", lengths), fmt::arg("cut", cut),
             fmt::arg("rows", Tokens(rows)),
             fmt::arg("order", tr.group_by_length ? Say(lang, "asm.samples_grouped") : ""),
             fmt::arg("row_tokens", Tokens(shape.row_tokens)), fmt::arg("padding", 100 * shape.padding_fraction()),
             fmt::arg("peak", Tokens(shape.peak_row_tokens)));
}

/// What the preference objective adds: both responses of a pair, the reference model's forward passes and
/// whether it is a second copy of the weights.
std::string PreferenceText(const Training& tr, Lang lang) {
  const SequenceShape shape = ShapeOf(tr);
  std::string out = Say(lang, "asm.objective", fmt::arg("objective", ToString(tr.objective))) +
                    Say(lang, IsPairedObjective(tr.objective) ? "asm.objective_paired" : "asm.objective_kto");
  if (!HasReferenceModel(tr.objective)) return out + Say(lang, "asm.no_reference");
  out += Say(lang, "asm.reference", fmt::arg("passes", shape.forward_only_share()));
  return out + (HoldsReferenceWeights(tr)
                    ? Say(lang, "asm.reference_copy", fmt::arg("precision", ToString(tr.precision)))
                    : Say(lang, "asm.reference_adapters"));
}

std::vector<std::string> SequenceAssumptions(const Training& tr, Lang lang) {
  std::vector<std::string> out;
  if (tr.objective != TrainingObjective::kSft) out.push_back(PreferenceText(tr, lang));
  if (ShapeOf(tr).described) out.push_back(SamplesText(tr, lang));
  return out;
}

}  // namespace

namespace {

const char* LossKey(Loss loss) {
  switch (loss) {
    case Loss::kStandard: return "asm.loss_standard";
    case Loss::kChunked: return "asm.loss_chunked";
    case Loss::kFused: return "asm.loss_fused";
    case Loss::kFusedLinear: return "asm.loss_fused_linear";
    case Loss::kCut: return "asm.loss_cut";
  }
  return "";
}

std::string LossText(const Training& tr, Lang lang) {
  const Loss loss = EffectiveLoss(tr);
  const char* whose = tr.loss ? "asm.loss_chosen"
                              : (tr.liger && loss == Loss::kFusedLinear ? "asm.loss_liger" : "asm.loss_default");
  return Say(lang, "asm.loss", fmt::arg("loss", ToString(loss)), fmt::arg("how", Say(lang, LossKey(loss))),
             fmt::arg("whose", Say(lang, whose)));
}

/// The memory mechanisms in effect besides the loss: each named only where it applies.
std::string MemoryMechanismsText(const Scenario& s, Lang lang) {
  const Training& tr = s.training;
  std::string out = LossText(tr, lang);
  const auto add = [&](const char* key) { out += Say(lang, "list.semicolon") + Say(lang, key); };
  if (EffectiveOptimizerInBackward(tr, s.hardware.gpus)) add("asm.optimizer_in_backward");
  if (EffectiveActivationOffloading(tr, s.strategy.recompute)) add("asm.activation_offloading");
  if (IsPagedOptimizer(tr.optimizer)) add("asm.paged_optimizer");
  if (tr.method == Method::kQlora) add(tr.double_quant ? "asm.nf4_double" : "asm.nf4_single");
  if (tr.dora) add("asm.dora");
  if (tr.fp32_weights) add("asm.bf16_mixed");
  return out;
}

// The kernel the time model runs and why: asked for, or the engine's default; its rate against FlashAttention-2.
std::string AttentionText(const Scenario& s, Lang lang) {
  const EfficiencyCatalog& eff = Efficiency();
  const AttentionKernel kernel = eff.Kernel(s.training.attention, s.strategy.flash_attention, s.training.framework);
  const std::string why = Say(lang, s.training.attention != AttentionKernel::kAuto ? "asm.as_given"
                                    : s.strategy.flash_attention                  ? "asm.engine_default"
                                                                                  : "asm.flash_off");
  if (kernel == AttentionKernel::kEager) return Say(lang, "asm.attention_eager", fmt::arg("why", why));
  const Training& tr = s.training;
  const GpuGeneration generation = s.hardware.gpu.generation;
  const std::string release =
      RunsLegacyAttention(kernel, generation, tr.framework, tr.framework_version)
          ? Say(lang, "asm.attention_legacy", fmt::arg("version", tr.framework_version),
                fmt::arg("before", eff.Engine(tr.framework).attention_legacy_before))
          : "";
  return Say(lang, "asm.attention", fmt::arg("kernel", AttentionKernelKey(kernel)), fmt::arg("why", why),
             fmt::arg("pct", 100 * AttentionKernelRate(kernel, generation, tr.framework, tr.framework_version)),
             fmt::arg("release", release));
}

/// Host-side time: kernel replacements, ZeRO-3's hooks and who builds the batches (data/efficiency.json).
std::string HostTimeText(const Scenario& s, Lang lang) {
  const EfficiencyCatalog& eff = Efficiency();
  const EngineTiming& engine = eff.Engine(s.training.framework);
  std::string out = Say(lang, "asm.host_time", fmt::arg("ms", 1e3 * engine.host_s_per_layer_pass));
  if (s.training.liger) out += Say(lang, "asm.host_liger", fmt::arg("factor", eff.liger.host_factor));
  if (s.training.compile)
    out += Say(lang, "asm.host_compile", fmt::arg("factor", eff.compile.host_factor), fmt::arg("compile_s", eff.compile_s));
  if (s.strategy.zero >= 3 && engine.zero3_host_s_per_module > 0)
    out += Say(lang, "asm.host_zero3", fmt::arg("ms", 1e3 * engine.zero3_host_s_per_module));
  const int64_t workers = EffectiveDataloaderWorkers(s.training);
  if (workers == 0) return out + Say(lang, "asm.host_in_process", fmt::arg("ms", 1e3 * eff.dataloader_s_per_row));
  return out + Say(lang, "asm.host_workers", fmt::arg("workers", workers));
}

}  // namespace

std::vector<std::string> EstimateAssumptions(const Scenario& s, Lang lang) {
  const FrameworkProfile& fw = GetFrameworkProfile(s.training.framework);
  const GpuSpec& gpu = s.hardware.gpu;
  std::vector<std::string> out{
      Say(lang, "asm.framework", fmt::arg("name", fw.name), fmt::arg("source", fw.source)),
      MemoryMechanismsText(s, lang),
      Say(lang, "asm.precision", fmt::arg("precision", ToString(s.training.precision)),
          fmt::arg("optimizer", ToString(s.training.optimizer)), fmt::arg("method", ToString(s.training.method))),
      RecomputeText(s.strategy.recompute, lang),
      AttentionText(s, lang),
      Say(lang, "asm.gpu_peaks", fmt::arg("gpu", gpu.name),
          fmt::arg("source", gpu.sources.empty() ? Say(lang, "asm.no_source") : gpu.sources[0])),
      Say(lang, "asm.links", fmt::arg("intra", s.hardware.intra_node.name), fmt::arg("inter", s.hardware.inter_node.name)),
      HostTimeText(s, lang),
      FixedCostsAssumption(lang),
      GlobalBatchText(s, lang)};
  if (s.strategy.cp > 1) out.push_back(ContextParallelText(s.strategy, lang));
  if (s.strategy.ep > 1) out.push_back(ExpertParallelText(s, lang));
  for (std::string& line : SequenceAssumptions(s.training, lang)) out.push_back(std::move(line));
  if (std::string catalogs = UserCatalogsText(lang); !catalogs.empty()) out.push_back(std::move(catalogs));
  if (auto line = CalibrationAssumption(s, lang)) out.push_back(std::move(*line));
  return out;
}

std::string UserCatalogsText(Lang lang) {
  const std::vector<std::string> files = UserCatalogFiles();
  return files.empty() ? "" : Say(lang, "catalog.user", fmt::arg("files", fmt::format("{}", fmt::join(files, ", "))));
}

std::vector<std::string> EstimateAssumptions(const Scenario& s, const Estimate& e, Lang lang) {
  std::vector<std::string> out = EstimateAssumptions(s, lang);
  const TimeEstimate& t = e.time;
  const GpuSpec& gpu = s.hardware.gpu;
  const LinkSpec* host = HostLinkOf(gpu);
  const std::string link = host ? host->name : fmt::format("PCIe {}.0 x{}", gpu.pcie_gen, gpu.pcie_lanes);
  const auto share = [&](double seconds) { return t.step_s > 0 ? 100 * seconds / t.step_s : 0; };
  if (EffectiveActivationOffloading(s.training, s.strategy.recompute)) {
    const double exposed = t[TimeTerm::kActivationOffload];
    const double hidden = t.activation_offload_transfer_s > 0 ? 1 - exposed / t.activation_offload_transfer_s : 1;
    out.push_back(Say(lang, "asm.activation_offload_time", fmt::arg("s", exposed), fmt::arg("share", share(exposed)),
                      fmt::arg("gb", e.memory.offloaded_activation_bytes / kGB), fmt::arg("link", link),
                      fmt::arg("hidden", 100 * hidden)));
  }
  if (IsPagedOptimizer(s.training.optimizer)) {
    const double paged = t[TimeTerm::kPagedOptimizer];
    out.push_back(e.memory.paged_spill_bytes > 0
                      ? Say(lang, "asm.paged_time", fmt::arg("gib", e.memory.paged_spill_bytes / kGiB),
                            fmt::arg("link", link), fmt::arg("s", paged), fmt::arg("share", share(paged)),
                            fmt::arg("rate", 100 * Efficiency().unified_memory_migration_efficiency))
                      : Say(lang, "asm.paged_free"));
  }
  if (s.training.dora && IsAdapterMethod(s.training.method)) {
    const double dora = t[TimeTerm::kDora];
    out.push_back(Say(lang, "asm.dora_time", fmt::arg("s", dora), fmt::arg("share", share(dora)),
                      fmt::arg("dequant", s.training.method == Method::kQlora ? Say(lang, "asm.dora_dequant") : "")));
  }
  return out;
}

std::string GlobalBatchText(const Scenario& s, Lang lang) {
  const int64_t batch = GlobalBatch(s);
  const std::string size = Say(lang, "asm.batch", fmt::arg("sequences", GroupedCount(batch)),
                               fmt::arg("tokens", GroupedCount(batch * s.training.seq_len)));
  if (s.training.global_batch > 0) return size + Say(lang, "asm.batch_given");
  const std::string rounded =
      batch != DefaultGlobalBatch(s.training, s.hardware.gpus) ? Say(lang, "asm.batch_rounded") : "";
  if (s.training.method == Method::kPretrain)
    return Say(lang, "asm.batch_pretrain", fmt::arg("size", size), fmt::arg("gpus", GroupedCount(s.hardware.gpus)),
               fmt::arg("rounded", rounded));
  return Say(lang, "asm.batch_finetune", fmt::arg("size", size), fmt::arg("rounded", rounded));
}

std::string ObjectiveText(const PlanRank& rank, Lang lang) {
  const std::string objective = Say(lang, std::string("plan.objective.") + ToString(rank.objective));
  switch (rank.objective_source) {
    case ObjectiveSource::kDefault:
      return Say(lang, "plan.ranked_default", fmt::arg("objective", objective),
                 fmt::arg("what", Say(lang, rank.objective == Objective::kCost   ? "plan.what.cheapest"
                                            : rank.objective == Objective::kTime ? "plan.what.fastest"
                                                                                 : "plan.what.fewest")));
    case ObjectiveSource::kBudgetOnly: return Say(lang, "plan.ranked_budget_only");
    case ObjectiveSource::kGiven: return Say(lang, "plan.ranked_given", fmt::arg("objective", objective));
  }
  return "";
}

std::string KneeText(const PlanRank& rank, const Currency& cur, Lang lang) {
  const KneePlan& k = rank.knee;
  if (k.gpus <= 0) return "";
  return Say(lang, "plan.knee", fmt::arg("gpus", GroupedCount(k.gpus)), fmt::arg("gpu", k.gpu_id),
             fmt::arg("duration", FormatDuration(k.total_s, lang)), fmt::arg("cost", FormatMoney(k.cost_usd, cur)));
}

std::vector<std::string> EstimateWarnings(const Scenario& s, const Estimate& e, Lang lang) {
  std::vector<std::string> out;
  for (const auto& w : e.warnings) out.push_back(WarningText(s, w, lang));
  return out;
}

std::string EdgeText(const MemoryEstimate& m, Lang lang) {
  return Say(lang, "plan.edge_text", fmt::arg("used", m.per_gpu_bytes / kGiB), fmt::arg("capacity", m.capacity_bytes / kGiB),
             fmt::arg("pct", 100 * m.usable_bytes / m.capacity_bytes));
}

std::string HostRamText(double bytes) {
  // Whole GB as RAM is bought; under 10 GB one decimal, so a small offload never reads "0 GB".
  return bytes < 10 * kGB ? fmt::format("{:.1f} GB", bytes / kGB) : fmt::format("{:.0f} GB", bytes / kGB);
}

std::string ConfidenceText(const Confidence& c, Lang lang) {
  std::vector<std::string> reasons;
  for (ConfidenceReason r : c.reasons) reasons.push_back(Say(lang, ReasonKey(r)));
  return Say(lang, "conf.line", fmt::arg("level", Say(lang, LevelKey(c.level))),
             fmt::arg("reasons", reasons.empty() ? Say(lang, "conf.dense")
                                                 : fmt::format("{}", fmt::join(reasons, Say(lang, "list.semicolon")))));
}

std::string FitChangeText(const FitOption& o, Lang lang) {
  switch (o.change) {
    case FitChange::kFullRecompute: return Say(lang, "fit.full_recompute");
    case FitChange::kOptimizerOffload: return Say(lang, "fit.optimizer_offload", fmt::arg("zero", o.zero));
    case FitChange::kAdamW8bit: return Say(lang, "fit.adamw_8bit");
    case FitChange::kMethod:
      return Say(lang, "fit.method", fmt::arg("method", ToString(o.method)), fmt::arg("rank", o.lora_rank));
  }
  return "";
}

std::string StrategyText(const Strategy& st, int64_t micro_batch) {
  std::string out = fmt::format("tp{} pp{} dp{}", st.tp, st.pp, st.dp);
  if (st.cp > 1) out += fmt::format(" cp{}", st.cp);
  if (st.ep > 1) out += fmt::format(" ep{}", st.ep);
  if (st.ep > 1 && ExpertTp(st) != st.tp) out += fmt::format(" etp{}", ExpertTp(st));
  if (st.interleave > 1) out += fmt::format(" v{}", st.interleave);
  if (st.zero > 0) out += fmt::format(" zero{}", st.zero);
  if (st.offload != Offload::kNone) out += fmt::format(" offload:{}", ToString(st.offload));
  out += fmt::format(" mb{} recompute:{}", micro_batch, ToString(st.recompute));
  return out;
}

std::string StrategyText(const Plan& p) { return StrategyText(p.strategy, p.micro_batch); }

std::string PlanWhy(const Plan& p, const Currency& cur, Lang lang) {
  const PlanRank& rank = p.rank;
  const std::string lead = rank.position == 0 ? Say(lang, rank.objective == Objective::kTime   ? "plan.lead.fastest"
                                                          : rank.objective == Objective::kCost ? "plan.lead.cheapest"
                                                                                               : "plan.lead.fewest")
                                              : fmt::format("#{}", rank.position + 1);
  std::string bottleneck;
  double largest = 0;
  for (size_t t = 0; t < p.time.seconds.size(); ++t) {
    if (static_cast<TimeTerm>(t) == TimeTerm::kCompute) continue;
    if (p.time.seconds[t] > largest) {
      largest = p.time.seconds[t];
      bottleneck = Say(lang, std::string("time.") + TimeTermName(static_cast<TimeTerm>(t)));
    }
  }
  const std::string cost = p.price_per_gpu_hour > 0 ? Say(lang, "plan.cost_at", fmt::arg("cost", FormatMoney(p.cost_usd, cur)),
                                                          fmt::arg("price", PriceText(p, cur, lang)))
                                                    : Say(lang, "plan.no_rental_price");
  const std::string utilisation =
      p.time.mfu < kLowMfu ? Say(lang, "plan.low_utilisation", fmt::arg("pct", 100 * kLowMfu)) : "";
  const MemoryEstimate& m = p.memory;
  std::string memory = m.at_edge ? EdgeText(m, lang)
                                 : Say(lang, "plan.memory_used", fmt::arg("pct", 100 * m.per_gpu_bytes / m.capacity_bytes));
  if (m.host_bytes > 0) memory += Say(lang, "plan.host_ram", fmt::arg("host", HostRamText(m.host_bytes)));
  std::string why = Say(
      lang, "plan.why_line", fmt::arg("lead", lead), fmt::arg("gpus", p.gpus), fmt::arg("gpu", p.gpu_id),
      fmt::arg("framework", ToString(p.framework)), fmt::arg("strategy", StrategyText(p)),
      fmt::arg("duration", FormatDuration(p.time.total_s, lang)), fmt::arg("mfu", 100 * p.time.mfu),
      fmt::arg("utilisation", utilisation), fmt::arg("fixed", FixedCostsText(p.time, lang)), fmt::arg("cost", cost),
      fmt::arg("memory", memory),
      fmt::arg("overhead", largest > 0.05 * p.time.step_s ? Say(lang, "plan.largest_overhead", fmt::arg("term", bottleneck),
                                                                fmt::arg("pct", 100 * largest / p.time.step_s))
                                                          : ""));
  if (rank.headline) why += Say(lang, "list.semicolon") + ObjectiveText(rank, lang);
  if (const std::string knee = KneeText(rank, cur, lang); !knee.empty()) why += Say(lang, "list.semicolon") + knee;
  return why;
}

namespace {

const char* FrameworkChangeKey(Framework f) {
  switch (f) {
    case Framework::kUnsloth: return "alt.framework_unsloth";
    case Framework::kTorchtune: return "alt.framework_torchtune";
    default: return "alt.framework";
  }
}

const char* LossChangeKey(Loss loss) {
  switch (loss) {
    case Loss::kFusedLinear: return "alt.loss_fused_linear";
    case Loss::kChunked: return "alt.loss_chunked";
    case Loss::kCut: return "alt.loss_cut";
    case Loss::kFused: return "alt.loss_fused";
    case Loss::kStandard: return "alt.loss_standard";
  }
  return "alt.loss_standard";
}

}  // namespace

std::string AlternativeChangeText(const Alternative& a, Lang lang) {
  switch (a.change) {
    case AlternativeChange::kMethodLora: return Say(lang, "alt.method_lora");
    case AlternativeChange::kMethodQlora: return Say(lang, "alt.method_qlora");
    case AlternativeChange::kAdamW8bit: return Say(lang, "alt.adamw_8bit");
    case AlternativeChange::kAllowOffload: return Say(lang, "alt.allow_offload");
    case AlternativeChange::kAnyFramework: return Say(lang, "alt.any_framework");
    case AlternativeChange::kAnyGpu: return Say(lang, "alt.any_gpu");
    case AlternativeChange::kMoreGpus: return Say(lang, "alt.more_gpus", fmt::arg("gpus", a.max_gpus));
    case AlternativeChange::kNoDeadline: return Say(lang, "alt.no_deadline");
    case AlternativeChange::kNoBudget: return Say(lang, "alt.no_budget");
    case AlternativeChange::kFramework:
      return Say(lang, FrameworkChangeKey(a.framework), fmt::arg("framework", ToString(a.framework)));
    case AlternativeChange::kFusedAttention: return Say(lang, "alt.fused_attention");
    case AlternativeChange::kShorterSeqLen: return Say(lang, "alt.shorter_seq_len", fmt::arg("seq", a.seq_len));
    case AlternativeChange::kPagedOptimizer: return Say(lang, "alt.paged_optimizer");
    case AlternativeChange::kLoss: return Say(lang, LossChangeKey(a.loss));
    case AlternativeChange::kPacking: return Say(lang, "alt.packing");
    case AlternativeChange::kGroupByLength: return Say(lang, "alt.group_by_length");
    case AlternativeChange::kActivationOffloading: return Say(lang, "alt.activation_offloading");
  }
  return "";
}

namespace {

std::string NotRentableText(const NoPlanReason& r, Lang lang) {
  const std::string terms = r.offer != nullptr ? OfferTermsText(*r.offer, lang) : "";
  if (r.rent_limit_gpus > 0)
    return Say(lang, "noplan.rent_limit", fmt::arg("gpus", GroupedCount(r.gpus)),
               fmt::arg("terms", r.offer != nullptr && r.rent_limit_gpus == r.offer->max_gpus
                                     ? terms
                                     : Say(lang, "noplan.at_most", fmt::arg("gpus", r.rent_limit_gpus))));
  return Say(lang, "noplan.not_whole_instances", fmt::arg("gpus", GroupedCount(r.gpus)),
             fmt::arg("node", r.node_gpus), fmt::arg("terms", terms));
}

}  // namespace

std::string NoPlanText(const NoPlanReason& r, const Currency& cur, Lang lang) {
  switch (r.code) {
    case NoPlanCode::kNone: return "";
    case NoPlanCode::kBeyondRange:
      return Say(lang, "noplan.beyond_range", fmt::arg("gpus", GroupedCount(r.gpus)),
                 fmt::arg("max", GroupedCount(r.max_gpus)));
    case NoPlanCode::kPartialNodes:
      return Say(lang, "noplan.partial_nodes", fmt::arg("gpus", r.gpus), fmt::arg("per_node", r.gpus_per_node));
    case NoPlanCode::kNoLayout:
      return Say(lang, "noplan.no_layout",
                 fmt::arg("what", r.gpus > 0 ? Say(lang, "noplan.gpus", fmt::arg("gpus", GroupedCount(r.gpus)))
                                             : Say(lang, "noplan.counts_searched")),
                 fmt::arg("batch", r.global_batch));
    case NoPlanCode::kOutOfMemory:
      return Say(lang, "noplan.out_of_memory", fmt::arg("needed", r.needed_bytes / kGiB),
                 fmt::arg("capacity", r.capacity_bytes / kGiB),
                 fmt::arg("offload", Say(lang, r.offload_allowed ? "noplan.cpu_offload" : "noplan.offload_excluded")));
    case NoPlanCode::kHostRam:
      return Say(lang, "noplan.host_ram", fmt::arg("needed", HostRamText(r.needed_bytes)),
                 fmt::arg("given", HostRamText(r.capacity_bytes)));
    case NoPlanCode::kTooSlow:
      return Say(lang, "noplan.too_slow", fmt::arg("fastest", FormatDuration(r.fastest_s, lang)),
                 fmt::arg("deadline", FormatDuration(r.deadline_s, lang)));
    case NoPlanCode::kNoPrice: return Say(lang, "noplan.no_price", fmt::arg("budget", FormatMoney(r.budget_usd, cur)));
    case NoPlanCode::kOverBudget:
      return Say(lang, "noplan.over_budget", fmt::arg("cheapest", FormatMoney(r.cheapest_usd, cur)),
                 fmt::arg("budget", FormatMoney(r.budget_usd, cur)));
    case NoPlanCode::kDeadlineAndBudget: return Say(lang, "noplan.deadline_and_budget");
    case NoPlanCode::kNotRentable: return NotRentableText(r, lang);
    case NoPlanCode::kUnsupportedOnStack:
      return Say(lang, "noplan.unsupported", fmt::arg("text", StackGapText(r.stack_gap, lang)));
  }
  return "";
}

std::string AlternativeSummary(const Alternative& a, Lang lang, const Currency& cur) {
  if (!a.feasible) return NoPlanText(a.reason, cur, lang);
  return Say(lang, "plan.alternative", fmt::arg("gib", a.best.memory.per_gpu_bytes / kGiB),
             fmt::arg("why", PlanWhy(a.best, cur, lang)));
}

std::string FirstWorkingAlternative(const std::vector<Alternative>& alternatives, const Currency& cur, Lang lang) {
  for (const auto& a : alternatives)
    if (a.feasible) return AlternativeChangeText(a, lang) + Say(lang, "colon") + AlternativeSummary(a, lang, cur);
  return "";
}

}  // namespace trainplan
