#pragma once
// Samples as they reach the GPU: how many rows a micro-batch holds per example, how long they are once
// padded or packed, and how many of their tokens are the samples' own. docs/performance.md, "Padding and
// packing", and docs/memory.md, "Samples as they are", derive each figure.
#include "core/scenario.h"

namespace trainplan {

/// One micro-batch row's shape, in expectation over the sample lengths.
struct SequenceShape {
  bool described = false;         // the job gave sample lengths; otherwise every row is seq_len tokens
  bool truncated = false;         // some samples are longer than seq_len and are cut to it
  double rows_per_example = 1;    // 2 for paired objectives: chosen and rejected go through the policy together
  double forward_only_rows = 0;   // rows per example run forward without backward (reference model, KTO's KL)
  double row_tokens = 0;          // tokens per row the GEMMs run over, padding included (expected)
  double attention_tokens = 0;    // keys each query attends to, full-square equivalent (expected)
  double useful_tokens = 0;       // of row_tokens, the samples' own
  double peak_row_tokens = 0;     // the longest row: what memory must hold
  double mean_sample_tokens = 0;  // after truncation

  double padding_fraction() const { return row_tokens > 0 ? 1 - useful_tokens / row_tokens : 0; }
  /// Forward passes without backward per forward-and-backward pass of the policy.
  double forward_only_share() const { return forward_only_rows / rows_per_example; }
};

/// The shape of the job's rows. Without packing each micro-batch is padded to its longest row, drawn from
/// micro_batch x rows_per_example samples: at random, or with group_by_length as a slice of a length-sorted
/// mega-batch of 50 micro-batches (HF LengthGroupedSampler), which never pads more; with packing rows of seq_len are filled with whole samples and
/// attention stays within each sample (FlashAttention varlen or a block mask).
SequenceShape ShapeOf(const Training& training);

/// Whether the objective compares the policy with a frozen reference model (DPO, KTO); ORPO and SimPO need none.
bool HasReferenceModel(TrainingObjective objective);
/// Whether the objective's examples are chosen/rejected pairs (DPO, ORPO, SimPO).
bool IsPairedObjective(TrainingObjective objective);
/// Whether the reference model is a second copy of the weights: full or freeze training of the policy. With
/// LoRA or QLoRA the reference is the base model with the adapters disabled.
bool HoldsReferenceWeights(const Training& training);

}  // namespace trainplan
