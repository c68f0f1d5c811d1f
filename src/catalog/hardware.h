#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/vocabulary.h"
#include "catalog/load.h"

namespace trainplan {

/// What a training software stack may or may not run (data/gpus.json "stacks"): ZeRO-1/2, ZeRO-3 (or FSDP full
/// shard), tensor, pipeline and context parallelism, sequence parallelism, a fused (flash) attention kernel, LoRA,
/// QLoRA (bitsandbytes NF4), FP8 matmuls and bitsandbytes' 8-bit and paged optimizers.
enum class StackFeature {
  kZero,
  kZero3,
  kTensorParallel,
  kPipelineParallel,
  kContextParallel,
  kSequenceParallel,
  kFlashAttention,
  kLora,
  kQlora,
  kFp8,
  kOptimizer8bit,
};
inline constexpr int kStackFeatures = 11;
/// The key of a feature in data/gpus.json and JSON output ("zero", "qlora", ...).
const char* StackFeatureKey(StackFeature f);

/// Whether a stack has a feature, how (or why not), and where that is published.
struct StackSupport {
  bool supported = true;
  std::string note;
  std::string source;
  std::string note_zh;  // for Chinese readers; empty: `note` is shown
};

/// An accelerator's training software stack (CUDA, ROCm, CANN with torch_npu, ...): the engines that run on it and
/// the features it has, each with its source.
struct SoftwareStack {
  std::string id;    // "cann"
  std::string name;  // "Huawei CANN with torch_npu (...)"
  std::vector<Framework> frameworks;
  std::array<StackSupport, kStackFeatures> features{};
  std::string date;
  const StackSupport& Of(StackFeature f) const { return features[static_cast<size_t>(f)]; }
  bool Runs(Framework f) const;
};

/// A GPU's architecture generation (data/gpus.json "generation"); the time model's achieved-efficiency
/// ceilings are calibrated per generation (data/efficiency.json).
enum class GpuGeneration { kUnknown, kVolta, kTuring, kAmpere, kAda, kHopper, kBlackwell, kCdna2, kCdna3, kDavinci };
inline constexpr int kGpuGenerations = 10;
/// "volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna2", "cdna3", "davinci"; "unknown" for a GPU
/// built outside the catalog.
const char* GenerationName(GpuGeneration g);
/// The generation named `name`, or nullopt (kUnknown is never parsed).
std::optional<GpuGeneration> ParseGpuGeneration(std::string_view name);

/// A GPU (or other accelerator) from its datasheet. TFLOP/s are dense tensor-core figures, never the
/// 2:4-sparse headline numbers; 0 means the format is not supported.
struct GpuSpec {
  std::string id;     // catalog key, e.g. "h100-sxm"
  std::string name;   // "NVIDIA H100 SXM5 80GB"
  std::string vendor;
  GpuGeneration generation = GpuGeneration::kUnknown;
  std::vector<std::string> aliases;
  double memory_bytes = 0;          // usable capacity as sold (GB on the datasheet -> bytes)
  double memory_bw_bytes_per_s = 0;
  double bf16_tflops = 0;
  double fp16_tflops = 0;
  double fp8_tflops = 0;
  double tf32_tflops = 0;
  double fp32_tflops = 0;             // FP32 as fp32 matmuls run: non-tensor on NVIDIA (TF32 off), matrix cores on CDNA2
  int nvlink_gen = 0;                  // 0: none
  double nvlink_bytes_per_s = 0;       // total bidirectional per GPU as on datasheets
  bool nvswitch = false;               // all-to-all NVLink fabric in the usual server (HGX)
  int pcie_gen = 4;
  int pcie_lanes = 16;
  double tdp_w = 0;
  bool ecc = false;
  bool consumer = false;
  std::string form_factor;
  std::vector<std::string> sources;
  std::string date;        // when the figures were read
  std::string confidence;  // high | medium | low
  /// Where the figures come from: "datasheet" (a shipping part's datasheet or a faithful copy), "announced"
  /// (a vendor's announcement of a part not yet shipping: preliminary, may change) or "measured".
  std::string basis;
  /// GPUs one NVLink fabric joins as sold when it spans more than an 8-GPU board (GB200/GB300 NVL72: 72);
  /// 0 otherwise. Such a rack is the node a job is planned on by default, so TP and EP groups inside it use
  /// NVLink.
  int nvlink_domain_gpus = 0;
  /// GPUs that share one host's CPUs and memory when fewer than the node (an NVL72 compute tray: 4 GPUs and 2
  /// CPUs); 0: the node's GPUs share one host.
  int gpus_per_host = 0;
  /// The training software stack of data/gpus.json "stacks"; null for a GPU built outside the catalog, on
  /// which nothing is ruled out.
  const SoftwareStack* stack = nullptr;

  /// Whether the GPU's stack runs a feature or an engine (true without a stack).
  bool Supports(StackFeature f) const { return stack == nullptr || stack->Of(f).supported; }
  bool Runs(Framework f) const { return stack == nullptr || stack->Runs(f); }
  double PeakTflops(bool fp8, bool fp32) const;
};

/// The GPUs per node a job on `gpu` is planned with when the user does not say: its NVLink domain when that
/// spans a rack, else an 8-GPU server.
int DefaultGpusPerNode(const GpuSpec& gpu);

/// A link between GPUs: NVLink/NVSwitch or PCIe inside a node, InfiniBand/RoCE/Ethernet between nodes.
struct LinkSpec {
  std::string id;    // "nvlink4-nvswitch", "pcie4", "ib-ndr400", ...
  std::string name;
  /// Per-GPU unidirectional bandwidth a collective can use (bytes/s), before efficiency.
  double bytes_per_s = 0;
  /// Fraction of `bytes_per_s` that NCCL bus bandwidth reaches on large messages (measured; see source).
  double efficiency = 0.8;
  double latency_s = 5e-6;
  std::string source;
  /// "measured" (the efficiency reproduces an NCCL measurement on this link), "datasheet" (line rate of a
  /// shipping part, efficiency assumed or carried over) or "announced" (a part not yet shipping).
  std::string basis;
  /// Fraction of `bytes_per_s` that NCCL's all-to-all reaches (alltoall_perf bus bandwidth) where it was measured
  /// below the ring collectives' `efficiency`; 0 where not measured: as `efficiency`.
  double all_to_all_efficiency = 0;
};

/// The share of a GPU's memory a training job can plan to fill (data/gpus.json "usable_memory"): above it a
/// plan is "at the edge", where allocator fragmentation, NCCL communicators and the estimate's own error
/// decide whether it runs.
double DefaultUsableMemoryFraction();
/// Where that figure comes from, as data/gpus.json states it.
const std::string& UsableMemorySource();

/// Bounds of the hardware keys a user sets (hardware.usable_memory_fraction, hardware.host_ram_gb): planning
/// to fill less than half a GPU is a typo, and no node holds a petabyte of RAM.
inline constexpr double kMinUsableMemoryFraction = 0.5;
inline constexpr double kMaxHostRamGb = 1e6;

/// The machines a job runs on.
struct Hardware {
  GpuSpec gpu;
  int gpus = 1;
  int gpus_per_node = 8;
  LinkSpec intra_node;  // between GPUs of one node
  LinkSpec inter_node;  // per GPU, between nodes
  double usable_memory_fraction = DefaultUsableMemoryFraction();  // of each GPU's memory
  double host_ram_bytes = 0;  // per node; 0: not limited (offload may use whatever it needs)
  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

/// The catalogs compiled into the binary (data/gpus.json, data/links.json).
const std::vector<GpuSpec>& GpuCatalog();
const std::vector<SoftwareStack>& StackCatalog();
const std::vector<LinkSpec>& LinkCatalog();

/// Finds a GPU by id, name or alias, ignoring case, spaces, dashes and underscores
/// ("A100-SXM4-80GB" = "a100 sxm 80gb"); throws InputError with the closest names otherwise.
const GpuSpec& FindGpu(const std::string& name);
const LinkSpec& FindLink(const std::string& name);

/// The link GPUs of this type use inside a node by default (NVLink/NVSwitch when the GPU has it,
/// else its PCIe generation), and the usual inter-node network for its class.
const LinkSpec& DefaultIntraNodeLink(const GpuSpec& gpu);
const LinkSpec& DefaultInterNodeLink(const GpuSpec& gpu);

/// The GPU's NVLink: its NVSwitch fabric, or the bridge that joins pairs of cards; nullptr when it
/// has none (RTX 4090, L40S, ...).
const LinkSpec* NvlinkOf(const GpuSpec& gpu);

/// The GPU's link to its host CPU when that is not a PCIe slot (pcie_gen 0: NVLink-C2C to Grace or Vera),
/// from data/gpus.json links.host; nullptr for a PCIe card, whose host link is its slot.
const LinkSpec* HostLinkOf(const GpuSpec& gpu);

/// Reads and validates a GPU and a link document as the built-in ones are read; a bad entry throws
/// InternalError naming the file, the entry and the key ("built-in catalog gpus.json: h100-sxm.memory_gb").
void CheckHardwareDocuments(std::string_view gpus_text, std::string_view links_text,
                            const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
