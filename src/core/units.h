#pragma once
// Units and the domain rules every estimator shares: one definition each, so memory, time, the bill of
// materials, checkpoints and launch files cannot disagree about what an adapter method is or how many
// bytes a gradient takes.
#include "base/vocabulary.h"
#include "catalog/frameworks.h"

namespace trainplan {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // binary: memory capacities and usage
inline constexpr double kGB = 1e9;                        // decimal: datasheets, disks, network rates

/// LoRA and QLoRA train adapters over a frozen base (PEFT); freeze trains whole top layers.
inline bool IsAdapterMethod(Method m) { return m == Method::kLora || m == Method::kQlora; }

/// Bytes of one element in the compute dtype. FP8 training keeps bf16 weights and activations between its
/// FP8 GEMMs (Transformer Engine), so it counts 2.
inline double ComputeBytes(Precision p) { return p == Precision::kFp32 ? 4 : 2; }

/// QLoRA NF4 with double quantisation: 4 bits per weight plus an 8-bit absmax per 64-weight block plus an
/// fp32 constant per 256 blocks = 8/64 + 32/(64*256) = 0.127 bits (Dettmers et al. 2023, QLoRA, sec. 3).
inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
/// NF4 without double quantisation: an fp32 absmax per 64-weight block, 32/64 = 0.5 bits (QLoRA, sec. 3).
inline constexpr double kNf4SingleQuantBytesPerParam = (4.0 + 32.0 / 64) / 8;

/// GPTQ 4-bit with group_size 128 (AutoGPTQ QuantLinear buffers): qweight packs eight 4-bit weights per int32,
/// and each group of 128 input rows keeps an fp16 scale (`scales`) and a 4-bit zero point packed eight per
/// int32 (`qzeros`) per output column: (4 + 16/128 + 4/128) bits. The int32 `g_idx` per input row is
/// 4/out_features bytes a weight, under 0.001 B: left out.
inline constexpr double kGptq4BytesPerParam = (4.0 + 16.0 / 128 + 4.0 / 128) / 8;

/// Bytes of one quantised weight of a QLoRA base as stored.
inline double QuantizedBytesPerParam(Quantization q, bool double_quant) {
  if (q == Quantization::kGptq4) return kGptq4BytesPerParam;
  return double_quant ? kNf4BytesPerParam : kNf4SingleQuantBytesPerParam;
}

/// Bytes of one frozen or trained base-layer weight as held on the GPU: 4-bit under QLoRA, else the compute
/// dtype.
inline double LayerWeightBytes(Method m, Precision p, Quantization q, bool double_quant) {
  return m == Method::kQlora ? QuantizedBytesPerParam(q, double_quant) : ComputeBytes(p);
}

/// Mixed precision keeps an fp32 master copy of what trains; fp32 training and engines running purely in
/// the compute dtype (torchtune `dtype: bf16`) do not.
inline bool KeepsMasterWeights(Precision p, const FrameworkProfile& fw) {
  return p != Precision::kFp32 && !fw.pure_low_precision;
}

/// Bytes of one gradient element as it is kept and reduced: fp32 where the engine accumulates in fp32
/// (Megatron main_grad) or the job is fp32, else the compute dtype.
inline double GradientBytes(Precision p, const FrameworkProfile& fw) {
  return fw.fp32_grad_accumulation || p == Precision::kFp32 ? 4 : ComputeBytes(p);
}

/// bitsandbytes 8-bit Adam: m and v in one byte each plus one fp32 absmax per 2,048-value block for each.
inline constexpr double kAdam8bitBytesPerParam = 2 + 2 * 4.0 / 2048;

/// bitsandbytes paged optimizers allocate their states with cudaMallocManaged (functional.get_paged).
inline bool IsPagedOptimizer(Optimizer o) { return o == Optimizer::kPagedAdamW || o == Optimizer::kPagedAdamW8bit; }

/// Optimizer state per trainable parameter at rest, in bytes: AdamW's m and v, SGD's momentum, in fp32 or
/// (pure low precision, or `bf16_states`: DeepSeek-V3's bf16 moments, Megatron-Core's --exp-avg-dtype bf16) in
/// 16 bits. Adafactor's factored moment scales with rows + columns, not parameters, and counts 0 here.
inline double OptimizerStateBytesPerParam(Optimizer o, Precision p, const FrameworkProfile& fw,
                                          bool bf16_states = false) {
  const double value = bf16_states ? 2 : fw.pure_low_precision ? ComputeBytes(p) : 4;
  switch (o) {
    case Optimizer::kAdamW: return 2 * value;
    case Optimizer::kPagedAdamW: return 8;  // bitsandbytes keeps 32-bit states in fp32 whatever the weights
    case Optimizer::kAdamW8bit:
    case Optimizer::kPagedAdamW8bit: return kAdam8bitBytesPerParam;
    case Optimizer::kSgdMomentum: return value;
    case Optimizer::kAdafactor: return 0;
  }
  return 0;
}

}  // namespace trainplan
