#include "catalog/frameworks.h"

#include <initializer_list>
#include <string>
#include <string_view>

#include "catalog/load.h"

namespace trainplan {

namespace {

Recompute ReadRecompute(const Field& f) {
  const std::string s = f.String();
  if (s == "none") return Recompute::kNone;
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  f.Fail("none, selective or full");
}

MoeOverlap ReadMoeOverlap(const Field& f) {
  const std::string s = f.String();
  if (s == "none") return MoeOverlap::kNone;
  if (s == "a2a_overlap") return MoeOverlap::kA2aOverlap;
  if (s == "dualpipe") return MoeOverlap::kDualPipe;
  f.Fail("none, a2a_overlap or dualpipe");
}

Loss ReadLoss(const Field& f) {
  const std::string s = f.String();
  if (s == "standard") return Loss::kStandard;
  if (s == "chunked") return Loss::kChunked;
  if (s == "fused") return Loss::kFused;
  if (s == "fused_linear") return Loss::kFusedLinear;
  if (s == "cut") return Loss::kCut;
  f.Fail("standard, chunked, fused, fused_linear or cut");
}

/// `source_key` must be present and say something.
void RequireReason(const Field& e, const std::string& source_key) {
  const Field why = e.At(source_key);
  if (why.String().empty()) why.Fail("a reason");
}

/// An optional engine release (digits and dots) with its `<key>_source`; empty when the key is absent.
std::string ReadRelease(const Field& e, const std::string& key) {
  const auto f = e.Get(key);
  if (!f) return {};
  std::string v = f->String();
  if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos) f->Fail("a release as digits and dots (0.9.4)");
  RequireReason(e, key + "_source");
  return v;
}

/// A switch of engine behaviour, read with the reason its `<key>_source` gives; `fallback` when absent.
bool ReadSourcedFlag(const Field& e, const std::string& key, bool fallback) {
  const auto f = e.Get(key);
  if (!f) return fallback;
  RequireReason(e, key + "_source");
  return f->Bool();
}

/// A value's `<key>_source` must cite something: a key of the file's sources where `sources` is given.
void CheckSource(const Field& e, std::string_view key, const Field* sources) {
  const std::string source_key = std::string(key) + "_source";
  auto s = e.Get(source_key);
  if (!s) return;
  const std::string text = s->String();
  if (sources ? !sources->Has(text) : text.empty()) s->Fail(sources ? "a key of the file's sources" : "a reason");
}

FrameworkProfile ReadProfile(Framework id, const Field& e, const Field& sources) {
  e.CheckKeys({"name", "source", "logits_fp32_upcast", "autocast", "autocast_source", "loss", "loss_source",
               "optimizer_in_backward", "offload_checkpoints", "fused_kernels", "distributed_optimizer",
               "fp32_grad_accumulation", "fp32_grad_accumulation_source", "fp8_primary_weights",
               "fp8_primary_weights_source", "distributed_optimizer_source", "pure_low_precision", "fp32_adapters", "kbit_fp32_unquantized",
               "ddp_gradient_buckets", "ddp_gradient_buckets_source", "adam_step_temp_bytes_per_param",
               "adam_step_temp_bytes_per_param_source", "adam_step_group_params", "sp_regathers_input",
               "sp_regathers_input_source", "tp_comm_overlap", "tp_comm_overlap_source", "default_recompute", "reduce_bucket_elements",
               "reduce_bucket_elements_source", "overlap_comm", "overlap_comm_source",
               "allocator_fragmentation", "allocator_fragmentation_source", "runtime_overhead_bytes",
               "runtime_overhead_bytes_source", "kernel_efficiency", "moe_overlap", "moe_overlap_source",
               "zero3_max_live_params", "zero3_max_live_params_source",
               "moe_load_imbalance", "moe_load_imbalance_source", "lora_dropout_copies", "norm_fp32_input",
               "sdpa_expands_kv", "saved_tensors_source", "quantizes_lm_head", "bnb_dequant_copies", "unties_embeddings",
               "bnb_source", "holds_previous_quantized_inputs", "bnb_quant_state_unsharded",
               "nf4_unchunked_quantize_before", "nf4_unchunked_quantize_before_source", "root_unit_unsharded",
               "root_unit_unsharded_source", "loss_freed_before_recompute", "loss_freed_before_recompute_source",
               "zero3_overflow_flags_since", "zero3_overflow_flags_since_source", "no_sync_accumulation",
               "no_sync_accumulation_source", "offload_shard_copy_stream", "offload_shard_copy_stream_source",
               "reduce_scatter_input_copy_since", "reduce_scatter_input_copy_since_source", "p2p_comm_overlap",
               "p2p_comm_overlap_source"});
  FrameworkProfile p;
  p.id = id;
  p.name = e.At("name").String();
  p.source = e.At("source").String();
  p.logits_fp32_upcast = e.At("logits_fp32_upcast").Bool();
  p.autocast = e.At("autocast").Bool();
  p.loss = ReadLoss(e.At("loss"));
  p.optimizer_in_backward = e.At("optimizer_in_backward").Bool();
  p.offload_checkpoints = e.At("offload_checkpoints").Bool();
  p.fused_kernels = e.At("fused_kernels").Bool();
  p.distributed_optimizer = e.At("distributed_optimizer").Bool();
  p.fp32_grad_accumulation = e.At("fp32_grad_accumulation").Bool();
  p.fp8_primary_weights = e.At("fp8_primary_weights").Bool();
  p.pure_low_precision = e.At("pure_low_precision").Bool();
  p.fp32_adapters = e.At("fp32_adapters").Bool();
  p.kbit_fp32_unquantized = e.At("kbit_fp32_unquantized").Bool();
  p.ddp_gradient_buckets = e.At("ddp_gradient_buckets").Bool();
  p.adam_step_temp_bytes_per_param = e.At("adam_step_temp_bytes_per_param").Number(0, 16, true);
  p.adam_step_group_params = e.At("adam_step_group_params").Number(0, 1e13, true);
  p.sp_regathers_input = e.At("sp_regathers_input").Bool();
  p.tp_comm_overlap = e.At("tp_comm_overlap").Bool();
  p.default_recompute = ReadRecompute(e.At("default_recompute"));
  p.reduce_bucket_elements = e.At("reduce_bucket_elements").Number(0, 1e12, true);
  if (auto f = e.Get("overlap_comm")) p.overlap_comm = f->Bool();
  if (auto live = e.Get("zero3_max_live_params")) p.zero3_max_live_params = live->Number(0, 1e13, true);
  p.allocator_fragmentation = e.At("allocator_fragmentation").Number(0, 0.5, true);
  p.runtime_overhead_bytes = e.At("runtime_overhead_bytes").Number(0, 1e11, true);
  p.kernel_efficiency = e.At("kernel_efficiency").Number(0, 1);
  p.moe_overlap = ReadMoeOverlap(e.At("moe_overlap"));
  p.moe_load_imbalance = e.At("moe_load_imbalance").Number(1, 4);
  if (auto f = e.Get("lora_dropout_copies")) p.lora_dropout_copies = f->Bool();
  if (auto f = e.Get("norm_fp32_input")) p.norm_fp32_input = f->Bool();
  if (auto f = e.Get("sdpa_expands_kv")) p.sdpa_expands_kv = f->Bool();
  if (auto f = e.Get("quantizes_lm_head")) p.quantizes_lm_head = f->Bool();
  if (auto f = e.Get("bnb_dequant_copies")) p.bnb_dequant_copies = f->Number(0, 4, true);
  if (auto f = e.Get("holds_previous_quantized_inputs")) p.holds_previous_quantized_inputs = f->Bool();
  if (auto f = e.Get("bnb_quant_state_unsharded")) p.bnb_quant_state_unsharded = f->Bool();
  p.root_unit_unsharded = ReadSourcedFlag(e, "root_unit_unsharded", p.root_unit_unsharded);
  p.p2p_comm_overlap = ReadSourcedFlag(e, "p2p_comm_overlap", p.p2p_comm_overlap);
  p.no_sync_accumulation = ReadSourcedFlag(e, "no_sync_accumulation", p.no_sync_accumulation);
  p.offload_shard_copy_stream = ReadSourcedFlag(e, "offload_shard_copy_stream", p.offload_shard_copy_stream);
  p.loss_freed_before_recompute = ReadSourcedFlag(e, "loss_freed_before_recompute", p.loss_freed_before_recompute);
  p.nf4_unchunked_quantize_before = ReadRelease(e, "nf4_unchunked_quantize_before");
  p.zero3_overflow_flags_since = ReadRelease(e, "zero3_overflow_flags_since");
  p.reduce_scatter_input_copy_since = ReadRelease(e, "reduce_scatter_input_copy_since");
  if (p.quantizes_lm_head || p.bnb_dequant_copies > 0 || p.holds_previous_quantized_inputs ||
      p.bnb_quant_state_unsharded) {
    RequireReason(e, "bnb_source");  // engine code read for its 4-bit layers
  }
  if (auto f = e.Get("unties_embeddings")) p.unties_embeddings = f->Bool();
  if (p.lora_dropout_copies || p.norm_fp32_input || p.sdpa_expands_kv || p.unties_embeddings) {
    RequireReason(e, "saved_tensors_source");  // engine code read for these habits
  }
  e.At("loss_source");  // which code of the engine computes its loss
  for (std::string_view key : {"loss", "distributed_optimizer", "fp32_grad_accumulation", "fp8_primary_weights", "ddp_gradient_buckets", "adam_step_temp_bytes_per_param", "sp_regathers_input",
                               "tp_comm_overlap", "reduce_bucket_elements", "overlap_comm", "zero3_max_live_params"})
    CheckSource(e, key, nullptr);
  for (std::string_view key : {"allocator_fragmentation", "runtime_overhead_bytes", "moe_overlap", "moe_load_imbalance"}) {
    e.At(std::string(key) + "_source");  // shared figures always cite their source
    CheckSource(e, key, &sources);
  }
  return p;
}

}  // namespace

std::vector<FrameworkProfile> LoadFrameworkProfiles(std::string_view text, std::string_view file,
                                                    const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  const Field root = doc.Root();
  const Field sources = root.At("sources");
  const Field frameworks = root.At("frameworks");
  std::vector<FrameworkProfile> out;
  for (Framework f : kAllFrameworks) {
    const Field e = Named(frameworks.At(FrameworkKey(f)), doc.file(), FrameworkKey(f));
    out.push_back(ReadProfile(f, e, sources));
  }
  if (frameworks.Members().size() != out.size()) frameworks.Fail("one entry per framework: hf, torchtune, unsloth, deepspeed, fsdp, megatron, litgpt, torchtitan");
  return out;
}

const FrameworkProfile& GetFrameworkProfile(Framework framework) {
  static const std::vector<FrameworkProfile> profiles =
      LoadFrameworkProfiles(CatalogText("frameworks.json"), "frameworks.json");
  return profiles[static_cast<int>(framework)];
}

}  // namespace trainplan
