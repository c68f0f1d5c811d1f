#include "catalog/efficiency.h"

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

EngineTiming ReadEngine(const Field& e) {
  EngineTiming t;
  t.grad_reduce_overlap = e.At("grad_reduce_overlap").Bool();
  t.host_s_per_layer_pass = e.At("host_s_per_layer_pass").Number(0, 1, true);
  t.elementwise_traffic = e.At("elementwise_traffic").Number(0, 100);
  const Field unit = e.At("zero3_gather_unit");
  if (unit.String() != "layer" && unit.String() != "module") unit.Fail("layer or module");
  t.zero3_gather_per_module = unit.String() == "module";
  t.zero3_prefetch = e.At("zero3_prefetch").Bool();
  t.zero3_host_s_per_module = e.At("zero3_host_s_per_module").Number(0, 1, true);
  e.At("zero3_host_source").String();
  t.dataloader_workers = static_cast<int>(e.At("dataloader_workers").Number(0, 1024, true));
  e.At("dataloader_source").String();
  t.fp8_weight_cache = e.At("fp8_weight_cache").Bool();
  e.At("fp8_source").String();
  t.default_attention = ReadKernel(e.At("default_attention"));
  if (t.default_attention == AttentionKernel::kAuto) e.At("default_attention").Fail("eager, sdpa, fa2, fa3, triton or cudnn");
  e.At("default_attention_source").String();
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

/// The FP8 recipe each generation's engines default to ("default" for the rest) and delayed scaling's history.
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
}

}  // namespace

EfficiencyCatalog LoadEfficiency(std::string_view text, std::string_view file) {
  const CatalogDocument doc(text, file);
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
    c.engines[static_cast<int>(f)] = ReadEngine(Named(engines.At(FrameworkKey(f)), doc.file(), FrameworkKey(f)));
  return c;
}

const EfficiencyCatalog& Efficiency() {
  static const EfficiencyCatalog catalog = LoadEfficiency(CatalogText("efficiency.json"), "efficiency.json");
  return catalog;
}

}  // namespace trainplan
