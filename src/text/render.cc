#include "text/render.h"

#include <algorithm>

#include <fmt/format.h>

#include "text/explain.h"
#include "text/format.h"
#include "text/i18n.h"
#include "text/job_costs_text.h"
#include "text/stack_text.h"
#include "catalog/hardware.h"
#include "core/units.h"

namespace trainplan {

namespace {


std::string Gib(double bytes) { return fmt::format("{:8.2f} GiB", bytes / kGiB); }

/// The GPU side of the estimate's answer: fits (with its headroom), at the edge, or does not fit.
std::string MemoryVerdict(const MemoryEstimate& m, Lang lang) {
  if (m.GpuOverCapacity())
    return Say(lang, "est.does_not_fit", fmt::arg("pct", 100 * m.ResidentPeakBytes() / m.capacity_bytes));
  if (m.paged_spill_bytes > 0) return Say(lang, "est.fits_paging");
  if (m.per_gpu_bytes > m.usable_bytes) return Say(lang, "est.fits_but", fmt::arg("edge", EdgeText(m, lang)));
  if (m.load_peak_bytes > m.usable_bytes) return Say(lang, "est.fits_load_edge");
  return Say(lang, "est.fits", fmt::arg("pct", 100 * m.usable_bytes / m.capacity_bytes),
             fmt::arg("usable", m.usable_bytes / kGiB));
}

/// "  label              value": a label padded to the estimate's column, in either language.
std::string Row(Lang lang, std::string_view key, const std::string& value) {
  return fmt::format("  {:<18} {}\n", Say(lang, key), value);
}

/// Host RAM the offload needs per node, against the RAM given.
std::string HostRamLine(const MemoryEstimate& m, Lang lang) {
  std::string value = Say(lang, "est.per_node", fmt::arg("amount", HostRamText(m.host_bytes)));
  if (m.host_limit_bytes > 0)
    value += Say(lang, "est.host_given", fmt::arg("limit", HostRamText(m.host_limit_bytes)),
                 fmt::arg("verdict", Say(lang, m.HostOverLimit() ? "est.host_does_not_fit" : "est.host_fits")));
  return Row(lang, "est.host_ram_needed", value);
}

/// The figures beside the step peak: paged optimizer state, side-stream cache (both in the total, not in the fit)
/// and the load-time peak (which the fit uses when larger).
std::string MemorySideLines(const MemoryEstimate& m, Lang lang) {
  std::string out;
  if (m.pageable_bytes > 0)
    out += Row(lang, "est.pageable",
               Gib(m.pageable_bytes) + "  " +
                   Say(lang, "est.pageable_line",
                       fmt::arg("spill", m.paged_spill_bytes > 0 ? Say(lang, "est.pageable_spill",
                                                                       fmt::arg("gib", m.paged_spill_bytes / kGiB))
                                                                 : "")));
  if (m.stream_cache_bytes > 0)
    out += Row(lang, "est.stream_cache", Gib(m.stream_cache_bytes) + "  " + Say(lang, "est.stream_cache_line"));
  out += Row(lang, "est.load_peak",
             Gib(m.load_peak_bytes) + "  " +
                 Say(lang, "est.load_peak_line",
                     fmt::arg("binds", m.LoadPeakBinds() ? Say(lang, "est.load_peak_binds") : "")));
  if (m.load_host_bytes > 0)
    out += Row(lang, "est.host_at_load",
               fmt::format("{:>8} ", HostRamText(m.load_host_bytes)) +
                   Say(lang, "est.host_at_load_line",
                       fmt::arg("verdict", m.host_limit_bytes > 0 && m.load_host_bytes > m.host_limit_bytes
                                               ? Say(lang, "est.host_at_load_over")
                                               : "")));
  return out;
}

/// The estimate's step time, throughput and total time.
std::string RenderEstimateTime(const Scenario& s, const TimeEstimate& t, Lang lang) {
  std::string out = "\n";
  out += Say(lang, "est.step_time", fmt::arg("s", t.step_s)) + "\n";
  for (size_t i = 0; i < t.seconds.size(); ++i) {
    if (t.seconds[i] <= 0) continue;
    out += Row(lang, std::string("time.") + TimeTermName(static_cast<TimeTerm>(i)),
               fmt::format("{:9.3f} s  {:5.1f}%", t.seconds[i], 100 * t.seconds[i] / t.step_s));
  }
  out += Say(lang, "est.throughput", fmt::arg("tps", t.tokens_per_s),
             fmt::arg("per_gpu", t.tokens_per_s / s.hardware.gpus), fmt::arg("model_tflops", t.model_tflops_per_gpu),
             fmt::arg("hw_tflops", t.hardware_tflops_per_gpu)) +
         "\n";
  out += Say(lang, "est.mfu", fmt::arg("mfu", 100 * t.mfu), fmt::arg("hfu", 100 * t.hfu)) + "\n";
  if (s.training.tokens > 0)
    out += Say(lang, "est.total_tokens", fmt::arg("tokens", s.training.tokens), fmt::arg("steps", t.steps),
               fmt::arg("duration", FormatDuration(t.total_s, lang)), fmt::arg("gpu_hours", t.gpu_hours)) +
           "\n";
  else
    out += Say(lang, "est.total_one_step", fmt::arg("duration", FormatDuration(t.total_s, lang))) + "\n";
  out += "  ";
  out += Say(lang, "est.training_fixed", fmt::arg("training", FormatDuration(t.training_s, lang)),
             fmt::arg("fixed", FormatDuration(t.fixed_s, lang)), fmt::arg("why", FixedCostsText(t, lang))) +
         "\n";
  if (t.evaluation_s > 0)
    out += "  " +
           Say(lang, "est.evaluation", fmt::arg("duration", FormatDuration(t.evaluation_s, lang)),
               fmt::arg("count", t.evaluations), fmt::arg("sequences", s.training.eval_sequences),
               fmt::arg("interval", s.training.eval_interval_steps),
               fmt::arg("pass", FormatDuration(t.evaluation_pass_s, lang))) +
           "\n";
  if (t.interruption_s > 0)
    out += "  " + Say(lang, "est.interruptions", fmt::arg("duration", FormatDuration(t.interruption_s, lang))) + "\n";
  return out;
}

/// The plan table's host RAM cell: what offload needs per node, "-" without offload.
std::string HostRamCell(const Plan& p) { return p.memory.host_bytes > 0 ? HostRamText(p.memory.host_bytes) : "-"; }

}  // namespace

std::string HumanCount(double n) {
  if (n >= 1e12) return fmt::format("{:.2f} T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.2f} M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.2f} K", n / 1e3);
  return fmt::format("{:.0f}", n);
}


std::string RenderModel(const ModelSpec& m, const ParamCounts& p) {
  std::string out = fmt::format("{}{}  ({})\n", m.name, m.approximate ? "  [approximate generic shape]" : "",
                                m.model_type);
  if (!m.hf_id.empty()) out += fmt::format("  Hugging Face: {}\n", m.hf_id);
  out += fmt::format("  source: {}\n", m.source);
  out += fmt::format("  layers {}, hidden {}, vocab {}, {} embeddings\n", m.num_layers, m.hidden_size,
                     m.vocab_size, m.tie_word_embeddings ? "tied" : "untied");
  auto row = [&](const char* name, int64_t n) {
    if (n != 0) out += fmt::format("  {:<16} {:>18L}  {:>10}\n", name, n, HumanCount(static_cast<double>(n)));
  };
  out += "  parameters:\n";
  row("embedding", p.embedding);
  row("attention", p.attention);
  row("mlp", p.mlp);
  row("experts", p.experts);
  row("shared experts", p.shared_experts);
  row("router", p.router);
  row("norms", p.norms);
  row("lm_head", p.lm_head);
  row("total", p.total);
  if (p.active != p.total) row("active/token", p.active);
  row("MTP (ckpt only)", p.checkpoint_extra);
  row("vision (frozen)", p.vision);
  for (const auto& w : m.warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}

std::string RenderEstimate(const Scenario& s, const Estimate& e, Lang lang) {
  const Strategy& st = s.strategy;
  std::string out;
  out += Say(lang, "est.header", fmt::arg("model", s.model.name), fmt::arg("method", ToString(s.training.method)),
             fmt::arg("gpus", s.hardware.gpus), fmt::arg("gpu", s.hardware.gpu.name),
             fmt::arg("per_node", s.hardware.gpus_per_node), fmt::arg("nodes", s.hardware.nodes()),
             fmt::arg("plural", s.hardware.nodes() == 1 ? "" : "s")) +
         "\n";
  out += Say(lang, "est.strategy", fmt::arg("tp", st.tp), fmt::arg("pp", st.pp), fmt::arg("dp", st.dp),
             fmt::arg("cp", st.cp), fmt::arg("ep", st.ep), fmt::arg("zero", st.zero),
             fmt::arg("recompute", ToString(st.recompute)), fmt::arg("sp", st.sequence_parallel ? "on" : "off"),
             fmt::arg("offload", ToString(st.offload)), fmt::arg("flash", st.flash_attention ? "on" : "off"),
             fmt::arg("interleave", st.interleave)) +
         "\n";
  out +=
      Say(lang, "est.batch", fmt::arg("micro", s.training.micro_batch), fmt::arg("seq", s.training.seq_len),
          fmt::arg("global", GlobalBatch(s)), fmt::arg("accum", GradAccumSteps(s)),
          fmt::arg("precision", ToString(s.training.precision)), fmt::arg("optimizer", ToString(s.training.optimizer)),
          fmt::arg("framework", ToString(s.training.framework))) +
      "\n";
  out += "\n";
  out +=
      Say(lang, "est.params", fmt::arg("total_h", HumanCount(e.params.total)), fmt::arg("total", e.params.total),
          fmt::arg("trainable", HumanCount(e.trainable.trainable)), fmt::arg("active", HumanCount(e.params.active))) +
      "\n";
  // Image-text checkpoints: the tower is loaded and held with the weights but never trained.
  if (e.params.vision > 0) {
    out += "  ";
    out += Say(lang, "est.vision", fmt::arg("human", HumanCount(static_cast<double>(e.params.vision))),
               fmt::arg("count", e.params.vision)) +
           "\n";
  }

  out += "\n";
  out += Say(lang, "est.memory_heading") + "\n";
  for (size_t i = 0; i < e.memory.bytes.size(); ++i) {
    if (e.memory.bytes[i] == 0) continue;
    out += Row(lang, std::string("mem.") + MemTermName(static_cast<MemTerm>(i)), Gib(e.memory.bytes[i]));
  }
  out += Row(lang, "est.total",
             Gib(e.memory.per_gpu_bytes) + "  " +
                 Say(lang, "est.of_capacity", fmt::arg("capacity", e.memory.capacity_bytes / kGiB),
                     fmt::arg("verdict", MemoryVerdict(e.memory, lang))));
  out += MemorySideLines(e.memory, lang);
  if (e.memory.host_bytes > 0 || e.memory.host_limit_bytes > 0) out += HostRamLine(e.memory, lang);
  if (!e.options.empty()) {
    out += Say(lang, "est.options_heading") + "\n";
    for (const auto& o : e.options)
      out += fmt::format("  {} {:<66} {}\n", o.fits ? "+" : "-", FitChangeText(o, lang),
                         Say(lang, "est.option_per_gpu", fmt::arg("gib", Gib(o.per_gpu_bytes)),
                             fmt::arg("host", o.host_bytes > 0 ? Say(lang, "est.option_host",
                                                                     fmt::arg("amount", HostRamText(o.host_bytes)))
                                                               : "")));
  }
  out += RenderEstimateTime(s, e.time, lang);

  out += "\n";
  out += Say(lang, "est.assumptions") + "\n";
  for (const auto& a : EstimateAssumptions(s, e, lang)) out += fmt::format("  - {}\n", a);
  for (const auto& w : EstimateWarnings(s, e, lang)) out += Say(lang, "warning", fmt::arg("text", w)) + "\n";
  out += Say(lang, "est.confidence", fmt::arg("text", ConfidenceText(e.confidence, lang))) + "\n";
  return out;
}

std::string RenderPlan(const Scenario& job, const PlanResult& r, const Currency& cur, Lang lang) {
  std::string out =
      Say(lang, "plan.header", fmt::arg("model", job.model.name), fmt::arg("method", ToString(job.training.method)),
          fmt::arg("tokens", job.training.tokens), fmt::arg("seq", job.training.seq_len)) +
      "\n";
  if (!r.feasible) {
    out += Say(lang, "plan.none", fmt::arg("why", NoPlanText(r.reason, cur, lang))) + "\n";
  } else {
    out += fmt::format("\n{:<3} {:<14} {:>6} {:<10} {:<44} {:>11} {:>8} {:>8} {:>6} {:>8} {:>12}\n", "#",
                       Say(lang, "plan.col.gpu"), Say(lang, "plan.col.gpus"), Say(lang, "plan.col.framework"),
                       Say(lang, "plan.col.strategy"), Say(lang, "plan.col.mem"), Say(lang, "plan.col.host"),
                       Say(lang, "plan.col.mfu"), Say(lang, "plan.col.time"), Say(lang, "plan.col.fixed"),
                       Say(lang, "plan.col.cost", fmt::arg("code", cur.code)));
    bool any_edge = false;
    for (size_t i = 0; i < r.plans.size(); ++i) {
      const Plan& p = r.plans[i];
      const std::string strategy = StrategyText(p);
      any_edge = any_edge || p.memory.at_edge;
      out += fmt::format("{:<3} {:<14} {:>6} {:<10} {:<44} {:>6.1f} GiB{} {:>8} {:>7.1f}% {:>6} {:>8} {:>12}\n", i + 1,
                         p.gpu_id, p.gpus, ToString(p.framework), strategy, p.memory.per_gpu_bytes / kGiB,
                         p.memory.at_edge ? "!" : " ", HostRamCell(p), 100 * p.time.mfu, FormatDuration(p.time.total_s, lang),
                         FormatDuration(p.time.fixed_s, lang),
                         p.price_per_gpu_hour > 0 ? FormatMoney(p.cost_usd, cur).substr(cur.symbol.size())
                                                  : Say(lang, "plan.no_price"));
    }
    if (any_edge) out += Say(lang, "plan.edge", fmt::arg("pct", 100 * job.hardware.usable_memory_fraction)) + "\n";
    out += "\n";
    out += Say(lang, "plan.why", fmt::arg("why", PlanWhy(r.plans[0], cur, lang))) + "\n";
  }
  for (const auto& gap : r.skipped) {
    const bool is_reason = r.reason.code == NoPlanCode::kUnsupportedOnStack && r.reason.stack_gap.gpu_id == gap.gpu_id;
    if (!is_reason) out += Say(lang, "note", fmt::arg("text", SkippedGpuText(gap, lang))) + "\n";
  }
  if (!r.pareto.empty()) {
    out += "\n";
    out += Say(lang, "plan.pareto") + "\n";
    for (const Plan& p : r.pareto)
      out += fmt::format("  {:>10}  {}{:>12.0f}  {} x {} ({}){}\n", FormatDuration(p.time.total_s, lang), cur.symbol,
                         FromUsd(p.cost_usd, cur), p.gpus, p.gpu_id, ToString(p.framework),
                         p.memory.at_edge ? Say(lang, "list.comma") + EdgeText(p.memory, lang) : "");
  }
  if (!r.alternatives.empty()) {
    out += "\n";
    out += Say(lang, "plan.alternatives") + "\n";
    for (const auto& a : r.alternatives)
      out += fmt::format("  {} {}: {}\n", a.feasible ? "+" : "-", AlternativeChangeText(a, lang), AlternativeSummary(a, lang));
  }
  out += "\n";
  out += Say(lang, "plan.searched", fmt::arg("enumerated", r.enumerated), fmt::arg("evaluated", r.evaluated),
             fmt::arg("seconds", r.seconds), fmt::arg("threads", r.threads),
             fmt::arg("rate", r.evaluated / std::max(r.seconds, 1e-9) / 1e6)) +
         "\n";
  if (const std::string catalogs = UserCatalogsText(lang); !catalogs.empty()) out += catalogs + "\n";
  return out;
}

std::string RenderModelCatalog(const std::vector<CatalogModel>& models) {
  std::string out = fmt::format("{:<24} {:<44} {:>10} {:>10}\n", "id", "hugging face", "total", "active");
  for (const auto& [id, hf_id, p] : models) {
    out += fmt::format("{:<24} {:<44} {:>10} {:>10}\n", id, hf_id, HumanCount(p.total),
                       p.active == p.total ? "" : HumanCount(p.active));
  }
  out += "generic-<N>b             any size (approximate Llama-style shape, e.g. generic-1000b)\n";
  return out;
}

std::string RenderGpuCatalog() {
  std::string out = fmt::format("{:<16} {:<32} {:>8} {:>9} {:>9} {:>9} {:>10} {:>6} {:>5}  {}\n", "id", "name",
                                "mem GiB", "BF16 TF/s", "FP8 TF/s", "HBM GB/s", "NVLink GB/s", "TDP W", "node",
                                "figures");
  for (const auto& g : GpuCatalog()) {
    out += fmt::format("{:<16} {:<32} {:>8.0f} {:>9.1f} {:>9.1f} {:>9.0f} {:>10.0f} {:>6.0f} {:>5}  {}\n", g.id,
                       g.name, g.memory_bytes / kGiB, g.bf16_tflops, g.fp8_tflops, g.memory_bw_bytes_per_s / 1e9,
                       g.nvlink_bytes_per_s / 1e9, g.tdp_w, DefaultGpusPerNode(g), g.basis);
  }
  out += "TFLOP/s are dense tensor figures (not 2:4 sparse); NVLink is the bidirectional total per GPU; node: the\n"
         "GPUs per node a plan takes by default (an NVL72 rack is one NVLink domain); figures: from a shipping part's\n"
         "datasheet, or announced (preliminary, not yet shipping).\n";
  return out;
}

}  // namespace trainplan
