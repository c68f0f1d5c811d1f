#pragma once
// FP8 training by GEMM, as TransformerEngine runs it under Megatron-Core, NeMo and llm-foundry: the linear layers'
// three GEMMs (fprop, dgrad, wgrad) read FP8 operands, while the attention core (fp8_dpa off by default), the
// LM head (Megatron-Core's output_layer is a plain ColumnParallelLinear) and the embeddings stay in 16-bit. The
// FP8 operands are made by quantisation kernels that cross HBM; delayed scaling also reduces the amaxes
// across ranks and rolls their history. Pure formulas; perf.cc applies them (docs/performance.md "FP8").

#include "catalog/efficiency.h"

namespace trainplan {

/// HBM bytes per element of one quantisation to FP8 of a 16-bit tensor: read 2 bytes, write the row-wise copy
/// (for fprop/dgrad) and the column-wise (transposed) copy the wgrad needs, 1 byte each (TE's fused
/// cast_transpose); current scaling first reads the tensor once more for its amax; MXFP8 also writes one
/// scale byte per 32 elements in each direction.
double Fp8CastBytesPerElement(Fp8Scaling scaling);

/// The casts around one linear [m tokens, k in] -> n out on this GPU, per micro-batch (bytes).
struct Fp8LinearCasts {
  double fwd_bytes = 0;  // its input (unless fused into the norm before it)
  double bwd_bytes = 0;  // the gradient of its output
};
/// `input_fused`: the input is produced by a kernel that writes FP8 itself (TE's LayerNormLinear and
/// LayerNormMLP fuse the cast into the norm or activation for delayed scaling and MXFP8); current scaling
/// needs the finished tensor's amax first, so its cast stays a separate pass.
Fp8LinearCasts Fp8Casts(Fp8Scaling scaling, double m, double n, double k, bool input_fused, bool backward);

/// HBM bytes of the amax-history update of `tensors` FP8 tensors after one pass (delayed scaling: the history of
/// `history_len` fp32 amaxes is rolled, read and written, by TE's fused amax_and_scale_update); 0 otherwise.
double Fp8AmaxHistoryBytes(Fp8Scaling scaling, double tensors, double history_len);

/// Amax all-reduces per micro-batch: delayed scaling reduces once at the end of the forward (fp8_autocast exit)
/// and once in backward across the amax reduction group; the other recipes none.
int Fp8AmaxReductions(Fp8Scaling scaling);

}  // namespace trainplan
