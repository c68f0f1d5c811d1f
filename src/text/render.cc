#include "text/render.h"

#include <algorithm>

#include <fmt/format.h>

#include "text/explain.h"
#include "text/format.h"
#include "text/job_costs_text.h"
#include "text/stack_text.h"
#include "catalog/hardware.h"
#include "core/units.h"

namespace trainplan {

namespace {


std::string Gib(double bytes) { return fmt::format("{:8.2f} GiB", bytes / kGiB); }

/// The GPU side of the estimate's answer: fits (with its headroom), at the edge, or does not fit.
std::string MemoryVerdict(const MemoryEstimate& m) {
  if (m.GpuOverCapacity())
    return fmt::format("DOES NOT FIT ({:.0f}% of capacity)", 100 * m.ResidentPeakBytes() / m.capacity_bytes);
  if (m.paged_spill_bytes > 0) return "fits only by paging optimizer states to host RAM (slower steps)";
  if (m.per_gpu_bytes > m.usable_bytes) return "fits, but " + EdgeText(m);
  if (m.load_peak_bytes > m.usable_bytes) return "fits, but loading the weights is at the edge";
  return fmt::format("fits ({:.0f}% usable: {:.1f} GiB)", 100 * m.usable_bytes / m.capacity_bytes,
                     m.usable_bytes / kGiB);
}

/// Host RAM the offload needs per node, against the RAM given.
std::string HostRamLine(const MemoryEstimate& m) {
  std::string line = fmt::format("  {:<18} {:>8} per node", "host RAM needed", HostRamText(m.host_bytes));
  if (m.host_limit_bytes > 0)
    line += fmt::format(" of {} given -> {}", HostRamText(m.host_limit_bytes),
                        m.HostOverLimit() ? "DOES NOT FIT the host" : "fits");
  return line + "\n";
}

/// The figures beside the step peak: paged optimizer state and the load-time peak (which the fit uses when larger).
std::string MemorySideLines(const MemoryEstimate& m) {
  std::string out;
  if (m.pageable_bytes > 0)
    out += fmt::format("  {:<18} {}  of the total: paged optimizer states, counted by nvidia-smi while resident, "
                       "not by torch.cuda.memory_allocated{}\n",
                       "pageable", Gib(m.pageable_bytes),
                       m.paged_spill_bytes > 0
                           ? fmt::format("; {:.2f} GiB page to host RAM", m.paged_spill_bytes / kGiB)
                           : "");
  out += fmt::format("  {:<18} {}  loading the weights{}\n", "load-time peak", Gib(m.load_peak_bytes),
                     m.LoadPeakBinds() ? " (above the step peak: the fit is judged on it)" : "");
  if (m.load_host_bytes > 0)
    out += fmt::format("  {:<18} {:>8} rank 0 reads the full state dict before sharding it{}\n", "host RAM at load",
                       HostRamText(m.load_host_bytes),
                       m.host_limit_bytes > 0 && m.load_host_bytes > m.host_limit_bytes ? " -> DOES NOT FIT the host"
                                                                                          : "");
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

std::string RenderEstimate(const Scenario& s, const Estimate& e) {
  const Strategy& st = s.strategy;
  std::string out;
  out += fmt::format("{}: {} on {} x {} ({} per node, {} node{})\n", s.model.name, ToString(s.training.method),
                     s.hardware.gpus, s.hardware.gpu.name, s.hardware.gpus_per_node, s.hardware.nodes(),
                     s.hardware.nodes() == 1 ? "" : "s");
  out += fmt::format(
      "strategy: tp={} pp={} dp={} cp={} ep={} zero={} recompute={} seq_parallel={} offload={} flash={} "
      "interleave={}\n",
      st.tp, st.pp, st.dp, st.cp, st.ep, st.zero, ToString(st.recompute), st.sequence_parallel ? "on" : "off",
      ToString(st.offload), st.flash_attention ? "on" : "off", st.interleave);
  out += fmt::format("batch: micro {} x seq {} , global {} sequences ({} accumulation steps), {} {} {}\n",
                     s.training.micro_batch, s.training.seq_len, GlobalBatch(s), GradAccumSteps(s),
                     ToString(s.training.precision), ToString(s.training.optimizer), ToString(s.training.framework));
  out += fmt::format("\nparameters: total {} ({}), trainable {}, active/token {}\n", HumanCount(e.params.total),
                     e.params.total, HumanCount(e.trainable.trainable), HumanCount(e.params.active));
  // Image-text checkpoints: the tower is loaded and held with the weights but never trained.
  if (e.params.vision > 0)
    out += fmt::format("  vision tower (frozen) {} ({}): in the checkpoint and on the first stage, not trained\n",
                       HumanCount(static_cast<double>(e.params.vision)), e.params.vision);

  out += fmt::format("\nmemory per GPU (busiest GPU):\n");
  for (size_t i = 0; i < e.memory.bytes.size(); ++i) {
    if (e.memory.bytes[i] == 0) continue;
    out += fmt::format("  {:<18} {}\n", MemTermName(static_cast<MemTerm>(i)), Gib(e.memory.bytes[i]));
  }
  out += fmt::format("  {:<18} {}  of {:.1f} GiB -> {}\n", "total", Gib(e.memory.per_gpu_bytes),
                     e.memory.capacity_bytes / kGiB, MemoryVerdict(e.memory));
  out += MemorySideLines(e.memory);
  if (e.memory.host_bytes > 0 || e.memory.host_limit_bytes > 0) out += HostRamLine(e.memory);
  if (!e.options.empty()) {
    out += "options on the same GPUs (`trainplan plan` also searches more or other GPUs and TP/PP):\n";
    for (const auto& o : e.options)
      out += fmt::format("  {} {:<66} {} per GPU{}\n", o.fits ? "+" : "-", FitChangeText(o), Gib(o.per_gpu_bytes),
                         o.host_bytes > 0 ? fmt::format(", host RAM {}", HostRamText(o.host_bytes)) : "");
  }

  const TimeEstimate& t = e.time;
  out += fmt::format("\nstep time {:.3f} s:\n", t.step_s);
  for (size_t i = 0; i < t.seconds.size(); ++i) {
    if (t.seconds[i] <= 0) continue;
    out += fmt::format("  {:<18} {:9.3f} s  {:5.1f}%\n", TimeTermName(static_cast<TimeTerm>(i)), t.seconds[i],
                       100 * t.seconds[i] / t.step_s);
  }
  out += fmt::format("throughput: {:.0f} tokens/s ({:.0f} per GPU), {:.1f} model TFLOP/s per GPU, "
                     "{:.1f} hardware TFLOP/s per GPU\n",
                     t.tokens_per_s, t.tokens_per_s / s.hardware.gpus, t.model_tflops_per_gpu,
                     t.hardware_tflops_per_gpu);
  out += fmt::format("MFU {:.1f}%, HFU {:.1f}%\n", 100 * t.mfu, 100 * t.hfu);
  if (s.training.tokens > 0) {
    out += fmt::format("total: {:.3g} tokens in {:.0f} steps: {} ({:.0f} GPU-hours)\n", s.training.tokens, t.steps,
                       FormatDuration(t.total_s), t.gpu_hours);
  } else {
    out += fmt::format("total: no --tokens given, so one step only: {}\n", FormatDuration(t.total_s));
  }
  out += fmt::format("  training {} + fixed {}: {}\n", FormatDuration(t.training_s), FormatDuration(t.fixed_s),
                     FixedCostsText(t));

  out += "\nassumptions:\n";
  for (const auto& a : EstimateAssumptions(s, e)) out += fmt::format("  - {}\n", a);
  for (const auto& w : EstimateWarnings(s, e)) out += fmt::format("warning: {}\n", w);
  out += fmt::format("confidence: {}\n", ConfidenceText(e.confidence));
  return out;
}

std::string RenderPlan(const Scenario& job, const PlanResult& r, const Currency& cur) {
  std::string out = fmt::format("{}: {} of {} tokens, seq {}\n", job.model.name, ToString(job.training.method),
                                fmt::format("{:.3g}", job.training.tokens), job.training.seq_len);
  if (!r.feasible) {
    out += fmt::format("NO PLAN: {}\n", NoPlanText(r.reason, cur));
  } else {
    out += fmt::format("\n{:<3} {:<14} {:>6} {:<10} {:<44} {:>11} {:>8} {:>8} {:>6} {:>8} {:>12}\n", "#", "gpu",
                       "gpus", "framework", "strategy", "mem/GPU", "host RAM", "MFU", "time", "fixed", "cost " + cur.code);
    bool any_edge = false;
    for (size_t i = 0; i < r.plans.size(); ++i) {
      const Plan& p = r.plans[i];
      const std::string strategy = StrategyText(p);
      any_edge = any_edge || p.memory.at_edge;
      out += fmt::format("{:<3} {:<14} {:>6} {:<10} {:<44} {:>6.1f} GiB{} {:>8} {:>7.1f}% {:>6} {:>8} {:>12}\n", i + 1,
                         p.gpu_id, p.gpus, ToString(p.framework), strategy, p.memory.per_gpu_bytes / kGiB,
                         p.memory.at_edge ? "!" : " ", HostRamCell(p), 100 * p.time.mfu,
                         FormatDuration(p.time.total_s), FormatDuration(p.time.fixed_s),
                         p.price_per_gpu_hour > 0 ? FormatMoney(p.cost_usd, cur).substr(cur.symbol.size())
                                                  : std::string("no price"));
    }
    if (any_edge)
      out += fmt::format("! at the edge: above the {:.0f}% of GPU memory a plan may fill (--usable-memory); ranked "
                         "after every plan that keeps the headroom\n",
                         100 * job.hardware.usable_memory_fraction);
    out += fmt::format("\nwhy #1: {}\n", PlanWhy(r.plans[0], cur));
  }
  for (const auto& gap : r.skipped) {
    const bool is_reason = r.reason.code == NoPlanCode::kUnsupportedOnStack && r.reason.stack_gap.gpu_id == gap.gpu_id;
    if (!is_reason) out += fmt::format("note: {}\n", SkippedGpuText(gap));
  }
  if (!r.pareto.empty()) {
    out += "\ntime vs cost (Pareto front, fastest first):\n";
    for (const Plan& p : r.pareto)
      out += fmt::format("  {:>10}  {}{:>12.0f}  {} x {} ({}){}\n", FormatDuration(p.time.total_s), cur.symbol,
                         FromUsd(p.cost_usd, cur), p.gpus,
                         p.gpu_id, ToString(p.framework), p.memory.at_edge ? ", " + EdgeText(p.memory) : "");
  }
  if (!r.alternatives.empty()) {
    out += "\nalternatives:\n";
    for (const auto& a : r.alternatives)
      out += fmt::format("  {} {}: {}\n", a.feasible ? "+" : "-", AlternativeChangeText(a), AlternativeSummary(a));
  }
  out += fmt::format("\nsearched {} candidates ({} evaluated) in {:.3f} s on {} threads: {:.2f} M evaluations/s\n",
                     r.enumerated, r.evaluated, r.seconds, r.threads, r.evaluated / std::max(r.seconds, 1e-9) / 1e6);
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
