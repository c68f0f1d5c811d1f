#include "machine/measure.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/model_catalog.h"

namespace trainplan {
namespace {

// A GPU whose every timed block takes kElapsedMs: the TFLOP/s and bandwidths follow exactly.
constexpr float kElapsedMs = 8.0f;
int g_devices = 1;
int g_malloc_status = 0;
int g_gemm_calls = 0;
int g_all_reduce_calls = 0;
int g_live_buffers = 0;
uintptr_t g_next_pointer = 0x1000;

int FakeOk() { return 0; }
int FakeDeviceCount(int* count) {
  *count = g_devices;
  return 0;
}
int FakeSetDevice(int) { return 0; }
int FakeMalloc(void** pointer, size_t) {
  if (g_malloc_status != 0) return g_malloc_status;
  *pointer = reinterpret_cast<void*>(g_next_pointer += 0x1000);
  ++g_live_buffers;
  return 0;
}
int FakeFree(void*) {
  --g_live_buffers;
  return 0;
}
int FakeMemcpy(void*, const void*, size_t, int) { return 0; }
int FakeCreate(void** handle) {
  *handle = reinterpret_cast<void*>(g_next_pointer += 0x1000);
  return 0;
}
int FakeDestroy(void*) { return 0; }
int FakeRecord(void*, void*) { return 0; }
int FakeElapsed(float* ms, void*, void*) {
  *ms = kElapsedMs;
  return 0;
}
int FakeCudaVersion(int* version) {
  *version = 12040;
  return 0;
}
const char* FakeCudaError(int status) { return status == 2 ? "out of memory" : "unknown"; }
int FakeBlasSetStream(void*, void*) { return 0; }
int FakeBlasVersion(void*, int* version) {
  *version = 120402;
  return 0;
}
int FakeGemm(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*,
             void*, int, int, int, int) {
  ++g_gemm_calls;
  return 0;
}
int FakeNcclVersion(int* version) {
  *version = 22105;
  return 0;
}
int FakeNcclInitAll(void** comms, int devices, const int*) {
  for (int i = 0; i < devices; ++i) comms[i] = reinterpret_cast<void*>(g_next_pointer += 0x1000);
  return 0;
}
int FakeAllReduce(const void*, void*, size_t, int, int, void*, void*) {
  ++g_all_reduce_calls;
  return 0;
}

GpuApi FakeApi(bool with_nccl) {
  GpuApi api;
  api.get_device_count = FakeDeviceCount;
  api.set_device = FakeSetDevice;
  api.malloc = FakeMalloc;
  api.free = FakeFree;
  api.memcpy = FakeMemcpy;
  api.stream_create = FakeCreate;
  api.stream_destroy = FakeDestroy;
  api.event_create = FakeCreate;
  api.event_destroy = FakeDestroy;
  api.event_record = FakeRecord;
  api.event_synchronize = FakeDestroy;
  api.event_elapsed_ms = FakeElapsed;
  api.driver_version = FakeCudaVersion;
  api.runtime_version = FakeCudaVersion;
  api.cuda_error = FakeCudaError;
  api.blas_create = FakeCreate;
  api.blas_destroy = FakeDestroy;
  api.blas_set_stream = FakeBlasSetStream;
  api.blas_version = FakeBlasVersion;
  api.gemm_ex = FakeGemm;
  if (with_nccl) {
    api.nccl_version = FakeNcclVersion;
    api.nccl_init_all = FakeNcclInitAll;
    api.nccl_destroy = FakeDestroy;
    api.nccl_all_reduce = FakeAllReduce;
    api.nccl_group_start = FakeOk;
    api.nccl_group_end = FakeOk;
  } else {
    api.nccl_missing = "libnccl.so.2 not found";
  }
  return api;
}

MeasureOptions Options() {
  MeasureOptions options;
  options.shapes = {{"q_proj", 4096, 4096, 4096}, {"lm_head", 4096, 128256, 4096}};
  options.allreduce_bytes = {8e6, 1e9};
  options.gpu_name = "NVIDIA H100 80GB HBM3";
  options.gpu_catalog_id = "h100-sxm";
  options.driver_version = "550.54.15";
  options.hostname = "node7";
  options.date = "2026-12-01";
  return options;
}

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_devices = 1;
    g_malloc_status = 0;
    g_gemm_calls = 0;
    g_all_reduce_calls = 0;
    g_live_buffers = 0;
  }
};

TEST_F(MeasureTest, GemmTflopsFromTheTimedEvents) {
  std::string error;
  const auto result = MeasureWith(FakeApi(false), Options(), &error);
  ASSERT_TRUE(result) << error;
  ASSERT_EQ(result->gemm.size(), 4u);  // two shapes in bf16, then in fp16
  const double seconds = kElapsedMs / 1e3 / 20;
  EXPECT_EQ(result->gemm[0].dtype, "bf16");
  EXPECT_EQ(result->gemm[3].dtype, "fp16");
  EXPECT_DOUBLE_EQ(result->gemm[0].tflops, 2.0 * 4096 * 4096 * 4096 / seconds / 1e12);  // 343.597...
  EXPECT_DOUBLE_EQ(result->gemm[1].tflops, 2.0 * 4096 * 128256 * 4096 / seconds / 1e12);
  EXPECT_EQ(result->gemm[1].n, 128256);
  EXPECT_EQ(g_gemm_calls, 4 * (5 + 20));  // warm-up and timed calls of each
  EXPECT_EQ(g_live_buffers, 0);            // every buffer freed
  EXPECT_TRUE(result->allreduce.empty());  // one GPU: nothing to reduce, NCCL not needed
  EXPECT_EQ(result->gpus, 1);
  EXPECT_EQ(result->libraries.at("cublas"), "12.4.2");
  EXPECT_EQ(result->libraries.at("cudart"), "12.4");
  EXPECT_EQ(result->libraries.at("driver"), "550.54.15");
  EXPECT_EQ(result->source, "trainplan calibrate --measure on node7");
}

TEST_F(MeasureTest, AllReduceBusBandwidthAsNcclTestsDefinesIt) {
  g_devices = 8;
  std::string error;
  const auto result = MeasureWith(FakeApi(true), Options(), &error);
  ASSERT_TRUE(result) << error;
  EXPECT_EQ(result->gpus, 8);
  ASSERT_EQ(result->allreduce.size(), 2u);
  const AllReduceMeasurement& big = result->allreduce[1];
  EXPECT_DOUBLE_EQ(big.bytes, 1e9);
  EXPECT_DOUBLE_EQ(big.algbw_gbps, 1e9 / (8e-3 / 20) / 1e9);  // 2500 GB/s
  EXPECT_DOUBLE_EQ(big.busbw_gbps, 2500.0 * 2 * 7 / 8);      // 4375 GB/s
  EXPECT_EQ(g_all_reduce_calls, 2 * 8 * (5 + 20));            // each size: every GPU, warm-up and timed
  EXPECT_EQ(result->libraries.at("nccl"), "2.21.5");
  EXPECT_EQ(g_live_buffers, 0);
  // --max-gpus style limits take fewer GPUs.
  MeasureOptions four = Options();
  four.max_gpus = 4;
  EXPECT_DOUBLE_EQ(MeasureWith(FakeApi(true), four, &error)->allreduce[1].busbw_gbps, 2500.0 * 2 * 3 / 4);
}

TEST_F(MeasureTest, FailuresNameTheCallOrTheMissingLibrary) {
  g_malloc_status = 2;
  std::string error;
  EXPECT_FALSE(MeasureWith(FakeApi(false), Options(), &error));
  EXPECT_EQ(error, "cudaMalloc: out of memory (CUDA error 2)");
  g_malloc_status = 0;
  g_devices = 2;
  EXPECT_FALSE(MeasureWith(FakeApi(false), Options(), &error));
  EXPECT_EQ(error, "all-reduce over 2 GPUs needs NCCL: libnccl.so.2 not found");
  g_devices = 0;
  EXPECT_FALSE(MeasureWith(FakeApi(true), Options(), &error));
  EXPECT_EQ(error, "no CUDA device: the CUDA runtime reports none");
}

TEST(Measure, MissingLibrariesAreReportedByName) {
  std::string error;
  GpuLibraryNames names;
  names.cudart = {"libtrainplan-absent-cudart.so.12", "libtrainplan-absent-cudart.so"};
  EXPECT_EQ(GpuLibraries::Open(&error, names), nullptr);
  EXPECT_NE(error.find("the CUDA runtime (libcudart) not found (tried libtrainplan-absent-cudart.so.12, "
                       "libtrainplan-absent-cudart.so)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("LD_LIBRARY_PATH"), std::string::npos);
  EXPECT_FALSE(MeasureMachine(MeasureOptions(), &error, names, "libtrainplan-absent-nvml.so.1"));
  EXPECT_EQ(error.rfind("no NVIDIA driver to measure with: libtrainplan-absent-nvml.so.1", 0), 0u) << error;
}

TEST(Measure, TrainingGemmShapesOfLlama3) {
  const std::vector<GemmProblem> shapes = TrainingGemmShapes(FindModel("llama-3-8b"), 2 * 4096);
  ASSERT_EQ(shapes.size(), 5u);
  auto expect = [&](size_t i, const char* name, int64_t n, int64_t k) {
    EXPECT_EQ(shapes[i].name, name);
    EXPECT_EQ(shapes[i].m, 8192);
    EXPECT_EQ(shapes[i].n, n);
    EXPECT_EQ(shapes[i].k, k);
  };
  expect(0, "q_proj+o_proj", 4096, 4096);
  expect(1, "k_proj+v_proj", 1024, 4096);
  expect(2, "gate_proj+up_proj", 14336, 4096);
  expect(3, "down_proj", 4096, 14336);
  expect(4, "lm_head", 128256, 4096);
}

TEST(Measure, RoutedExpertsGetTheirShareOfTokensAndFusedLinearsOneGemm) {
  ModelSpec model;
  model.hidden_size = 1024;
  model.vocab_size = 32000;
  LayerGroup group;
  group.count = 4;
  group.spec.linears = {{"qkv_proj", Module::kAttention, 1024, 3072},
                        {"router", Module::kRouter, 1024, 8},
                        {"gate_proj", Module::kExpert, 1024, 2048, false, 8, 2},
                        {"up_proj", Module::kExpert, 1024, 2048, false, 8, 2, true},
                        {"down_proj", Module::kExpert, 2048, 1024, false, 8, 2}};
  model.layers = {group};
  const std::vector<GemmProblem> shapes = TrainingGemmShapes(model, 4096);
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].name, "qkv_proj");
  EXPECT_EQ(shapes[1].name, "gate_proj+up_proj");
  EXPECT_EQ(shapes[1].m, 1024);  // 4096 tokens x top-2 over 8 experts
  EXPECT_EQ(shapes[1].n, 4096);
  EXPECT_EQ(shapes[2].m, 1024);
  EXPECT_EQ(shapes[3].name, "lm_head");
}

TEST(Measure, CatalogFileShape) {
  MachineMeasurement m;
  m.gpu = "h100-sxm";
  m.gpu_name = "NVIDIA H100 80GB HBM3";
  m.gpus = 8;
  m.date = "2026-12-01";
  m.source = "trainplan calibrate --measure on node7";
  m.gemm = {{"bf16", 8192, 4096, 4096, 712.5}};
  m.allreduce = {{1e9, 2500, 4375}};
  m.libraries = {{"cublas", "12.4.2"}, {"nccl", "2.21.5"}, {"driver", "550.54.15"}};
  const nlohmann::json expected = nlohmann::json::parse(R"({"efficiency": {"measurements": [{
    "gpu": "h100-sxm", "gpu_name": "NVIDIA H100 80GB HBM3", "gpus": 8, "date": "2026-12-01",
    "source": "trainplan calibrate --measure on node7",
    "gemm": [{"dtype": "bf16", "m": 8192, "n": 4096, "k": 4096, "tflops": 712.5}],
    "allreduce": [{"bytes": 1e9, "algbw_gbps": 2500.0, "busbw_gbps": 4375.0}],
    "libraries": {"cublas": "12.4.2", "nccl": "2.21.5", "driver": "550.54.15"}}]}})");
  EXPECT_EQ(MeasurementCatalogFile(m), expected);
}

}  // namespace
}  // namespace trainplan
