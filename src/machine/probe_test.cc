#include "machine/probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace trainplan {
namespace {

const std::string kFixtures = std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/";

std::string Fixture(const std::string& name) {
  std::ifstream in(kFixtures + name);
  EXPECT_TRUE(in) << name;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ProbeParse, CpuInfoCountsSocketsCoresAndThreads) {
  const CpuInfo cpu = ParseCpuInfo(Fixture("cpuinfo_2socket.txt"));
  EXPECT_EQ(cpu.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(cpu.sockets, 2);
  EXPECT_EQ(cpu.cores, 4);  // 2 per socket; core ids repeat across sockets
  EXPECT_EQ(cpu.threads, 8);
}

TEST(ProbeParse, CpuInfoWithoutTopologyCountsEachCpuAsACore) {
  const CpuInfo cpu = ParseCpuInfo("processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n");
  EXPECT_EQ(cpu.sockets, 1);
  EXPECT_EQ(cpu.cores, 2);
  EXPECT_EQ(cpu.threads, 2);
}

TEST(ProbeParse, NumaNodesFromSys) {
  EXPECT_EQ(CountNumaNodes(kFixtures + "sys/devices/system/node"), 2);
  EXPECT_EQ(CountNumaNodes(kFixtures + "sys/no-such-dir"), 1);
}

TEST(ProbeParse, MemInfoInBytes) {
  const HostMemory m = ParseMemInfo(Fixture("meminfo.txt"));
  EXPECT_DOUBLE_EQ(m.total_bytes, 2113389124.0 * 1024);
  EXPECT_DOUBLE_EQ(m.available_bytes, 2050412288.0 * 1024);
}

TEST(ProbeParse, OsRelease) {
  EXPECT_EQ(ParseOsRelease(Fixture("os-release-ubuntu2204.txt")), "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(ParseOsRelease("NAME=\"Rocky Linux\"\nVERSION=\"9.3 (Blue Onyx)\"\n"), "Rocky Linux 9.3 (Blue Onyx)");
}

TEST(ProbeParse, DisksFromSysBlock) {
  const std::vector<DiskInfo> disks = ReadDisks(kFixtures + "sys/block");
  ASSERT_EQ(disks.size(), 3u);  // loop0 skipped
  EXPECT_EQ(disks[0].name, "nvme0n1");
  EXPECT_EQ(disks[0].kind, "nvme");
  EXPECT_DOUBLE_EQ(disks[0].size_bytes, 7501476528.0 * 512);
  EXPECT_EQ(disks[2].name, "sda");
  EXPECT_EQ(disks[2].kind, "hdd");
}

TEST(ProbeParse, NetworkInterfacesAndRdmaPorts) {
  const std::vector<NetInfo> net = ReadNetwork(kFixtures + "sys/class/net", kFixtures + "sys/class/infiniband");
  std::map<std::string, NetInfo> by_name;
  for (const auto& n : net) by_name[n.name] = n;
  ASSERT_EQ(net.size(), 6u);
  EXPECT_EQ(by_name["eno1"].kind, "ethernet");
  EXPECT_DOUBLE_EQ(by_name["eno1"].speed_gbps, 25);
  EXPECT_EQ(by_name["ib0"].kind, "infiniband");
  EXPECT_DOUBLE_EQ(by_name["ib0"].speed_gbps, 400);
  EXPECT_EQ(by_name["enp1s0f1"].state, "down");
  EXPECT_DOUBLE_EQ(by_name["enp1s0f1"].speed_gbps, -1);
  EXPECT_EQ(by_name["lo"].kind, "loopback");
  EXPECT_EQ(by_name["mlx5_0/1"].kind, "infiniband");
  EXPECT_DOUBLE_EQ(by_name["mlx5_0/1"].speed_gbps, 400);
  EXPECT_EQ(by_name["mlx5_0/1"].state, "ACTIVE");
  EXPECT_EQ(by_name["mlx5_1/1"].kind, "roce");
  EXPECT_DOUBLE_EQ(by_name["mlx5_1/1"].speed_gbps, 200);
  EXPECT_EQ(by_name["mlx5_1/1"].state, "DOWN");
}

TEST(ProbeParse, SoftwareVersions) {
  EXPECT_EQ(ParseNvccVersion(Fixture("nvcc-version.txt")), "12.4");
  EXPECT_EQ(ParseNvccVersion("bash: nvcc: command not found"), "");
  EXPECT_EQ(ParseCudaVersionJson(Fixture("cuda-version.json")), "12.4.1");
  EXPECT_EQ(ParseCudaVersionJson("{not json"), "");
  EXPECT_EQ(NcclVersionFromFileName("libnccl.so.2.21.5"), "2.21.5");
  EXPECT_EQ(NcclVersionFromFileName("libnccl.so.2"), "");
  EXPECT_EQ(NcclVersionFromFileName("libnccl-net.so.2.21.5"), "");
  EXPECT_DOUBLE_EQ(ParseRdmaRateGbps("100 Gb/sec (4X EDR)\n"), 100);
}

TEST(ProbeTopology, EightH100OverNvswitch) {
  const auto topo = ParseNvidiaSmiTopology(Fixture("topo_8xh100_nvswitch.txt"));
  ASSERT_EQ(topo.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_EQ(topo[i].size(), 8u);  // the NIC columns are not GPUs
    for (size_t j = 0; j < 8; ++j) {
      EXPECT_EQ(topo[i][j], i == j ? "X" : "NV18");
      EXPECT_EQ(IsNvlinkCode(topo[i][j]), i != j);
    }
  }
}

TEST(ProbeTopology, TwoRtx4090OverPcie) {
  const auto topo = ParseNvidiaSmiTopology(Fixture("topo_2xrtx4090_pcie.txt"));
  ASSERT_EQ(topo.size(), 2u);
  EXPECT_EQ(topo[0][1], "PHB");
  EXPECT_EQ(topo[1][0], "PHB");
  EXPECT_FALSE(IsNvlinkCode(topo[0][1]));
}

TEST(ProbeTopology, NoGpuGivesAnEmptyMatrix) {
  EXPECT_TRUE(ParseNvidiaSmiTopology(Fixture("topo_no_gpu.txt")).empty());
}

TEST(ProbeTopology, TruncatedRowIsBadInput) {
  EXPECT_THROW(ParseNvidiaSmiTopology("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \n"), InputError);
}

TEST(ProbeCatalog, NvmlNamesMatchTheCatalog) {
  EXPECT_EQ(MatchCatalogGpu("NVIDIA H200"), "h200");
  EXPECT_EQ(MatchCatalogGpu("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(MatchCatalogGpu("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(MatchCatalogGpu("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(MatchCatalogGpu("NVIDIA A100-SXM4-80GB"), "a100-80gb-sxm");
  EXPECT_EQ(MatchCatalogGpu("Tesla V100-SXM2-32GB"), "v100-32gb-sxm2");
  EXPECT_EQ(MatchCatalogGpu("NVIDIA L40S"), "l40s");
  EXPECT_EQ(MatchCatalogGpu("Matrox G200eW"), "");
}

TEST(ProbeMachine, ReadsThisMachine) {
  ProbeOptions options;
  options.checkpoint_path = ::testing::TempDir();
  options.software = false;
  const MachineProbe p = ProbeMachine(options);
  utsname uts{};
  ASSERT_EQ(uname(&uts), 0);
  EXPECT_EQ(p.kernel, uts.release);
  EXPECT_GE(p.cpu.threads, 1);
  EXPECT_LE(p.cpu.cores, p.cpu.threads);
  EXPECT_GE(p.cpu.numa_nodes, 1);
  // MemTotal is the kernel's total RAM pages, which sysconf reports too.
  EXPECT_DOUBLE_EQ(p.memory.total_bytes, static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE));
  EXPECT_GT(p.memory.available_bytes, 0);
  EXPECT_LE(p.memory.available_bytes, p.memory.total_bytes);
  ASSERT_EQ(p.paths.size(), 1u);
  EXPECT_EQ(p.paths[0].role, "checkpoint");
  EXPECT_GT(p.paths[0].free_bytes, 0);
  EXPECT_LE(p.paths[0].free_bytes, p.paths[0].total_bytes);
  // No GPU is an answer, not an error: either NVML listed GPUs or the probe says why there are none.
  if (p.gpus.empty()) {
    EXPECT_EQ(p.gpu_status.rfind("no NVIDIA GPU found", 0), 0u) << p.gpu_status;
    EXPECT_NE(RenderProbe(p).find("no NVIDIA GPU found"), std::string::npos);
  } else {
    EXPECT_EQ(p.topology.size(), p.gpus.size());
  }
}

TEST(ProbeMachine, MissingDriverLibraryIsANormalAnswer) {
  ProbeOptions options;
  options.software = false;
  options.nvml_library = "libnvidia-ml-absent.so.1";
  const MachineProbe p = ProbeMachine(options);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_NE(p.gpu_status.find("no NVIDIA GPU found"), std::string::npos);
  EXPECT_NE(p.gpu_status.find("libnvidia-ml-absent.so.1"), std::string::npos);
}

TEST(ProbeMachine, UnreadablePathIsBadInput) {
  ProbeOptions options;
  options.software = false;
  options.data_path = "/no/such/dataset/dir";
  EXPECT_THROW(ProbeMachine(options), InputError);
}

TEST(ProbeJson, RoundTripsAndRejectsOtherDocuments) {
  MachineProbe p;
  p.hostname = "node1";
  p.cpu = ParseCpuInfo(Fixture("cpuinfo_2socket.txt"));
  p.disks = ReadDisks(kFixtures + "sys/block");
  p.network = ReadNetwork(kFixtures + "sys/class/net", kFixtures + "sys/class/infiniband");
  p.software = {{"torch", "2.4.0"}, {"nccl", "2.21.5"}};
  p.topology = ParseNvidiaSmiTopology(Fixture("topo_2xrtx4090_pcie.txt"));
  ProbedGpu gpu;
  gpu.nvml.name = "NVIDIA GeForce RTX 4090";
  gpu.nvml.throttle_reasons = kThrottleSwPowerCap;
  gpu.catalog_id = "rtx-4090";
  p.gpus = {gpu, gpu};
  const nlohmann::json doc = ProbeToJson(p);
  EXPECT_EQ(ProbeToJson(ProbeFromJson(doc, "probe")), doc);
  nlohmann::json broken = doc;
  broken["cpu"] = "fast";
  EXPECT_THROW(ProbeFromJson(broken, "probe"), InputError);
  broken = doc;
  broken.erase("gpus");
  EXPECT_THROW(ProbeFromJson(broken, "probe"), InputError);
}

TEST(ProbeRender, HumanBytes) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(24.0 * 1024 * 1024 * 1024), "24.0 GiB");
  EXPECT_EQ(HumanBytes(1.5 * 1024.0 * 1024 * 1024 * 1024), "1.5 TiB");
}

}  // namespace
}  // namespace trainplan
