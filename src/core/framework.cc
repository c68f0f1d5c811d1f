#include "core/framework.h"

#include <algorithm>
#include <vector>

#include "catalog/efficiency.h"
#include "core/units.h"

namespace trainplan {

Framework DefaultFramework(Method method, int gpus, int gpus_per_node) {
  if (IsAdapterMethod(method) || method == Method::kFreeze) {
    return Framework::kHfTrainer;
  }
  if (method == Method::kPretrain && gpus > gpus_per_node) return Framework::kMegatron;
  return Framework::kDeepSpeed;
}

namespace {

// At most 9 digits a field, so that every field fits an int64 and "0.10" reads as ten.
constexpr size_t kMaxFieldDigits = 9;

std::vector<int64_t> VersionFields(std::string_view version) {
  std::vector<int64_t> fields{0};
  for (const char c : version) {
    if (c == '.') {
      fields.push_back(0);
    } else {
      fields.back() = fields.back() * 10 + (c - '0');
    }
  }
  while (fields.size() > 1 && fields.back() == 0) fields.pop_back();
  return fields;
}

}  // namespace

bool IsVersion(std::string_view version) {
  size_t digits = 0;
  for (const char c : version) {
    if (c == '.') {
      if (digits == 0) return false;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < kMaxFieldDigits) {
      ++digits;
    } else {
      return false;
    }
  }
  return digits > 0;
}

bool VersionBefore(std::string_view version, std::string_view bound) {
  const std::vector<int64_t> a = VersionFields(version), b = VersionFields(bound);
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

bool RunsLegacyAttention(AttentionKernel kernel, GpuGeneration generation, Framework framework,
                         std::string_view framework_version) {
  const EngineTiming& engine = Efficiency().Engine(framework);
  return kernel == engine.default_attention && !engine.attention_legacy_before.empty() &&
         !framework_version.empty() && VersionBefore(framework_version, engine.attention_legacy_before) &&
         engine.attention_legacy_rates[static_cast<int>(generation)] > 0;
}

double AttentionKernelRate(AttentionKernel kernel, GpuGeneration generation, Framework framework,
                           std::string_view framework_version) {
  if (RunsLegacyAttention(kernel, generation, framework, framework_version))
    return Efficiency().Engine(framework).attention_legacy_rates[static_cast<int>(generation)];
  return Efficiency().AttentionRate(kernel, generation);
}

}  // namespace trainplan
