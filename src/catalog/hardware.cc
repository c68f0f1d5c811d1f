#include "catalog/hardware.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "catalog/load.h"

namespace trainplan {

namespace {

// Datasheets size GPU memory in binary units: nvidia-smi shows an "80GB" A100 as 81920 MiB.
constexpr double kBytesPerDatasheetGb = 1024.0 * 1024.0 * 1024.0;
// Bandwidths (GB/s) are decimal.
constexpr double kBytesPerGbPerS = 1e9;
constexpr double kSecondsPerUs = 1e-6;

/// Words that vendors and drivers put around a model name without changing which part it is.
bool IsFillerToken(std::string_view token) {
  static constexpr std::string_view kFiller[] = {"nvidia", "geforce", "tesla",  "amd",    "instinct",
                                                 "huawei", "gpu",     "tensor", "core",   "generation",
                                                 "quadro", "hgx",     "dgx",    "module", "card"};
  return std::find(std::begin(kFiller), std::end(kFiller), token) != std::end(kFiller);
}

/// An order-insensitive key: "a100-80gb-sxm", "A100 SXM4 80GB" and "NVIDIA A100-SXM-80GB" all give
/// "80gb a100 sxm". The socket revisions of the catalog's parts (SXM2, SXM4, SXM5) read as "sxm".
std::string TokenKey(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&] {
    if (current.empty()) return;
    if (current == "sxm2" || current == "sxm4" || current == "sxm5") current = "sxm";
    if (!IsFillerToken(current)) tokens.push_back(current);
    current.clear();
  };
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      flush();
    }
  }
  flush();
  std::sort(tokens.begin(), tokens.end());
  std::string key;
  for (const auto& t : tokens) {
    if (!key.empty()) key.push_back(' ');
    key += t;
  }
  return key;
}

/// Exact (normalized) names first, then order-insensitive token keys; a key that two entries share
/// resolves to neither.
class NameIndex {
 public:
  void Add(std::string_view name, size_t index) {
    AddTo(exact_, NormalizeName(name), index);
    AddTo(tokens_, TokenKey(name), index);
    names_.emplace_back(name);
  }
  /// The entry's index, or npos.
  size_t Find(std::string_view name) const {
    for (const auto* map : {&exact_, &tokens_}) {
      auto it = map->find(map == &exact_ ? NormalizeName(name) : TokenKey(name));
      if (it != map->end() && it->second != kAmbiguous) return it->second;
    }
    return npos;
  }
  const std::vector<std::string>& names() const { return names_; }
  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  static constexpr size_t kAmbiguous = static_cast<size_t>(-2);
  static void AddTo(std::unordered_map<std::string, size_t>& map, std::string key, size_t index) {
    if (key.empty()) return;
    auto [it, inserted] = map.emplace(std::move(key), index);
    if (!inserted && it->second != index) it->second = kAmbiguous;
  }
  std::unordered_map<std::string, size_t> exact_, tokens_;
  std::vector<std::string> names_;
};

/// The links a GPU uses by default (ids into the link catalog).
struct GpuLinks {
  std::string intra_node, inter_node, nvlink, host;
};

/// GpuSpec::stack points into `stacks`, whose buffer a move keeps: the catalogs are built once and never copied.
struct Catalogs {
  std::vector<SoftwareStack> stacks;
  std::vector<GpuSpec> gpus;
  std::vector<GpuLinks> gpu_links;  // parallel to gpus
  std::vector<LinkSpec> links;
  NameIndex gpu_index, link_index;
  double usable_memory_fraction = 1;
  std::string usable_memory_source;  // with its date
};

constexpr const char* kGenerationNames[kGpuGenerations] = {"unknown", "volta",     "turing", "ampere", "ada",
                                                           "hopper",  "blackwell", "cdna2",  "cdna3",  "davinci"};

constexpr const char* kStackFeatureKeys[kStackFeatures] = {
    "zero", "zero3", "tp", "pp", "cp", "sequence_parallel", "flash_attention", "lora", "qlora", "fp8", "optim_8bit"};

SoftwareStack ReadStack(const Field& e) {
  SoftwareStack s;
  s.id = e.At("id").String();
  s.name = e.At("name").String();
  s.date = e.At("date").String();
  for (const Field& f : e.At("frameworks").Items()) {
    const std::string key = f.String();
    const auto* it = std::find_if(std::begin(kAllFrameworks), std::end(kAllFrameworks),
                                  [&](Framework w) { return key == FrameworkKey(w); });
    if (it == std::end(kAllFrameworks)) f.Fail("hf, torchtune, unsloth, deepspeed, fsdp, megatron, litgpt or torchtitan");
    s.frameworks.push_back(*it);
  }
  const Field features = e.At("features");
  for (int i = 0; i < kStackFeatures; ++i) {
    const Field f = features.At(kStackFeatureKeys[i]);
    s.features[static_cast<size_t>(i)] = {f.At("supported").Bool(), f.At("note").String(), f.At("source").String(),
                                          ZhVariant(f, "note")};
  }
  return s;
}

std::string ReadBasis(const Field& f) {
  std::string basis = f.String();
  if (basis != "datasheet" && basis != "announced" && basis != "measured") f.Fail("datasheet, announced or measured");
  return basis;
}

LinkSpec ReadLink(const Field& e) {
  LinkSpec l;
  l.id = e.At("id").String();
  l.name = e.At("name").String();
  l.bytes_per_s = e.At("gb_per_s").Number(0, 1e5) * kBytesPerGbPerS;
  l.efficiency = e.At("efficiency").Number(0, 1);
  if (const auto a2a = e.Get("all_to_all_efficiency")) l.all_to_all_efficiency = a2a->Number(0, 1);
  l.latency_s = e.At("latency_us").Number(0, 1e6) * kSecondsPerUs;
  l.source = e.At("source").String();
  l.basis = ReadBasis(e.At("basis"));
  return l;
}

GpuSpec ReadGpu(const Field& e) {
  GpuSpec g;
  g.id = e.At("id").String();
  g.name = e.At("name").String();
  g.vendor = e.At("vendor").String();
  const Field generation = e.At("generation");
  const auto parsed = ParseGpuGeneration(generation.String());
  if (!parsed) generation.Fail("volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3 or davinci");
  g.generation = *parsed;
  g.aliases = Strings(e.At("aliases"));
  g.memory_bytes = e.At("memory_gb").Number(0, 1e5) * kBytesPerDatasheetGb;
  g.memory_bw_bytes_per_s = e.At("memory_bw_gb_per_s").Number(0, 1e6) * kBytesPerGbPerS;
  g.bf16_tflops = e.At("bf16_dense_tflops").Number(0, 1e5, true);
  g.fp16_tflops = e.At("fp16_dense_tflops").Number(0, 1e5, true);
  g.fp8_tflops = e.At("fp8_dense_tflops").Number(0, 1e5, true);
  g.tf32_tflops = e.At("tf32_dense_tflops").Number(0, 1e5, true);
  g.fp32_tflops = e.At("fp32_tflops").Number(0, 1e5, true);
  if (g.bf16_tflops <= 0 && g.fp16_tflops <= 0) e.At("fp16_dense_tflops").Fail("a 16-bit peak (bf16 or fp16)");
  g.nvlink_gen = static_cast<int>(e.At("nvlink_gen").Int({0, 10}));
  g.nvlink_bytes_per_s = e.At("nvlink_gb_per_s").Number(0, 1e5, true) * kBytesPerGbPerS;
  g.nvswitch = e.At("nvswitch").Bool();
  g.pcie_gen = static_cast<int>(e.At("pcie_gen").Int({0, 7}));
  g.pcie_lanes = static_cast<int>(e.At("pcie_lanes").Int({0, 32}));
  g.tdp_w = e.At("tdp_w").Number(0, 1e4);
  g.ecc = e.At("ecc").Bool();
  g.consumer = e.At("consumer").Bool();
  g.form_factor = e.At("form_factor").String();
  g.sources = Strings(e.At("sources"));
  g.date = e.At("date").String();
  g.confidence = e.At("confidence").String();
  if (g.confidence != "high" && g.confidence != "medium" && g.confidence != "low")
    e.At("confidence").Fail("high, medium or low");
  g.basis = ReadBasis(e.At("basis"));
  // 72: the largest node the time model and the search take (core/limits.h kGpusPerNode).
  if (e.Has("nvlink_domain_gpus")) g.nvlink_domain_gpus = static_cast<int>(e.At("nvlink_domain_gpus").Int({9, 72}));
  if (e.Has("gpus_per_host")) g.gpus_per_host = static_cast<int>(e.At("gpus_per_host").Int({1, 72}));
  return g;
}

Catalogs Load(std::string_view gpus_text, std::string_view links_text, const std::vector<UserCatalog>& overlays) {
  Catalogs c;
  const CatalogDocument links(links_text, "links.json", overlays);
  for (const Field& e : links.Entries("links")) {
    const size_t index = c.links.size();
    c.links.push_back(ReadLink(e));
    c.link_index.Add(c.links.back().id, index);
    c.link_index.Add(c.links.back().name, index);
    for (const auto& alias : Strings(e.At("aliases"))) c.link_index.Add(alias, index);
  }

  const CatalogDocument gpus(gpus_text, "gpus.json", overlays);
  for (const Field& e : gpus.Entries("stacks")) c.stacks.push_back(ReadStack(e));
  const Field usable = gpus.Root().At("usable_memory");
  c.usable_memory_fraction = usable.At("fraction").Number(0.5, 1);
  c.usable_memory_source = usable.At("source").String() + " (" + usable.At("date").String() + ")";
  for (const Field& e : gpus.Entries("gpus")) {
    GpuSpec g = ReadGpu(e);
    const Field stack = e.At("stack");
    const auto it = std::find_if(c.stacks.begin(), c.stacks.end(), [&](const auto& s) { return s.id == stack.String(); });
    if (it == c.stacks.end()) stack.Fail("a stack of data/gpus.json \"stacks\"");
    g.stack = &*it;
    const Field l = e.At("links");
    GpuLinks defaults{l.At("intra_node").String(), l.At("inter_node").String(),
                      l.Has("nvlink") ? l.At("nvlink").String() : std::string(),
                      l.Has("host") ? l.At("host").String() : std::string()};
    for (const char* key : {"intra_node", "inter_node", "nvlink", "host"}) {
      if (l.Has(key) && c.link_index.Find(l.At(key).String()) == NameIndex::npos)
        l.At(key).Fail("a link of data/links.json");
    }
    // Offload and paging time copy over the host link: a GPU without PCIe must name the link it has.
    if (g.pcie_gen == 0 && defaults.host.empty())
      l.FailMember("host", "missing", "a link of data/links.json: a GPU with pcie_gen 0 names its host link");
    const size_t index = c.gpus.size();
    c.gpu_index.Add(g.id, index);
    c.gpu_index.Add(g.name, index);
    for (const auto& alias : g.aliases) c.gpu_index.Add(alias, index);
    c.gpus.push_back(std::move(g));
    c.gpu_links.push_back(std::move(defaults));
  }
  return c;
}

const Catalogs& Get() {
  static const Catalogs catalogs = Load(CatalogText("gpus.json"), CatalogText("links.json"), RegisteredUserCatalogs());  // parsed once; thread-safe initialisation
  return catalogs;
}

size_t GpuIndex(const GpuSpec& gpu) {
  const Catalogs& c = Get();
  const size_t index = c.gpu_index.Find(gpu.id);
  if (index == NameIndex::npos) throw InputError("hardware.gpu", gpu.id, "a GPU from the built-in catalog");
  return index;
}

/// Up to three catalog ids whose names or aliases are closest to `query`.
template <typename Spec>
std::vector<std::string> ClosestIds(std::string_view query, const NameIndex& index, const std::vector<Spec>& specs) {
  std::vector<std::string> ids;
  for (const auto& name : ClosestNames(query, index.names(), index.names().size())) {
    const size_t i = index.Find(name);
    if (i == NameIndex::npos) continue;
    const std::string& id = specs[i].id;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    if (ids.size() == 3) break;
  }
  return ids;
}

}  // namespace

const char* StackFeatureKey(StackFeature f) { return kStackFeatureKeys[static_cast<int>(f)]; }

bool SoftwareStack::Runs(Framework f) const {
  return std::find(frameworks.begin(), frameworks.end(), f) != frameworks.end();
}

const char* GenerationName(GpuGeneration g) { return kGenerationNames[static_cast<int>(g)]; }

std::optional<GpuGeneration> ParseGpuGeneration(std::string_view name) {
  for (int i = 1; i < kGpuGenerations; ++i)
    if (name == kGenerationNames[i]) return static_cast<GpuGeneration>(i);
  return std::nullopt;
}

void CheckHardwareDocuments(std::string_view gpus_text, std::string_view links_text, const std::vector<UserCatalog>& overlays) {
  Load(gpus_text, links_text, overlays);
}

double GpuSpec::PeakTflops(bool fp8, bool fp32) const {
  if (fp8) return fp8_tflops;
  // PyTorch runs fp32 matmuls on the non-tensor FP32 units unless TF32 is enabled
  // (torch.backends.cuda.matmul.allow_tf32 defaults to False since 1.12).
  if (fp32) return fp32_tflops;
  return bf16_tflops > 0 ? bf16_tflops : fp16_tflops;
}

int DefaultGpusPerNode(const GpuSpec& gpu) { return gpu.nvlink_domain_gpus > 0 ? gpu.nvlink_domain_gpus : 8; }

const std::vector<GpuSpec>& GpuCatalog() { return Get().gpus; }
const std::vector<SoftwareStack>& StackCatalog() { return Get().stacks; }
double DefaultUsableMemoryFraction() { return Get().usable_memory_fraction; }
const std::string& UsableMemorySource() { return Get().usable_memory_source; }
const std::vector<LinkSpec>& LinkCatalog() { return Get().links; }

const GpuSpec& FindGpu(const std::string& name) {
  const Catalogs& c = Get();
  const size_t index = c.gpu_index.Find(name);
  if (index == NameIndex::npos) ThrowUnknownName("gpu", name, ClosestIds(name, c.gpu_index, c.gpus));
  return c.gpus[index];
}

const LinkSpec& FindLink(const std::string& name) {
  const Catalogs& c = Get();
  const size_t index = c.link_index.Find(name);
  if (index == NameIndex::npos) ThrowUnknownName("link", name, ClosestIds(name, c.link_index, c.links));
  return c.links[index];
}

const LinkSpec& DefaultIntraNodeLink(const GpuSpec& gpu) {
  return FindLink(Get().gpu_links[GpuIndex(gpu)].intra_node);
}

const LinkSpec& DefaultInterNodeLink(const GpuSpec& gpu) {
  return FindLink(Get().gpu_links[GpuIndex(gpu)].inter_node);
}

const LinkSpec* HostLinkOf(const GpuSpec& gpu) {
  if (gpu.pcie_gen > 0) return nullptr;
  return &FindLink(Get().gpu_links[GpuIndex(gpu)].host);
}

const LinkSpec* NvlinkOf(const GpuSpec& gpu) {
  if (gpu.nvlink_gen == 0) return nullptr;
  const GpuLinks& links = Get().gpu_links[GpuIndex(gpu)];
  return &FindLink(links.nvlink.empty() ? links.intra_node : links.nvlink);
}

}  // namespace trainplan
