#pragma once
// Sentences on what an accelerator's software stack runs (core/stack.h).
#include <string>

#include "core/stack.h"
#include "text/i18n.h"

namespace trainplan {

/// Why a job cannot run on a GPU: "QLoRA needs bitsandbytes NF4 kernels, not available for Huawei Ascend 910B via
/// Huawei CANN with torch_npu (...): <the catalog's note> (<its source>)".
std::string StackGapText(const StackGap& gap, Lang lang = Lang::kEn);

/// A GPU type the search left out, and why: "Huawei Ascend 910B left out: QLoRA needs ...".
std::string SkippedGpuText(const StackGap& gap, Lang lang = Lang::kEn);

}  // namespace trainplan
