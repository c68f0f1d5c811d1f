#include "core/sequences.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/units.h"

namespace trainplan {

namespace {

/// HF Trainer's LengthGroupedSampler shuffles the samples, cuts them into mega-batches of 50 batches, sorts each
/// mega-batch by length and hands out consecutive slices as micro-batches (get_length_grouped_indices,
/// megabatch_mult = min(50, samples / (4 x batch)); src/transformers/trainer_pt_utils.py, huggingface/transformers
/// 010a915c). Its batch is micro-batch x gradient-accumulation steps; one step (the least sorting: an
/// assumption, since ShapeOf sees no data-parallel size) gives 50 micro-batches per mega-batch.
constexpr int64_t kMegaBatchMicroBatches = 50;

/// Expected moments of the sample lengths (cut at seq_len) and of the row a micro-batch is padded to.
struct LengthMoments {
  double mean = 0, mean_square = 0;      // E[L], E[L^2]
  double padded = 0, padded_square = 0;  // E[R], E[R^2], R the longest of the micro-batch's n samples
  double longest = 0;
  bool truncated = false;
};

/// A micro-batch is n samples; `groups` micro-batches come from one sorted mega-batch of groups x n samples,
/// so micro-batch j (from the shortest) is padded to the (j n)-th shortest of them. groups = 1 is random order.
struct Batching {
  int64_t n = 1;
  int64_t groups = 1;
  int64_t megabatch() const { return n * groups; }
};

// Mean and maximum only: lengths follow L = max x U^k, U uniform on [0, 1], k = max / mean - 1 (an
// assumption: k = 0 is every sample at the maximum, k = 1 uniform lengths, larger k the right-skewed
// lengths of chat data). Its moments are closed forms: E[L^2] = max^2 / (2k + 1), and the r-th shortest of M
// samples is max x U_(r)^k with U_(r) ~ Beta(r, M - r + 1), so E[L_(r)^p] = max^p G(r + pk) G(M + 1) /
// (G(r) G(M + 1 + pk)) with G the gamma function (r = M = n: the longest of n, max n / (n + k)).
LengthMoments FromMeanAndMax(double mean, double max, double seq_len, Batching b) {
  LengthMoments m;
  m.truncated = max > seq_len;
  m.longest = std::min(max, seq_len);
  m.mean = std::min(mean, m.longest);  // cut samples keep at most seq_len tokens: an approximation
  const double k = m.longest / m.mean - 1;
  m.mean_square = m.longest * m.longest / (2 * k + 1);
  const double M = static_cast<double>(b.megabatch());
  auto order_moment = [&](double r, double power) {
    return std::exp(std::lgamma(r + power * k) - std::lgamma(r) + std::lgamma(M + 1) - std::lgamma(M + 1 + power * k));
  };
  for (int64_t j = 1; j <= b.groups; ++j) {
    const double r = static_cast<double>(j * b.n);
    m.padded += m.longest * order_moment(r, 1);
    m.padded_square += m.longest * m.longest * order_moment(r, 2);
  }
  m.padded /= static_cast<double>(b.groups);
  m.padded_square /= static_cast<double>(b.groups);
  return m;
}

/// E[floor(X / n)] for X ~ Binomial(M, p): the expected count of micro-batches whose longest sample is at most a
/// length l with F(l) = p, since the (j n)-th shortest of M is at most l when X = #{samples <= l} >= j n.
/// Random order (M = n) is P(X = n) = p^n. When X spreads over many multiples of n, X mod n is uniform to within
/// exp(-2 pi^2 (sd / n)^2) (under 1e-70 past 3 n), so E = (M p - (n - 1) / 2) / n; otherwise a sum over the
/// binomial's bulk (12 standard deviations).
double WholeGroupsAtMost(double p, Batching b) {
  if (p <= 0) return 0;
  if (p >= 1) return static_cast<double>(b.groups);
  const double n = static_cast<double>(b.n);
  if (b.groups == 1) return std::pow(p, n);
  const double M = static_cast<double>(b.megabatch()), sd = std::sqrt(M * p * (1 - p));
  if (sd > 3 * n) return (M * p - (n - 1) / 2) / n;
  const double lo = std::max(0.0, std::floor(M * p - 12 * sd - 1)), hi = std::min(M, std::ceil(M * p + 12 * sd + 1));
  double pmf = std::exp(std::lgamma(M + 1) - std::lgamma(lo + 1) - std::lgamma(M - lo + 1) + lo * std::log(p) +
                        (M - lo) * std::log1p(-p));
  double sum = 0;
  for (double x = lo; x <= hi; ++x) {
    sum += pmf * std::floor(x / n);
    pmf *= (M - x) / (x + 1) * p / (1 - p);
  }
  return sum;
}

// A histogram of [tokens, fraction]: the micro-batch's padded row is the bin l_i with probability
// (phi(F_i) - phi(F_i-)) / groups, phi = WholeGroupsAtMost and F the lengths' distribution, exactly. Bins may
// come in any order and share lengths (all those over seq_len do once cut).
LengthMoments FromHistogram(const std::vector<std::pair<double, double>>& bins, double seq_len, Batching b) {
  LengthMoments m;
  std::vector<std::pair<double, double>> sorted;  // [cut length, probability], ascending, one per length
  double total = 0;
  for (const auto& [tokens, fraction] : bins) total += fraction;
  for (const auto& [raw_tokens, fraction] : bins) {
    m.truncated = m.truncated || raw_tokens > seq_len;
    sorted.emplace_back(std::min(raw_tokens, seq_len), fraction / total);
  }
  std::sort(sorted.begin(), sorted.end());
  double below = 0, groups_below = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const double tokens = sorted[i].first, p = sorted[i].second;
    m.mean += p * tokens;
    m.mean_square += p * tokens * tokens;
    below += p;
    if (i + 1 < sorted.size() && sorted[i + 1].first == tokens) continue;  // the same length: one step of F
    const double groups_at_most = WholeGroupsAtMost(i + 1 == sorted.size() ? 1.0 : below, b);
    const double share = (groups_at_most - groups_below) / static_cast<double>(b.groups);
    m.padded += share * tokens;
    m.padded_square += share * tokens * tokens;
    groups_below = groups_at_most;
    m.longest = tokens;
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

  const Batching batching{tr.micro_batch * static_cast<int64_t>(shape.rows_per_example),
                          tr.group_by_length && !tr.packing ? kMegaBatchMicroBatches : 1};
  const LengthMoments m = tr.sample_lengths.empty()
                              ? FromMeanAndMax(tr.sample_mean_tokens, tr.sample_max_tokens, seq_len, batching)
                              : FromHistogram(tr.sample_lengths, seq_len, batching);
  shape.truncated = m.truncated;
  shape.mean_sample_tokens = m.mean;
  if (tr.packing) {
    // Rows of seq_len filled with whole samples (full rows: an assumption best-fit packing nearly meets);
    // each sample attends only to itself, so a row's attention is seq_len / E[L] samples of E[L^2].
    shape.attention_tokens = m.mean_square / m.mean;
  } else {
    // Dynamic padding: every row of the micro-batch is as long as its longest sample.
    shape.row_tokens = m.padded;
    shape.attention_tokens = m.padded_square / m.padded;
    shape.useful_tokens = m.mean;
    shape.peak_row_tokens = m.longest;
  }
  return shape;
}

}  // namespace trainplan
