#include "text/explain.h"

#include <cmath>

#include <fmt/format.h>

#include "catalog/efficiency.h"
#include "catalog/user_catalog.h"
#include "core/framework.h"
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

std::string RecomputeText(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "no activation recomputation";
    case Recompute::kSelective: return "selective recomputation of the attention core (Korthikanti et al. 2022)";
    case Recompute::kFull: return "full recomputation: only each layer's input is kept, one extra forward pass";
  }
  return "";
}

std::string WarningText(const Scenario& s, const EstimateWarning& w) {
  switch (w.code) {
    case WarningCode::kApproximateModel:
      return fmt::format("{} is a generic shape, not a published config: counts are approximate", s.model.name);
    case WarningCode::kModelNote: return s.model.warnings.at(w.model_note);
    case WarningCode::kDoesNotFit:
      return fmt::format("does not fit: needs {:.1f} GiB per GPU on {:.1f} GiB", w.needed_bytes / kGiB,
                         w.capacity_bytes / kGiB);
    case WarningCode::kAtEdge:
      return fmt::format("at the edge: {:.1f} of {:.0f} GiB per GPU, above the {:.0f}% usable ({:.1f} GiB); allocator "
                         "fragmentation, NCCL buffers or the estimate's error can run it out of memory",
                         w.needed_bytes / kGiB, w.capacity_bytes / kGiB, 100 * w.usable_bytes / w.capacity_bytes,
                         w.usable_bytes / kGiB);
    case WarningCode::kHostRamShort:
      return fmt::format("does not fit the host: offload needs {} of host RAM per node, {} given",
                         HostRamText(w.needed_bytes), HostRamText(w.capacity_bytes));
    case WarningCode::kTpSpansNodes:
      return fmt::format("tp={} spans nodes ({} GPUs per node): TP traffic crosses {}", w.tp, w.gpus_per_node,
                         s.hardware.inter_node.name);
    case WarningCode::kNoNvlink:
      return fmt::format("{} has no NVLink: GPU-to-GPU traffic goes over {}", s.hardware.gpu.name,
                         s.hardware.intra_node.name);
    case WarningCode::kUnsupportedOnStack: return "will not run as asked: " + StackGapText(w.stack_gap);
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
std::string SamplesText(const Training& tr) {
  const SequenceShape shape = ShapeOf(tr);
  const std::string lengths =
      tr.sample_lengths.empty()
          ? fmt::format("samples of mean {} and at most {} tokens (lengths assumed max x U^k, k = max/mean - 1)",
                        Tokens(tr.sample_mean_tokens), Tokens(tr.sample_max_tokens))
          : fmt::format("samples of mean {} and at most {} tokens (a histogram of {} lengths)",
                        Tokens(shape.mean_sample_tokens), Tokens(shape.peak_row_tokens), tr.sample_lengths.size());
  const std::string cut =
      shape.truncated ? fmt::format("; those longer than seq_len are cut to {} tokens", GroupedCount(tr.seq_len)) : "";
  if (tr.packing)
    return fmt::format("{}{}, packed into rows of {} tokens; each sample attends only to itself (FlashAttention "
                       "varlen from position_ids, or a block mask): {} keys per query on average",
                       lengths, cut, GroupedCount(tr.seq_len), Tokens(shape.attention_tokens));
  const double rows = static_cast<double>(tr.micro_batch) * shape.rows_per_example;
  const char* order = tr.group_by_length ? " (group_by_length: a slice of a length-sorted mega-batch of 50)" : "";
  return fmt::format("{}{}, each micro-batch of {} rows{} padded to its longest: {} tokens per row on average, "
                     "{:.0f}% of them padding; time counts only the samples' tokens, memory holds the longest "
                     "micro-batch ({} x {} tokens); --packing fills rows of seq_len instead",
                     lengths, cut, Tokens(rows), order, Tokens(shape.row_tokens), 100 * shape.padding_fraction(),
                     Tokens(rows), Tokens(shape.peak_row_tokens));
}

/// What the preference objective adds: both responses of a pair, the reference model's forward passes and
/// whether it is a second copy of the weights.
std::string PreferenceText(const Training& tr) {
  const SequenceShape shape = ShapeOf(tr);
  std::string out = fmt::format("objective {}: ", ToString(tr.objective));
  if (IsPairedObjective(tr.objective)) {
    out += "the chosen and rejected responses of each pair go through the policy together (2 rows per example: "
           "twice the activations and logits of one)";
  } else {
    out += "one labelled response per example, plus a mismatched completion for the KL estimate run forward "
           "without gradient";
  }
  if (!HasReferenceModel(tr.objective)) return out + "; no reference model (the loss uses the policy alone)";
  out += fmt::format("; a frozen reference model runs {:g} forward pass(es) per training pass, no backward",
                     shape.forward_only_share());
  return out + (HoldsReferenceWeights(tr)
                    ? fmt::format(", and holds a second copy of the weights in {} (sharded like the policy's "
                                  "under ZeRO-3 / FSDP)",
                                  ToString(tr.precision))
                    : "; with LoRA or QLoRA it is the base model with the adapters disabled: no second copy");
}

std::vector<std::string> SequenceAssumptions(const Training& tr) {
  std::vector<std::string> out;
  if (tr.objective != TrainingObjective::kSft) out.push_back(PreferenceText(tr));
  if (ShapeOf(tr).described) out.push_back(SamplesText(tr));
  return out;
}

}  // namespace

namespace {

std::string LossText(const Training& tr) {
  const char* how = "";
  switch (EffectiveLoss(tr)) {
    case Loss::kStandard: how = "standard cross-entropy on full logits"; break;
    case Loss::kChunked: how = "chunked cross-entropy (torchtune CEWithChunkedOutputLoss): fp32 one chunk at a time"; break;
    case Loss::kFused: how = "fused cross-entropy kernel (flash-attn): logits and their gradient in their own dtype, fp32 per row only"; break;
    case Loss::kFusedLinear: how = "fused linear cross-entropy (Liger): logits one chunk at a time"; break;
    case Loss::kCut: how = "Cut Cross-Entropy (Wijmans et al. 2024): no logits kept"; break;
  }
  const char* whose = tr.loss ? "chosen" : (tr.liger && EffectiveLoss(tr) == Loss::kFusedLinear ? "Liger's" : "the engine's default");
  return fmt::format("loss {}: {} ({})", ToString(EffectiveLoss(tr)), how, whose);
}

/// The memory mechanisms in effect besides the loss: each named only where it applies.
std::string MemoryMechanismsText(const Scenario& s) {
  const Training& tr = s.training;
  std::string out = LossText(tr);
  if (EffectiveOptimizerInBackward(tr, s.hardware.gpus))
    out += "; optimizer step in backward: one parameter group's gradients alive at a time";
  if (EffectiveActivationOffloading(tr, s.strategy.recompute))
    out += "; activations offloaded to host RAM except the working set";
  if (IsPagedOptimizer(tr.optimizer))
    out += "; paged optimizer states in unified memory: counted on the GPU while resident, evicted to host RAM "
           "when the GPU runs short";
  if (tr.method == Method::kQlora)
    out += tr.double_quant ? "; NF4 with double quantisation (4.127 bits per weight)"
                           : "; NF4 without double quantisation (4.5 bits per weight)";
  if (tr.dora) out += "; DoRA: a trained magnitude per adapted output and the weight norm rebuilt each forward";
  if (tr.fp32_weights) out += "; bf16-mixed: fp32 weights and gradients, autocast 16-bit copies of trained weights";
  return out;
}

// The kernel the time model runs and why: asked for, or the engine's default; its rate against FlashAttention-2.
std::string AttentionText(const Scenario& s) {
  const EfficiencyCatalog& eff = Efficiency();
  const AttentionKernel kernel = eff.Kernel(s.training.attention, s.strategy.flash_attention, s.training.framework);
  const char* why = s.training.attention != AttentionKernel::kAuto ? "as given"
                    : s.strategy.flash_attention                  ? "the engine's default"
                                                                  : "flash attention off";
  if (kernel == AttentionKernel::kEager)
    return fmt::format("attention eager ({}): scores, softmax and dropout mask are stored and cross HBM", why);
  return fmt::format("attention {} ({}): no s x s score matrix is stored; runs at {:.0f}% of FlashAttention-2's rate "
                     "on this GPU (data/efficiency.json attention_kernels)",
                     AttentionKernelKey(kernel), why, 100 * eff.AttentionRate(kernel, s.hardware.gpu.generation));
}

/// Host-side time: kernel replacements, ZeRO-3's hooks and who builds the batches (data/efficiency.json).
std::string HostTimeText(const Scenario& s) {
  const EfficiencyCatalog& eff = Efficiency();
  const EngineTiming& engine = eff.Engine(s.training.framework);
  std::string out = fmt::format("host time: {:.2f} ms of dispatch per layer pass", 1e3 * engine.host_s_per_layer_pass);
  if (s.training.liger) out += fmt::format(", Liger kernels (fused norms, rotary, SwiGLU: x{:g})", eff.liger.host_factor);
  if (s.training.compile)
    out += fmt::format(", torch.compile (fused elementwise kernels: x{:g}; {:g} s to compile, once)",
                       eff.compile.host_factor, eff.compile_s);
  if (s.strategy.zero >= 3 && engine.zero3_host_s_per_module > 0)
    out += fmt::format("; ZeRO-3 hooks {:.2f} ms per module and pass", 1e3 * engine.zero3_host_s_per_module);
  const int64_t workers = EffectiveDataloaderWorkers(s.training);
  if (workers == 0) return out + fmt::format("; batches built in the training process ({:g} ms per row, no DataLoader workers)",
                                             1e3 * eff.dataloader_s_per_row);
  return out + fmt::format("; batches built by {} DataLoader workers", workers);
}

}  // namespace

std::vector<std::string> EstimateAssumptions(const Scenario& s) {
  const FrameworkProfile& fw = GetFrameworkProfile(s.training.framework);
  std::vector<std::string> out{fmt::format("framework profile: {} ({})", fw.name, fw.source), MemoryMechanismsText(s),
          fmt::format("precision {}, optimizer {}, method {}", ToString(s.training.precision),
                      ToString(s.training.optimizer), ToString(s.training.method)),
          RecomputeText(s.strategy.recompute),
          AttentionText(s),
          fmt::format("GPU peaks are dense datasheet figures for {} ({})", s.hardware.gpu.name,
                      s.hardware.gpu.sources.empty() ? "no source" : s.hardware.gpu.sources[0]),
          fmt::format("links: {} inside a node, {} between nodes", s.hardware.intra_node.name,
                      s.hardware.inter_node.name),
          HostTimeText(s), FixedCostsAssumption(), GlobalBatchText(s)};
  for (std::string& line : SequenceAssumptions(s.training)) out.push_back(std::move(line));
  if (std::string catalogs = UserCatalogsText(); !catalogs.empty()) out.push_back(std::move(catalogs));
  if (auto line = CalibrationAssumption(s)) out.push_back(std::move(*line));
  return out;
}

std::string UserCatalogsText(Lang lang) {
  const std::vector<std::string> files = UserCatalogFiles();
  return files.empty() ? "" : Say(lang, "catalog.user", fmt::arg("files", fmt::format("{}", fmt::join(files, ", "))));
}

std::vector<std::string> EstimateAssumptions(const Scenario& s, const Estimate& e) {
  std::vector<std::string> out = EstimateAssumptions(s);
  const TimeEstimate& t = e.time;
  const GpuSpec& gpu = s.hardware.gpu;
  const std::string link = fmt::format("PCIe {}.0 x{}", gpu.pcie_gen, gpu.pcie_lanes);
  const auto share = [&](double seconds) { return t.step_s > 0 ? 100 * seconds / t.step_s : 0; };
  if (EffectiveActivationOffloading(s.training, s.strategy.recompute)) {
    const double exposed = t[TimeTerm::kActivationOffload];
    const double hidden = t.activation_offload_transfer_s > 0 ? 1 - exposed / t.activation_offload_transfer_s : 1;
    out.push_back(fmt::format("activation offloading adds {:.3g} s per step ({:.1f}%): {:.2f} GB per micro-batch to "
                              "host RAM and back over {}, {:.0f}% hidden behind the layers' compute on a copy stream",
                              exposed, share(exposed), e.memory.offloaded_activation_bytes / kGB, link, 100 * hidden));
  }
  if (IsPagedOptimizer(s.training.optimizer)) {
    const double paged = t[TimeTerm::kPagedOptimizer];
    out.push_back(e.memory.paged_spill_bytes > 0
                      ? fmt::format("paged optimizer: {:.2f} GiB of states spill to host RAM and migrate in and out "
                                    "over {} every step, adding {:.3g} s ({:.1f}%; unified-memory migration at "
                                    "{:.0f}% of the copy rate, an assumption)",
                                    e.memory.paged_spill_bytes / kGiB, link, paged, share(paged),
                                    100 * Efficiency().unified_memory_migration_efficiency)
                      : "paged optimizer: the states fit the GPU, so paging costs no time");
  }
  if (s.training.dora && IsAdapterMethod(s.training.method)) {
    const double dora = t[TimeTerm::kDora];
    out.push_back(fmt::format("DoRA adds {:.3g} s per step ({:.1f}%): each adapted linear rebuilds its weight norm "
                              "every forward{} and rescales its output (PEFT DoraLinearLayer)",
                              dora, share(dora), s.training.method == Method::kQlora ? ", dequantising the 4-bit weight," : ""));
  }
  return out;
}

std::string GlobalBatchText(const Scenario& s) {
  const int64_t batch = GlobalBatch(s);
  const std::string size = fmt::format("global batch {} sequences ({} tokens)", GroupedCount(batch),
                                       GroupedCount(batch * s.training.seq_len));
  if (s.training.global_batch > 0) return size + ", as given";
  const std::string rounded = batch != DefaultGlobalBatch(s.training, s.hardware.gpus)
                                  ? ", rounded up to whole steps of micro-batch x dp"
                                  : "";
  if (s.training.method == Method::kPretrain)
    return fmt::format("{}, the default for pre-training on {} GPUs: 2 Ki tokens per GPU within 4-16 Mi tokens, as "
                       "GPT-3, Llama 2 and Llama 3 were trained{}; --global-batch sets it",
                       size, GroupedCount(s.hardware.gpus), rounded);
  return fmt::format("{}, the default for fine-tuning (Stanford Alpaca's 128){}; --global-batch sets it", size,
                     rounded);
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
             fmt::arg("duration", FormatDuration(k.total_s)), fmt::arg("cost", FormatMoney(k.cost_usd, cur)));
}

std::vector<std::string> EstimateWarnings(const Scenario& s, const Estimate& e) {
  std::vector<std::string> out;
  for (const auto& w : e.warnings) out.push_back(WarningText(s, w));
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
                                                          fmt::arg("price", PriceText(p, cur)))
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
      fmt::arg("duration", FormatDuration(p.time.total_s)), fmt::arg("mfu", 100 * p.time.mfu),
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
  const std::string terms = r.offer != nullptr ? OfferTermsText(*r.offer) : "";
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
      return Say(lang, "noplan.too_slow", fmt::arg("fastest", FormatDuration(r.fastest_s)),
                 fmt::arg("deadline", FormatDuration(r.deadline_s)));
    case NoPlanCode::kNoPrice: return Say(lang, "noplan.no_price", fmt::arg("budget", FormatMoney(r.budget_usd, cur)));
    case NoPlanCode::kOverBudget:
      return Say(lang, "noplan.over_budget", fmt::arg("cheapest", FormatMoney(r.cheapest_usd, cur)),
                 fmt::arg("budget", FormatMoney(r.budget_usd, cur)));
    case NoPlanCode::kDeadlineAndBudget: return Say(lang, "noplan.deadline_and_budget");
    case NoPlanCode::kNotRentable: return NotRentableText(r, lang);
    case NoPlanCode::kUnsupportedOnStack:
      return Say(lang, "noplan.unsupported", fmt::arg("text", StackGapText(r.stack_gap)));
  }
  return "";
}

std::string AlternativeSummary(const Alternative& a, Lang lang) {
  if (!a.feasible) return NoPlanText(a.reason, UsdCurrency(), lang);
  return Say(lang, "plan.alternative", fmt::arg("gib", a.best.memory.per_gpu_bytes / kGiB),
             fmt::arg("why", PlanWhy(a.best, UsdCurrency(), lang)));
}

std::string FirstWorkingAlternative(const std::vector<Alternative>& alternatives) {
  for (const auto& a : alternatives)
    if (a.feasible) return AlternativeChangeText(a) + ": " + AlternativeSummary(a);
  return "";
}

}  // namespace trainplan
