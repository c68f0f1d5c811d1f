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
inline constexpr IntRange kEvalIntervalSteps{0, 100'000'000};  // 0: no evaluation during training
inline constexpr IntRange kEvalSequences{0, 10'000'000'000};   // sequences scored per evaluation

inline constexpr IntRange kSamples{1, 10'000'000'000'000};
inline constexpr IntRange kTop{1, 1000};
inline constexpr IntRange kCheckpointsKept{1, 1000};
/// The plan search's default largest GPU count (Llama 3 405B trained on 16,384 H100s); a larger exact count
/// is outside the search unless max_gpus, read within kGpus as every GPU count is, raises it.
inline constexpr int kSearchGpus = 16384;
inline constexpr double kMaxTokens = 1e16;  // ~600x the 15.6T tokens of Llama 3 405B
inline constexpr double kMaxEpochs = 10000;
inline constexpr double kMaxLoraAlpha = 1e6;
inline constexpr double kMaxReduceBucketElements = 1e12;  // DeepSpeed reduce_bucket_size; its default is 5e8
/// An expert capacity as a multiple of the mean load (Megatron-Core moe_expert_capacity_factor; GShard and
/// Switch Transformer train with 1.0-2.0); 0 is dropless.
inline constexpr double kMaxMoeCapacityFactor = 64;

/// Bounds of a real-valued field: (lo, hi], or [lo, hi] when `lo_inclusive`.
struct NumberRange {
  double lo, hi;
  bool lo_inclusive = false;
};

// Amounts and rates of plan, recommend and review requests. Money is in the request's currency, so each bound
// leaves room for CNY (about 7 per USD) and is still far above any real figure.
/// Budget: Stargate's announced USD 500 billion is 1/20 of it.
inline constexpr NumberRange kBudget{0, 1e13};
/// Rent per GPU-hour: H100s rent for USD 2-4 an hour (2025), so 1e5 is ~10,000x a real rate in CNY.
inline constexpr NumberRange kRentPerGpuHour{0, 1e5};
/// Purchase per GPU: a GB200 lists near USD 70,000 (2025); 1e8 leaves 200x in CNY.
inline constexpr NumberRange kPurchasePerGpu{0, 1e8};
/// The bounds platform policies are checked against (core/platform.cc): electricity in USD per kWh (industrial
/// rates are 0.05-0.30), the facility's PUE (1.1-2.0 in practice), months of recurring use (20 years).
inline constexpr NumberRange kElectricityUsdPerKwh{0, 5};
inline constexpr NumberRange kPue{1, 3, true};
inline constexpr NumberRange kMonths{0, 240};
/// Colocation costs USD 150-300 per kW-month (2025): 10,000 is a typo's bound, not a market's.
inline constexpr NumberRange kHostingUsdPerKwMonth{0, 10000, true};
/// Dataset on disk in GB: 100 PB, more than kMaxTokens stored as 4-byte token ids (40 PB).
inline constexpr NumberRange kDatasetGb{0, 1e8};
// A reviewed build's parts: one drive (the largest ship 122.88 TB, 2025), a node's RAM (the largest 8-socket
// servers hold 32 TB), one power supply (server PSUs reach 5.5 kW).
inline constexpr NumberRange kDriveTb{0, 1000};
inline constexpr NumberRange kNodeRamGb{0, 1e5};
inline constexpr NumberRange kPsuWatts{0, 1e5};
/// Drives, sockets or power supplies of one node (a 4U JBOD holds about 100 drives).
inline constexpr IntRange kNodeParts{1, 1000};

}  // namespace trainplan::limits
