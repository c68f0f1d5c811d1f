#include "machine/nvml.h"

#include <gtest/gtest.h>

namespace trainplan {
namespace {

TEST(Nvml, MissingLibraryFailsCleanly) {
  std::string error;
  EXPECT_EQ(Nvml::Open(&error, "libnvidia-ml-absent.so.1"), nullptr);
  EXPECT_NE(error.find("could not be loaded"), std::string::npos) << error;
}

TEST(Nvml, LibraryWithoutNvmlSymbolsFailsCleanly) {
  std::string error;
  EXPECT_EQ(Nvml::Open(&error, "libc.so.6"), nullptr);  // loads, but exports no nvmlInit_v2
  EXPECT_NE(error.find("lacks the NVML entry points"), std::string::npos) << error;
}

TEST(Nvml, SystemLibraryOpensOrSaysWhy) {
  std::string error;
  const std::unique_ptr<Nvml> nvml = Nvml::Open(&error);
  if (nvml == nullptr) {
    EXPECT_FALSE(error.empty());
    return;
  }
  // With a driver: every GPU answers its name, and the topology is symmetric with "X" on the diagonal.
  EXPECT_FALSE(nvml->DriverVersion().empty());
  for (int i = 0; i < nvml->DeviceCount(); ++i) {
    std::string gpu_error;
    const NvmlGpuInfo g = nvml->Query(i, &gpu_error);
    EXPECT_TRUE(gpu_error.empty()) << gpu_error;
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.memory_total_bytes, 0);
    EXPECT_EQ(nvml->Link(i, i), "X");
    for (int j = 0; j < nvml->DeviceCount(); ++j) EXPECT_EQ(nvml->Link(i, j), nvml->Link(j, i));
  }
}

TEST(Nvml, ThrottleReasons) {
  EXPECT_EQ(ThrottleReasonNames(kThrottleSwPowerCap | kThrottleHwThermal),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  EXPECT_TRUE(ThrottleReasonNames(0).empty());
  EXPECT_TRUE(IsThermalThrottle(kThrottleSwThermal));
  EXPECT_TRUE(IsThermalThrottle(kThrottleHwThermal));
  EXPECT_FALSE(IsThermalThrottle(kThrottleSwPowerCap));
  EXPECT_TRUE(IsPowerThrottle(kThrottleSwPowerCap));
  EXPECT_TRUE(IsPowerThrottle(kThrottleHwPowerBrake));
  EXPECT_FALSE(IsPowerThrottle(kThrottleGpuIdle));  // an idle GPU clocks down by design
  EXPECT_FALSE(IsThermalThrottle(kThrottleGpuIdle));
}

TEST(Nvml, TopologyLevelsAsNvidiaSmiCodes) {
  EXPECT_EQ(TopologyCode(10, false, 0), "PIX");
  EXPECT_EQ(TopologyCode(20, false, 0), "PXB");
  EXPECT_EQ(TopologyCode(30, false, 0), "PHB");
  EXPECT_EQ(TopologyCode(40, false, 0), "NODE");
  EXPECT_EQ(TopologyCode(50, false, 0), "SYS");
  EXPECT_EQ(TopologyCode(50, true, 18), "NV18");
  EXPECT_EQ(TopologyCode(30, true, 4), "NV4");  // NVLink bridge over a PCIe host bridge path
}

}  // namespace
}  // namespace trainplan
