#include "core/sequences.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/units.h"

namespace trainplan {

namespace {

/// Expected moments of the sample lengths (cut at seq_len) and of the longest of n draws.
struct LengthMoments {
  double mean = 0, mean_square = 0;          // E[L], E[L^2]
  double max_of_n = 0, max_of_n_square = 0;  // E[M_n], E[M_n^2], M_n the longest of n samples
  double longest = 0;
  bool truncated = false;
};

// Mean and maximum only: lengths follow L = max x U^k, U uniform on [0, 1], k = max / mean - 1 (an
// assumption: k = 0 is every sample at the maximum, k = 1 uniform lengths, larger k the right-skewed
// lengths of chat data). Its moments are closed forms: E[L^2] = max^2 / (2k + 1), and the longest of n is
// max x V^k with V the largest of n uniforms, so E[M_n] = max n / (n + k), E[M_n^2] = max^2 n / (n + 2k).
LengthMoments FromMeanAndMax(double mean, double max, double seq_len, double n) {
  LengthMoments m;
  m.truncated = max > seq_len;
  m.longest = std::min(max, seq_len);
  m.mean = std::min(mean, m.longest);  // cut samples keep at most seq_len tokens: an approximation
  const double k = m.longest / m.mean - 1;
  m.mean_square = m.longest * m.longest / (2 * k + 1);
  m.max_of_n = m.longest * n / (n + k);
  m.max_of_n_square = m.longest * m.longest * n / (n + 2 * k);
  return m;
}

// A histogram of [tokens, fraction]: the longest of n draws is at most l with probability F(l)^n, exactly.
// Bins may come in any order and share lengths (all those over seq_len do once cut): each bin takes its share
// of its length's probability. Quadratic in the bins, which are few, and free of allocation.
LengthMoments FromHistogram(const std::vector<std::pair<double, double>>& bins, double seq_len, double n) {
  LengthMoments m;
  double total = 0;
  for (const auto& [tokens, fraction] : bins) total += fraction;
  for (const auto& [raw_tokens, fraction] : bins) {
    const double tokens = std::min(raw_tokens, seq_len);
    m.truncated = m.truncated || raw_tokens > seq_len;
    double at_most = 0, below = 0;  // F(tokens) and F(tokens-)
    for (const auto& [other, other_fraction] : bins) {
      const double o = std::min(other, seq_len);
      if (o <= tokens) at_most += other_fraction / total;
      if (o < tokens) below += other_fraction / total;
    }
    const double p = fraction / total;
    const double share = p / (at_most - below) * (std::pow(std::min(at_most, 1.0), n) - std::pow(below, n));
    m.mean += p * tokens;
    m.mean_square += p * tokens * tokens;
    m.max_of_n += share * tokens;
    m.max_of_n_square += share * tokens * tokens;
    m.longest = std::max(m.longest, tokens);
  }
  return m;
}

}  // namespace

bool HasReferenceModel(TrainingObjective o) { return o == TrainingObjective::kDpo || o == TrainingObjective::kKto; }

bool IsPairedObjective(TrainingObjective o) {
  return o == TrainingObjective::kDpo || o == TrainingObjective::kOrpo || o == TrainingObjective::kSimpo;
}

bool HoldsReferenceWeights(const Training& tr) {
  return HasReferenceModel(tr.objective) && !IsAdapterMethod(tr.method);
}

SequenceShape ShapeOf(const Training& tr) {
  SequenceShape shape;
  // TRL's preference collators put the chosen and rejected rows of a pair in one batch; DPO's reference model
  // runs forward over both. KTO runs the policy forward without gradient over a mismatched "KL" completion
  // and the reference over the completion and the KL one (trl/trainer/dpo_trainer.py and kto_trainer.py,
  // huggingface/trl f2cd5771, 2026-07-24).
  if (IsPairedObjective(tr.objective)) shape.rows_per_example = 2;
  if (tr.objective == TrainingObjective::kDpo) shape.forward_only_rows = 2;
  if (tr.objective == TrainingObjective::kKto) shape.forward_only_rows = 3;

  const double seq_len = static_cast<double>(tr.seq_len);
  shape.row_tokens = shape.attention_tokens = shape.useful_tokens = shape.peak_row_tokens = seq_len;
  shape.mean_sample_tokens = seq_len;
  shape.described = !tr.sample_lengths.empty() || tr.sample_mean_tokens > 0;
  if (!shape.described) return shape;

  const double n = static_cast<double>(tr.micro_batch) * shape.rows_per_example;
  const LengthMoments m = tr.sample_lengths.empty()
                              ? FromMeanAndMax(tr.sample_mean_tokens, tr.sample_max_tokens, seq_len, n)
                              : FromHistogram(tr.sample_lengths, seq_len, n);
  shape.truncated = m.truncated;
  shape.mean_sample_tokens = m.mean;
  if (tr.packing) {
    // Rows of seq_len filled with whole samples (full rows: an assumption best-fit packing nearly meets);
    // each sample attends only to itself, so a row's attention is seq_len / E[L] samples of E[L^2].
    shape.attention_tokens = m.mean_square / m.mean;
  } else {
    // Dynamic padding: every row of the micro-batch is as long as its longest sample.
    shape.row_tokens = m.max_of_n;
    shape.attention_tokens = m.max_of_n_square / m.max_of_n;
    shape.useful_tokens = m.mean;
    shape.peak_row_tokens = m.longest;
  }
  return shape;
}

}  // namespace trainplan
