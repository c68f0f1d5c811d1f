#pragma once
// Efficiency versus scale: a synchronous step finishes when its slowest rank does. Same-SKU GPUs do not run
// at one speed (power management and manufacturing spread), so the more ranks a step synchronises, the slower
// its slowest one is expected to be. docs/performance.md "Scale"; the spread: data/efficiency.json "scale".

namespace trainplan {

/// Expected maximum of n independent standard normal draws, by Blom's (1958) plotting position
/// Phi^-1((n - 0.375) / (n + 0.25)): within 1% of the exact value from n = 10 to 10^6 (1.539 at 10,
/// 3.241 at 1,000). 0 for n <= 1; never decreases with n.
double ExpectedMaxStandardNormal(double n);

/// Seconds a step of `busy_s` of GPU work per rank waits for its slowest of `ranks` ranks, when the ranks'
/// speeds spread with coefficient of variation `speed_cv` around the median GPU the kernel rates describe.
double StragglerSeconds(double busy_s, double ranks, double speed_cv);

}  // namespace trainplan
