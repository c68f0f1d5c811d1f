#pragma once
// The bounds of the job's sizes, declared once: the document readers refuse values outside them and the
// validators check the same bounds, so every face states the same limit. No real job comes near the upper
// bounds; larger values are typos (an extra zero, bytes for tokens).
#include "base/range.h"

namespace trainplan::limits {

inline constexpr IntRange kSeqLen{1, 10'000'000};
inline constexpr IntRange kGpus{1, 1'000'000};
/// The largest NVLink domain (GB200 NVL72) and the largest node the search models.
inline constexpr IntRange kGpusPerNode{1, 72};
inline constexpr IntRange kParallel{1, 1'000'000};  // tp, pp, dp, cp, ep, interleave
inline constexpr IntRange kZeroStage{0, 3};
inline constexpr IntRange kMicroBatch{1, 100'000'000};
inline constexpr IntRange kGlobalBatch{0, 100'000'000};  // 0: derived
inline constexpr IntRange kLoraRank{1, 65536};
inline constexpr IntRange kMtpLayers{0, 16};  // DeepSeek-V3 trains 1

inline constexpr IntRange kSamples{1, 10'000'000'000'000};
inline constexpr IntRange kTop{1, 1000};
inline constexpr IntRange kCheckpointsKept{1, 1000};
/// The plan search's default largest GPU count (Llama 3 405B trained on 16,384 H100s); a larger exact count
/// is outside the search unless max_gpus, read within kGpus as every GPU count is, raises it.
inline constexpr int kSearchGpus = 16384;
inline constexpr double kMaxTokens = 1e16;  // ~600x the 15.6T tokens of Llama 3 405B
inline constexpr double kMaxEpochs = 10000;
inline constexpr double kMaxLoraAlpha = 1e6;

}  // namespace trainplan::limits
