#include "catalog/hardware.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/embedded_data.h"
#include "base/error.h"

namespace trainplan {

namespace {

using nlohmann::json;

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
  std::string intra_node, inter_node, nvlink;
};

struct Catalogs {
  std::vector<GpuSpec> gpus;
  std::vector<GpuLinks> gpu_links;  // parallel to gpus
  std::vector<LinkSpec> links;
  NameIndex gpu_index, link_index;
};

[[noreturn]] void BadCatalog(std::string_view file, std::string_view entry, std::string_view what) {
  throw std::logic_error(fmt::format("data/{}: entry '{}': {}", file, entry, what));
}

/// Reads a required field, naming the catalog entry when it is missing or of the wrong type.
template <typename T>
T Required(const json& entry, const char* key, std::string_view file) {
  const std::string id = entry.value("id", std::string("?"));
  if (!entry.contains(key)) BadCatalog(file, id, fmt::format("missing '{}'", key));
  try {
    return entry.at(key).get<T>();
  } catch (const json::exception& e) {
    BadCatalog(file, id, fmt::format("'{}': {}", key, e.what()));
  }
}

json ParseEmbedded(std::string_view file) {
  std::string_view text = EmbeddedFile(file);
  if (text.empty()) throw std::logic_error(fmt::format("data/{} is not compiled into the binary", file));
  return json::parse(text);
}

Catalogs Load() {
  Catalogs c;
  const json links = ParseEmbedded("links.json");
  for (const auto& e : links.at("links")) {
    LinkSpec l;
    l.id = Required<std::string>(e, "id", "links.json");
    l.name = Required<std::string>(e, "name", "links.json");
    l.bytes_per_s = Required<double>(e, "gb_per_s", "links.json") * kBytesPerGbPerS;
    l.efficiency = Required<double>(e, "efficiency", "links.json");
    l.latency_s = Required<double>(e, "latency_us", "links.json") * kSecondsPerUs;
    l.source = Required<std::string>(e, "source", "links.json");
    if (l.bytes_per_s <= 0 || l.efficiency <= 0 || l.efficiency > 1) {
      BadCatalog("links.json", l.id, "bandwidth must be positive and efficiency in (0, 1]");
    }
    const size_t index = c.links.size();
    c.link_index.Add(l.id, index);
    c.link_index.Add(l.name, index);
    for (const auto& alias : Required<std::vector<std::string>>(e, "aliases", "links.json")) {
      c.link_index.Add(alias, index);
    }
    c.links.push_back(std::move(l));
  }

  const json gpus = ParseEmbedded("gpus.json");
  for (const auto& e : gpus.at("gpus")) {
    GpuSpec g;
    g.id = Required<std::string>(e, "id", "gpus.json");
    g.name = Required<std::string>(e, "name", "gpus.json");
    g.vendor = Required<std::string>(e, "vendor", "gpus.json");
    g.aliases = Required<std::vector<std::string>>(e, "aliases", "gpus.json");
    g.memory_bytes = Required<double>(e, "memory_gb", "gpus.json") * kBytesPerDatasheetGb;
    g.memory_bw_bytes_per_s = Required<double>(e, "memory_bw_gb_per_s", "gpus.json") * kBytesPerGbPerS;
    g.bf16_tflops = Required<double>(e, "bf16_dense_tflops", "gpus.json");
    g.fp16_tflops = Required<double>(e, "fp16_dense_tflops", "gpus.json");
    g.fp8_tflops = Required<double>(e, "fp8_dense_tflops", "gpus.json");
    g.tf32_tflops = Required<double>(e, "tf32_dense_tflops", "gpus.json");
    g.fp32_tflops = Required<double>(e, "fp32_tflops", "gpus.json");
    g.nvlink_gen = Required<int>(e, "nvlink_gen", "gpus.json");
    g.nvlink_bytes_per_s = Required<double>(e, "nvlink_gb_per_s", "gpus.json") * kBytesPerGbPerS;
    g.nvswitch = Required<bool>(e, "nvswitch", "gpus.json");
    g.pcie_gen = Required<int>(e, "pcie_gen", "gpus.json");
    g.pcie_lanes = Required<int>(e, "pcie_lanes", "gpus.json");
    g.tdp_w = Required<double>(e, "tdp_w", "gpus.json");
    g.ecc = Required<bool>(e, "ecc", "gpus.json");
    g.consumer = Required<bool>(e, "consumer", "gpus.json");
    g.form_factor = Required<std::string>(e, "form_factor", "gpus.json");
    g.sources = Required<std::vector<std::string>>(e, "sources", "gpus.json");
    g.date = Required<std::string>(e, "date", "gpus.json");
    g.confidence = Required<std::string>(e, "confidence", "gpus.json");

    const json& l = Required<json>(e, "links", "gpus.json");
    GpuLinks links{Required<std::string>(l, "intra_node", "gpus.json"),
                   Required<std::string>(l, "inter_node", "gpus.json"), l.value("nvlink", std::string())};
    for (const std::string* id : {&links.intra_node, &links.inter_node, &links.nvlink}) {
      if (!id->empty() && c.link_index.Find(*id) == NameIndex::npos) {
        BadCatalog("gpus.json", g.id, fmt::format("unknown link '{}'", *id));
      }
    }

    const size_t index = c.gpus.size();
    c.gpu_index.Add(g.id, index);
    c.gpu_index.Add(g.name, index);
    for (const auto& alias : g.aliases) c.gpu_index.Add(alias, index);
    c.gpus.push_back(std::move(g));
    c.gpu_links.push_back(std::move(links));
  }
  return c;
}

const Catalogs& Get() {
  static const Catalogs catalogs = Load();  // parsed once; thread-safe initialisation
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

double GpuSpec::PeakTflops(bool fp8, bool fp32) const {
  if (fp8) return fp8_tflops;
  // PyTorch runs fp32 matmuls on the non-tensor FP32 units unless TF32 is enabled
  // (torch.backends.cuda.matmul.allow_tf32 defaults to False since 1.12).
  if (fp32) return fp32_tflops;
  return bf16_tflops > 0 ? bf16_tflops : fp16_tflops;
}

const std::vector<GpuSpec>& GpuCatalog() { return Get().gpus; }
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

const LinkSpec* NvlinkOf(const GpuSpec& gpu) {
  if (gpu.nvlink_gen == 0) return nullptr;
  const GpuLinks& links = Get().gpu_links[GpuIndex(gpu)];
  return &FindLink(links.nvlink.empty() ? links.intra_node : links.nvlink);
}

}  // namespace trainplan
