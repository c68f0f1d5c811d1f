#pragma once
// The sentences that explain core's answers, made from its reason codes and numbers. Every face (terminal
// text, reports, the JSON writers in io) takes them from here, so they read the same everywhere.
#include <string>
#include <vector>

#include "catalog/prices.h"
#include "core/estimate.h"
#include "core/scenario.h"
#include "core/search.h"
#include "text/i18n.h"

namespace trainplan {

/// What an estimate of `scenario` assumes, with sources: framework profile, precision, recomputation,
/// attention, the GPU's datasheet and the links.
std::vector<std::string> EstimateAssumptions(const Scenario& scenario, Lang lang = Lang::kEn);
/// The same with what the memory features cost in time on this estimate: "activation offloading adds 0.31 s per
/// step (2.4 GB each way per micro-batch over PCIe 4.0 x16, 62% hidden behind compute)".
std::vector<std::string> EstimateAssumptions(const Scenario& scenario, const Estimate& estimate,
                                             Lang lang = Lang::kEn);

/// "user catalogs over the built-in ones (later files win): lab.json": the user catalog files that changed
/// the answer, so it can be reproduced; empty when there are none.
std::string UserCatalogsText(Lang lang = Lang::kEn);

/// "does not fit: needs 61.2 GiB per GPU on 24.0 GiB", one per warning of `estimate`.
std::vector<std::string> EstimateWarnings(const Scenario& scenario, const Estimate& estimate, Lang lang = Lang::kEn);

/// "global batch 128 sequences (524,288 tokens), the default for fine-tuning; --global-batch sets it": the
/// batch and where it came from (given, or DefaultGlobalBatch's policy, rounded to whole micro-batch x dp steps).
std::string GlobalBatchText(const Scenario& scenario, Lang lang = Lang::kEn);

/// "ranked by cost (the default): the cheapest plan within the deadline": the objective and why it was chosen.
std::string ObjectiveText(const PlanRank& rank, Lang lang = Lang::kEn);

/// "knee of the time-cost front: 64 x h100-sxm, 40 min for $1200; doubling the cost past it buys less than 10%
/// time"; empty when the plan has no knee noted.
std::string KneeText(const PlanRank& rank, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// "at the edge (189.3 of 192 GiB, above the 93% usable)": a peak that fits the GPU without its headroom.
std::string EdgeText(const MemoryEstimate& memory, Lang lang = Lang::kEn);

/// "266 GB", "0.5 GB": host RAM as it is bought and given to --host-ram (decimal GB; one decimal under 10 GB).
std::string HostRamText(double bytes);

/// "medium: GPU figures partly from secondary sources; ...".
std::string ConfidenceText(const Confidence& confidence, Lang lang = Lang::kEn);

/// "optimizer offloaded to the host (ZeRO-2) with full recomputation".
std::string FitChangeText(const FitOption& option, Lang lang = Lang::kEn);

/// "tp8 pp16 dp128 v2 zero1 mb1 recompute:selective": a plan's strategy in one line (sizes above 1 and
/// non-defaults only, besides tp/pp/dp).
std::string StrategyText(const Strategy& strategy, int64_t micro_batch);
std::string StrategyText(const Plan& plan);

/// Why the plan ranks where it does: "fastest: 64 x h100-sxm with megatron (tp8 ...), 9.5 days at MFU
/// 41%, $650487; 78% of memory used; largest overhead pp_comm (7% of the step)"; MFU under kLowMfu flagged as
/// low utilisation; for the headline plan, the objective and why; the Pareto knee when there is one.
std::string PlanWhy(const Plan& plan, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// Why a search found no plan: "does not fit: needs at least 61.2 GiB per GPU on 24.0 GiB ...", "too slow: ...".
std::string NoPlanText(const NoPlanReason& reason, const Currency& currency = UsdCurrency(), Lang lang = Lang::kEn);

/// "method lora", "up to 64 GPUs", "no deadline".
std::string AlternativeChangeText(const Alternative& alternative, Lang lang = Lang::kEn);
/// Its best plan's reason when it works, else why it still fails.
std::string AlternativeSummary(const Alternative& alternative, Lang lang = Lang::kEn,
                               const Currency& currency = UsdCurrency());
/// "method lora: fastest: ..." for the first alternative that works; empty when none does.
std::string FirstWorkingAlternative(const std::vector<Alternative>& alternatives, const Currency& currency = UsdCurrency(),
                                    Lang lang = Lang::kEn);

}  // namespace trainplan
