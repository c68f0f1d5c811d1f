#include "catalog/efficiency.h"

#include <algorithm>

#include "catalog/load.h"

namespace trainplan {

namespace {

GenerationCeilings ReadCeilings(const Field& g) {
  return {g.At("matmul_ceiling").Number(0, 1), g.At("attention_ceiling").Number(0, 1)};
}

AttentionKernel ReadKernel(const Field& f) {
  for (AttentionKernel k : kAllAttentionKernels)
    if (f.String() == AttentionKernelKey(k)) return k;
  f.Fail("auto, eager, sdpa, fa2 or fa3");
  return AttentionKernel::kAuto;
}

// Fused kernels: a rate for every generation, optionally another for named generations (FA3 on Hopper).
void ReadAttentionKernels(const Field& kernels, EfficiencyCatalog& c) {
  for (AttentionKernel k : kAllAttentionKernels) {
    if (k == AttentionKernel::kAuto || k == AttentionKernel::kEager) continue;
    const Field entry = kernels.At(AttentionKernelKey(k));
    entry.At("source").String();
    c.attention_rates[static_cast<int>(k)].fill(entry.At("relative_rate").Number(0, 10));
    if (const auto by = entry.Get("by_generation")) {
      for (const auto& [name, value] : by->Members()) {
        const auto generation = ParseGpuGeneration(name);
        if (!generation) value.Fail("a generation of data/gpus.json");
        c.attention_rates[static_cast<int>(k)][static_cast<int>(*generation)] = value.Number(0, 10);
      }
    }
  }
}

KernelTiming ReadKernelTiming(const Field& k) {
  k.At("source").String();
  return {k.At("elementwise_traffic").Number(0, 100), k.At("host_factor").Number(0, 1)};
}

/// An optional key of an engine's entry and the source that must come with it: `read` takes the value when present.
template <typename Read>
void ReadSourced(const Field& e, const char* key, const char* source, Read&& read) {
  if (const auto value = e.Get(key)) {
    read(*value);
    e.At(source).String();
  }
}

EngineTiming ReadEngineTiming(const Field& e) {
  EngineTiming t;
  t.grad_reduce_overlap = e.At("grad_reduce_overlap").Bool();
  const Field gather = e.At("zero12_param_gather");
  if (gather.String() != "first_forward" && gather.String() != "after_step") gather.Fail("first_forward or after_step");
  t.zero12_gather_in_forward = gather.String() == "first_forward";
  e.At("zero12_param_gather_source").String();
  ReadSourced(e, "zero2_reduce_every_micro_batch", "zero2_reduce_source",
              [&](const Field& v) { t.zero2_reduce_every_micro_batch = v.Bool(); });
  ReadSourced(e, "zero2_gather_every_micro_batch", "zero2_gather_source",
              [&](const Field& v) { t.zero2_gather_every_micro_batch = v.Bool(); });
  t.host_s_per_layer_pass = e.At("host_s_per_layer_pass").Number(0, 1, true);
  t.elementwise_traffic = e.At("elementwise_traffic").Number(0, 100);
  const Field unit = e.At("zero3_gather_unit");
  if (unit.String() != "layer" && unit.String() != "module") unit.Fail("layer or module");
  t.zero3_gather_per_module = unit.String() == "module";
  t.zero3_prefetch = e.At("zero3_prefetch").Bool();
  t.zero3_host_s_per_module = e.At("zero3_host_s_per_module").Number(0, 1, true);
  e.At("zero3_host_source").String();
  ReadSourced(e, "zero3_host_s_per_gather", "zero3_host_gather_source",
              [&](const Field& v) { t.zero3_host_s_per_gather = v.Number(0, 1, true); });
  ReadSourced(e, "zero3_gather_copy_out", "zero3_copy_out_source",
              [&](const Field& v) { t.zero3_gather_copy_out = v.Bool(); });
  ReadSourced(e, "zero3_legacy_before", "zero3_legacy_source",
              [&](const Field& v) { t.zero3_legacy_before = v.String(); });
  t.dataloader_workers = static_cast<int>(e.At("dataloader_workers").Number(0, 1024, true));
  e.At("dataloader_source").String();
  t.fp8_weight_cache = e.At("fp8_weight_cache").Bool();
  e.At("fp8_source").String();
  ReadSourced(e, "moe_sync_host_s_per_layer", "moe_sync_host_source",
              [&](const Field& v) { t.moe_sync_host_s_per_layer = v.Number(0, 1, true); });
  ReadSourced(e, "grad_accumulation_in_place", "grad_accumulation_source",
              [&](const Field& v) { t.grad_accumulation_in_place = v.Bool(); });
  ReadSourced(e, "micro_batch_sync_host_s", "micro_batch_sync_source",
              [&](const Field& v) { t.micro_batch_sync_host_s = v.Number(0, 1, true); });
  t.default_attention = ReadKernel(e.At("default_attention"));
  if (t.default_attention == AttentionKernel::kAuto) e.At("default_attention").Fail("eager, sdpa, fa2, fa3, triton or cudnn");
  e.At("default_attention_source").String();
  if (const auto legacy = e.Get("attention_legacy_before")) {
    t.attention_legacy_before = legacy->String();
    for (const auto& [name, value] : e.At("attention_legacy_by_generation").Members()) {
      const auto generation = ParseGpuGeneration(name);
      if (!generation) value.Fail("a generation of data/gpus.json");
      t.attention_legacy_rates[static_cast<int>(*generation)] = value.Number(0, 10);
    }
    e.At("attention_legacy_source").String();
  }
  e.At("source").String();  // every engine cites what it was calibrated on
  return t;
}

Fp8Scaling ReadFp8Scaling(const Field& f) {
  const std::string& name = f.String();
  if (name == "delayed") return Fp8Scaling::kDelayed;
  if (name == "current") return Fp8Scaling::kCurrent;
  if (name == "mxfp8") return Fp8Scaling::kMxfp8;
  f.Fail("delayed, current or mxfp8");
  return Fp8Scaling::kDelayed;
}

/// The FP8 recipe each generation's engines default to ("default" for the rest), delayed scaling's history and
/// what the backward GEMMs' split accumulation costs by generation.
void ReadFp8(const Field& fp8, EfficiencyCatalog& c) {
  fp8.At("about").String();
  fp8.At("recipe_source").String();
  fp8.At("amax_history_source").String();
  const Field recipes = fp8.At("recipe_by_generation");
  c.fp8_scaling.fill(ReadFp8Scaling(recipes.At("default")));
  for (const auto& [name, entry] : recipes.Members()) {
    if (name == "default") continue;
    const auto generation = ParseGpuGeneration(name);
    if (!generation) entry.Fail("a generation of data/gpus.json or default");
    c.fp8_scaling[static_cast<int>(*generation)] = ReadFp8Scaling(entry);
  }
  c.fp8_amax_history_len = fp8.At("amax_history_len").Number(0, 1e6);
  fp8.At("split_accumulator_source").String();
  const Field split = fp8.At("split_accumulator_by_generation");
  c.fp8_split_accumulator_cost.fill(split.At("default").Number(1, 4, true));
  for (const auto& [name, entry] : split.Members()) {
    if (name == "default") continue;
    const auto generation = ParseGpuGeneration(name);
    if (!generation) entry.Fail("a generation of data/gpus.json or default");
    c.fp8_split_accumulator_cost[static_cast<int>(*generation)] = entry.Number(1, 4, true);
  }
}

std::string ReadDate(const Field& f) {
  const std::string date = f.String();
  const bool ok = date.size() == 10 && date[4] == '-' && date[7] == '-' &&
                  std::all_of(date.begin(), date.end(), [](char ch) { return ch == '-' || (ch >= '0' && ch <= '9'); });
  if (!ok) f.Fail("a date YYYY-MM-DD");
  return date;
}

Framework ReadEngine(const Field& f) {
  for (Framework fw : kAllFrameworks)
    if (f.String() == FrameworkKey(fw)) return fw;
  f.Fail("hf, torchtune, unsloth, deepspeed, fsdp, megatron, litgpt or torchtitan");
}

/// How many runs determined a factor: absent or 0 when it was not fitted.
int ReadRunCount(const Field& determined_by, std::string_view key) {
  const auto n = determined_by.Get(key);
  return n ? static_cast<int>(n->Int({0, 1000000})) : 0;
}

/// One entry of `calibrations` (docs/calibration.md, "The file"): the engine, a GPU generation or a GPU id,
/// the fitted factors with the runs that determined each, the runs, source and date.
Calibration ReadCalibration(const Field& e, const std::string& file) {
  e.CheckKeys({"engine", "gpu_generation", "gpu", "factors", "determined_by", "runs", "source", "date"});
  Calibration c;
  c.file = file;
  c.engine = ReadEngine(e.At("engine"));
  const auto generation = e.Get("gpu_generation");
  const auto gpu = e.Get("gpu");
  if (generation.has_value() == gpu.has_value()) e.FailMember("gpu_generation", "", "exactly one of gpu_generation and gpu");
  if (generation) {
    c.generation = ParseGpuGeneration(generation->String());
    if (!c.generation) generation->Fail("a generation of data/gpus.json (ampere, hopper, ...)");
  } else {
    c.gpu = gpu->String();
    if (c.gpu.empty()) gpu->Fail("a catalog GPU id");
  }
  const Field factors = e.At("factors");
  factors.CheckKeys({"compute", "communication", "allocator_overhead"});
  if (const auto f = factors.Get("compute")) c.factors.compute = f->Number(kComputeFactorRange.first, kComputeFactorRange.second, true);
  if (const auto f = factors.Get("communication"))
    c.factors.communication = f->Number(kCommunicationFactorRange.first, kCommunicationFactorRange.second, true);
  if (const auto f = factors.Get("allocator_overhead"))
    c.factors.allocator_overhead = f->Number(kAllocatorOverheadRange.first, kAllocatorOverheadRange.second, true);
  const Field determined = e.Section("determined_by");
  determined.CheckKeys({"compute", "communication", "allocator_overhead"});
  c.compute_runs = ReadRunCount(determined, "compute");
  c.communication_runs = ReadRunCount(determined, "communication");
  c.memory_runs = ReadRunCount(determined, "allocator_overhead");
  for (const Field& run : e.At("runs").Items()) c.runs.push_back(run.String());
  c.source = e.At("source").String();
  c.date = ReadDate(e.At("date"));
  return c;
}

/// One entry of `measurements` (the shape `trainplan calibrate --measure` writes).
MachineMeasurement ReadMeasurement(const Field& e, const std::string& file) {
  e.CheckKeys({"gpu", "gpu_name", "gpus", "date", "source", "gemm", "allreduce", "libraries"});
  MachineMeasurement m;
  m.file = file;
  m.gpu = e.At("gpu").String();
  if (m.gpu.empty()) e.At("gpu").Fail("a catalog GPU id");
  if (const auto name = e.Get("gpu_name")) m.gpu_name = name->String();
  m.gpus = static_cast<int>(e.At("gpus").Int({1, 1 << 20}));
  m.date = ReadDate(e.At("date"));
  m.source = e.At("source").String();
  const auto items = [&](std::string_view key) { return e.Has(key) ? e.At(key).Items() : std::vector<Field>{}; };
  for (const Field& g : items("gemm")) {
    g.CheckKeys({"dtype", "m", "n", "k", "tflops"});
    GemmMeasurement x{g.At("dtype").String(), g.At("m").Number(0, 1e7), g.At("n").Number(0, 1e7),
                      g.At("k").Number(0, 1e7), g.At("tflops").Number(0, 1e5)};
    if (x.dtype != "bf16" && x.dtype != "fp16") g.At("dtype").Fail("bf16 or fp16");
    m.gemm.push_back(x);
  }
  for (const Field& a : items("allreduce")) {
    a.CheckKeys({"bytes", "algbw_gbps", "busbw_gbps"});
    m.allreduce.push_back({a.At("bytes").Number(0, 1e15), a.At("algbw_gbps").Number(0, 1e5), a.At("busbw_gbps").Number(0, 1e5)});
  }
  for (const auto& [name, version] : e.Section("libraries").Members()) m.libraries.emplace(name, version.String());
  return m;
}

}  // namespace

const Calibration* EfficiencyCatalog::CalibrationFor(Framework f, const GpuSpec& gpu) const {
  const Calibration* by_generation = nullptr;
  const Calibration* by_gpu = nullptr;
  for (const Calibration& c : calibrations) {
    if (c.engine != f) continue;
    if (!c.gpu.empty() && c.gpu == gpu.id) by_gpu = &c;
    if (c.generation && *c.generation == gpu.generation) by_generation = &c;
  }
  return by_gpu ? by_gpu : by_generation;
}

const MachineMeasurement* EfficiencyCatalog::MeasurementFor(const GpuSpec& gpu) const {
  const MachineMeasurement* found = nullptr;
  for (const MachineMeasurement& m : measurements)
    if (m.gpu == gpu.id) found = &m;
  return found;
}

EfficiencyCatalog LoadEfficiency(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  const Field root = doc.Root();
  EfficiencyCatalog c;
  c.dim_half = root.At("gemm").At("dim_half").Number(0, 1e5);
  ReadFp8(root.At("fp8"), c);
  c.hbm_efficiency = root.At("hbm_efficiency").At("value").Number(0, 1);
  c.pcie_efficiency = root.At("pcie_efficiency").At("value").Number(0, 1);
  c.cpu_adam_s_per_param = root.At("cpu_adam").At("seconds_per_billion_params").Number(0, 1e3) * 1e-9;
  c.unified_memory_migration_efficiency = root.At("unified_memory_migration").At("value").Number(0, 1);

  const Field kernels = root.At("kernels");
  c.liger = ReadKernelTiming(kernels.At("liger"));
  c.compile = ReadKernelTiming(kernels.At("compile"));
  c.compile_s = kernels.At("compile").At("compile_s").Number(0, 1e5, true);
  c.dataloader_s_per_row = root.At("dataloader").At("seconds_per_row").Number(0, 10, true);
  c.gptq_dequant_host_s_per_module = root.At("gptq_dequant").At("host_s_per_module_pass").Number(0, 1, true);
  c.gptq_dequant_relative_rate = root.At("gptq_dequant").At("relative_hbm_rate").Number(0.01, 1);
  c.gpu_speed_cv = root.At("scale").At("gpu_speed_cv").Number(0, 0.5, true);
  root.At("scale").At("source").String();

  std::array<bool, kGpuGenerations> calibrated{};
  bool has_default = false;
  for (const Field& g : doc.Entries("generations", "name")) {
    const Field name = g.At("name");
    const GenerationCeilings ceilings = ReadCeilings(g);
    if (name.String() == "default") {
      for (int i = 0; i < kGpuGenerations; ++i)
        if (!calibrated[i]) c.generations[i] = ceilings;
      has_default = true;
      continue;
    }
    const auto generation = ParseGpuGeneration(name.String());
    if (!generation) name.Fail("a generation of data/gpus.json or default");
    if (has_default) name.Fail("generations listed before the default");
    c.generations[static_cast<int>(*generation)] = ceilings;
    calibrated[static_cast<int>(*generation)] = true;
  }
  if (!has_default) root.At("generations").Fail("an entry named default, last");

  ReadAttentionKernels(root.At("attention_kernels"), c);
  const Field engines = root.At("frameworks");
  for (Framework f : kAllFrameworks)
    c.engines[static_cast<int>(f)] = ReadEngineTiming(Named(engines.At(FrameworkKey(f)), doc.file(), FrameworkKey(f)));
  for (const Field& e : root.At("calibrations").Items()) c.calibrations.push_back(ReadCalibration(e, doc.file()));
  for (const Field& e : root.At("measurements").Items()) c.measurements.push_back(ReadMeasurement(e, doc.file()));
  return c;
}

const EfficiencyCatalog& Efficiency() {
  static const EfficiencyCatalog catalog = LoadEfficiency(CatalogText("efficiency.json"), "efficiency.json");
  return catalog;
}

}  // namespace trainplan
