// Sample lengths as users give them (--sample-lengths: MEAN,MAX or a file), HF group_by_length, and the
// alternatives the search offers when a job does not fit: each with its re-estimated memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/search.h"
#include "core/sequences.h"
#include "core/units.h"
#include "io/sample_lengths.h"
#include "io/scenario_reader.h"
#include "support/run_cli.h"
#include "text/explain.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

using nlohmann::json;
using test_support::RunCli;

// The seen case's model and sequence length (a 14B model with a 152k vocabulary at 8k tokens).
constexpr const char* kSeenModel = "qwen2.5-14b";
constexpr int kSeenSeqLen = 8192;

Training Lengths(int64_t micro_batch, bool grouped) {
  Training t;
  t.seq_len = 4096;
  t.micro_batch = micro_batch;
  t.group_by_length = grouped;
  return t;
}

TEST(GroupByLength, HistogramIsExact) {
  // {100, 1000} equally likely, micro-batches of 2 from sorted mega-batches of 100: with X ~ Binomial(100, 0.5)
  // samples of 100 tokens, floor(X / 2) micro-batches hold only those; E = (50 - P(X odd)) / 2 = 24.75 of 50.
  Training t = Lengths(2, true);
  t.sample_lengths = {{1000, 0.5}, {100, 0.5}};
  const SequenceShape s = ShapeOf(t);
  EXPECT_NEAR(s.row_tokens, (100 * 24.75 + 1000 * 25.25) / 50, 1e-9);
  EXPECT_NEAR(s.attention_tokens, (1e4 * 24.75 + 1e6 * 25.25) / 50 / s.row_tokens, 1e-9);
  EXPECT_NEAR(s.useful_tokens, 550, 1e-9);
  EXPECT_EQ(s.peak_row_tokens, 1000);
  t.group_by_length = false;
  EXPECT_NEAR(ShapeOf(t).row_tokens, 775, 1e-9);  // random order: 1000 unless both draws are 100
}

TEST(GroupByLength, MeanAndMaxOrderStatistics) {
  // One sample per micro-batch: nothing to pad, sorted or not.
  Training t = Lengths(1, true);
  t.sample_mean_tokens = 300;
  t.sample_max_tokens = 2000;
  EXPECT_NEAR(ShapeOf(t).row_tokens, 300, 1e-6);
  // Four per micro-batch: random order pads to E[M_4] = 827.586; sorted slices pad far less.
  t.micro_batch = 4;
  const double grouped = ShapeOf(t).row_tokens;
  t.group_by_length = false;
  EXPECT_NEAR(ShapeOf(t).row_tokens, 827.586, 1e-3);
  EXPECT_GT(grouped, 300);
  EXPECT_LT(grouped, 400);
}

// The sampler itself, simulated: shuffle, mega-batches of 50 micro-batches sorted by length, consecutive slices.
TEST(GroupByLength, MatchesASimulatedLengthGroupedSampler) {
  const std::vector<std::pair<double, double>> bins = {{128, 0.6}, {512, 0.3}, {4096, 0.1}};
  for (int64_t n : {2, 4, 8}) {
    std::mt19937_64 rng(7);
    std::discrete_distribution<int> pick({0.6, 0.3, 0.1});
    double padded = 0;
    int batches = 0;
    std::vector<double> mega(static_cast<size_t>(50 * n));
    for (int round = 0; round < 4000; ++round) {
      for (double& l : mega) l = bins[static_cast<size_t>(pick(rng))].first;
      std::sort(mega.begin(), mega.end());
      for (size_t j = static_cast<size_t>(n) - 1; j < mega.size(); j += static_cast<size_t>(n), ++batches)
        padded += mega[j];
    }
    Training t = Lengths(n, true);
    t.sample_lengths = bins;
    EXPECT_NEAR(ShapeOf(t).row_tokens, padded / batches, 0.01 * padded / batches) << n;
  }
}

// Property: sorting mega-batches never pads more than random order, for any lengths and micro-batch, and the
// job is never slower for it.
TEST(GroupByLength, NeverPadsMoreThanRandomOrder) {
  const json lengths[] = {
      {{"sample_mean_tokens", 300}, {"sample_max_tokens", 2000}},
      {{"sample_mean_tokens", 1000}, {"sample_max_tokens", 1000}},
      {{"sample_mean_tokens", 64}, {"sample_max_tokens", 4096}},
      {{"sample_mean_tokens", 3000}, {"sample_max_tokens", 9000}},
      {{"sample_lengths", {{128, 0.6}, {512, 0.3}, {4096, 0.1}}}},
      {{"sample_lengths", {{4096, 0.01}, {20, 0.99}}}},
      {{"sample_lengths", {{9000, 0.2}, {5000, 0.3}, {700, 0.5}}}},
  };
  int compared = 0;
  for (const json& l : lengths) {
    for (int micro_batch : {1, 2, 4, 8, 32}) {
      for (const char* objective : {"sft", "dpo"}) {
        json training = {{"method", "lora"}, {"seq_len", 4096}, {"micro_batch", micro_batch},
                         {"global_batch", 256}, {"tokens", 1e8}, {"objective", objective}};
        training.update(l);
        const json doc = {{"model", "llama-3-8b"}, {"training", training}, {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}}};
        const Scenario random = ScenarioFromJson(doc, false);
        json grouped_doc = doc;
        grouped_doc["training"]["group_by_length"] = true;
        const Scenario grouped = ScenarioFromJson(grouped_doc, false);
        const SequenceShape r = ShapeOf(random.training), g = ShapeOf(grouped.training);
        EXPECT_LE(g.row_tokens, r.row_tokens * (1 + 1e-9)) << training.dump();
        EXPECT_LE(g.padding_fraction(), r.padding_fraction() + 1e-9) << training.dump();
        EXPECT_GE(g.row_tokens, g.useful_tokens * (1 - 1e-9)) << training.dump();
        EXPECT_LE(EstimateScenario(grouped).time.training_s, EstimateScenario(random).time.training_s * (1 + 1e-9))
            << training.dump();
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 7 * 5 * 2);
}

TEST(GroupByLength, RefusedWithPacking) {
  try {
    ScenarioFromJson({{"model", "llama-3-8b"},
                      {"training", {{"packing", true}, {"group_by_length", true}, {"sample_mean_tokens", 300},
                                    {"sample_max_tokens", 2000}}},
                      {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
                     false);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.group_by_length");
  }
}

// The file forms: a list, a histogram, JSON Lines of records, a JSON array.
TEST(SampleLengthsFile, Forms) {
  const SampleLengthHistogram list = SampleLengthsFromText("# lengths\n100\n\n300\n100\n700\n", "f", "x");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], (std::pair<double, double>{100, 0.5}));
  EXPECT_EQ(list[2], (std::pair<double, double>{700, 0.25}));
  const SampleLengthHistogram histogram = SampleLengthsFromText("100 30\n300,10\n700\t60\n", "f", "x");
  ASSERT_EQ(histogram.size(), 3u);
  EXPECT_DOUBLE_EQ(histogram[0].second, 0.3);
  EXPECT_DOUBLE_EQ(histogram[2].second, 0.6);
  const SampleLengthHistogram records =
      SampleLengthsFromText("{\"input_ids\": [1, 2, 3]}\n{\"length\": 3}\n{\"num_tokens\": 9, \"text\": \"hi\"}\n", "f", "x");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], (std::pair<double, double>{3, 2.0 / 3}));
  const SampleLengthHistogram array = SampleLengthsFromText("[3, {\"input_ids\": [1, 2, 3]}, 9, 9]", "f", "x");
  ASSERT_EQ(array.size(), 2u);
  EXPECT_EQ(array[1], (std::pair<double, double>{9, 0.5}));
}

TEST(SampleLengthsFile, ManyLengthsKeepTheMeanAndTheLongest) {
  std::string text;
  double sum = 0;
  for (int l = 1; l <= 5000; ++l) {
    text += std::to_string(l) + "\n";
    sum += l;
  }
  const SampleLengthHistogram bins = SampleLengthsFromText(text, "f", "x");
  EXPECT_LE(bins.size(), kMaxSampleLengthBins);
  double mean = 0, total = 0;
  for (const auto& [tokens, fraction] : bins) {
    mean += tokens * fraction;
    total += fraction;
  }
  EXPECT_NEAR(total, 1, 1e-12);
  EXPECT_NEAR(mean, sum / 5000, 1e-9);
  EXPECT_EQ(bins.back(), (std::pair<double, double>{5000, 1.0 / 5000}));
}

TEST(SampleLengthsFile, BadInputNamesTheLineAndWhatIsAllowed) {
  auto fails = [](const std::string& text, const std::string& value_part) {
    try {
      SampleLengthsFromText(text, "--sample-lengths", "data.txt");
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--sample-lengths");
      EXPECT_NE(e.value().find(value_part), std::string::npos) << e.value();
      EXPECT_FALSE(e.allowed().empty());
    }
  };
  fails("", "no samples");
  fails("# only a comment\n\n", "no samples");
  fails("100\n0\n", "line 2: 0");
  fails("100\n-5\n", "line 2: -5");
  fails("100\nabc\n", "line 2: abc");
  fails("100\n12.5\n", "line 2: 12.5");
  fails("100 3\n200\n", "line 2: 200");  // forms mixed
  fails("100 3 4\n", "line 1");
  fails("100 -3\n", "line 1");
  fails("{\"text\": \"no lengths\"}\n", "line 1");
  fails("{\"length\": 10}\n{bad\n", "line 2");
  fails("[1, \"two\"]", "item 2");
  fails("1e300\n", "line 1");
}

TEST(SampleLengthsCli, MeanMaxAndFiles) {
  const std::string job = "estimate --model llama-3-8b --gpu h100-sxm --gpus 1 --micro-batch 4 --json ";
  const auto mean_max = RunCli(job + "--sample-lengths 380,2048");
  ASSERT_EQ(mean_max.status, 0) << mean_max.out;
  const json j = json::parse(mean_max.out);
  EXPECT_EQ(j["training"]["sequences"]["peak_row_tokens"], 2048);
  EXPECT_NEAR(j["training"]["sequences"]["mean_sample_tokens"].get<double>(), 380, 1e-9);

  const std::string list = trainplan::test_support::WriteTempFile("lengths.txt", "100\n300\n100\n700\n");
  const auto from_list = RunCli(job + "--sample-lengths " + list);
  ASSERT_EQ(from_list.status, 0) << from_list.out;
  EXPECT_NEAR(json::parse(from_list.out)["training"]["sequences"]["mean_sample_tokens"].get<double>(), 300, 1e-9);
  const std::string histogram = trainplan::test_support::WriteTempFile("lengths.hist", "100 2\n300 1\n700 1\n");
  const auto from_histogram = RunCli(job + "--sample-lengths " + histogram);
  ASSERT_EQ(from_histogram.status, 0) << from_histogram.out;
  EXPECT_EQ(json::parse(from_histogram.out)["training"]["sequences"], json::parse(from_list.out)["training"]["sequences"]);

  // Sorting by length pads less than random order.
  const auto grouped = RunCli(job + "--sample-lengths 380,2048 --group-by-length");
  ASSERT_EQ(grouped.status, 0) << grouped.out;
  EXPECT_LT(json::parse(grouped.out)["training"]["sequences"]["row_tokens"].get<double>(),
            j["training"]["sequences"]["row_tokens"].get<double>());
  std::filesystem::remove(list);
  std::filesystem::remove(histogram);
}

TEST(SampleLengthsCli, BadValuesNameTheFlag) {
  const std::string job = "estimate --model llama-3-8b --gpu h100-sxm --gpus 1 --sample-lengths ";
  const std::string empty = trainplan::test_support::WriteTempFile("empty.txt", "");
  const std::string zero = trainplan::test_support::WriteTempFile("zero.txt", "100\n0\n");
  for (const std::string& value : {std::string("2048,380"), std::string("0,10"), std::string("abc"),
                                   std::string("no-such-file.jsonl"), empty, zero}) {
    const auto run = RunCli(job + value);
    EXPECT_EQ(run.status, 2) << value << ": " << run.out;
    EXPECT_NE(run.out.find("invalid --sample-lengths: '"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("'; "), std::string::npos) << run.out;  // what is allowed follows
  }
  const auto both = RunCli(job + "380,2048 --sample-mean-tokens 300 --sample-max-tokens 900");
  EXPECT_EQ(both.status, 2) << both.out;
  std::filesystem::remove(empty);
  std::filesystem::remove(zero);
}

/// Searches one GPU of `gpu` for the job; the alternative `change` must be among those offered.
const Alternative* Offered(const PlanResult& r, AlternativeChange change) {
  for (const Alternative& a : r.alternatives)
    if (a.change == change) return &a;
  return nullptr;
}

/// The alternative's plan estimated afresh: it fits, and the summary shows its GiB per GPU.
void ExpectReestimated(const Scenario& changed_job, const Alternative& a) {
  ASSERT_TRUE(a.feasible) << AlternativeChangeText(a) << ": " << AlternativeSummary(a);
  const Estimate e = EstimateScenario(PlanScenario(changed_job, a.best));
  EXPECT_TRUE(e.memory.fits);
  EXPECT_DOUBLE_EQ(a.best.memory.per_gpu_bytes, e.memory.per_gpu_bytes);
  EXPECT_LT(e.memory.per_gpu_bytes, 24 * kGiB);
  EXPECT_NE(AlternativeSummary(a).find(fmt::format("{:.1f} GiB per GPU", e.memory.per_gpu_bytes / kGiB)),
            std::string::npos)
      << AlternativeSummary(a);
}

PlanConstraints OneGpu(const char* gpu, bool allow_offload) {
  PlanConstraints c;
  c.gpu_types = {gpu};
  c.gpus = 1;
  c.framework_fixed = true;
  c.allow_offload = allow_offload;
  return c;
}

// Seen: a QLoRA job on a 24 GB GPU that does not fit with the HF Trainer's standard loss (fp32 logits of a
// 152k vocabulary at 8k tokens) fits with Liger's fused linear cross-entropy; the alternatives list it with
// the memory a fresh estimate of the changed job gives. Its optimizer states are adapters' (small), so the
// paged optimizer is listed but does not fit.
TEST(Alternatives, QloraOn24GbFitsWithALighterLoss) {
  const Scenario job = ScenarioFromJson({{"model", kSeenModel},
                                         {"training", {{"method", "qlora"}, {"framework", "hf"}, {"seq_len", kSeenSeqLen},
                                                       {"tokens", 1e7}}},
                                         {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 1}}}},
                                        false);
  const PlanResult r = SearchPlans(job, OneGpu("rtx-4090", true), 2);
  ASSERT_FALSE(r.feasible);
  EXPECT_EQ(r.reason.code, NoPlanCode::kOutOfMemory);
  const Alternative* loss = Offered(r, AlternativeChange::kLoss);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->loss, Loss::kFusedLinear);
  EXPECT_NE(AlternativeChangeText(*loss).find("needs liger-kernel"), std::string::npos);
  Scenario with_loss = job;
  with_loss.training.loss = Loss::kFusedLinear;
  ExpectReestimated(with_loss, *loss);
  const Alternative* paged = Offered(r, AlternativeChange::kPagedOptimizer);
  ASSERT_NE(paged, nullptr);
  EXPECT_NE(AlternativeChangeText(*paged).find("needs bitsandbytes"), std::string::npos);
  EXPECT_FALSE(paged->feasible);
  // Without sample lengths neither packing nor group_by_length is offered.
  EXPECT_EQ(Offered(r, AlternativeChange::kPacking), nullptr);
  EXPECT_EQ(Offered(r, AlternativeChange::kGroupByLength), nullptr);
}

// A full fine-tune on 24 GB without offload: AdamW's fp32 states do not fit; the paged 8-bit optimizer does.
TEST(Alternatives, FullFineTuneOn24GbFitsWithAPagedOptimizer) {
  const Scenario job = ScenarioFromJson({{"model", "qwen2.5-1.5b"},
                                         {"training", {{"method", "full"}, {"framework", "hf"}, {"seq_len", 2048},
                                                       {"tokens", 1e7}}},
                                         {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 1}}}},
                                        false);
  const PlanResult r = SearchPlans(job, OneGpu("rtx-4090", false), 2);
  ASSERT_FALSE(r.feasible);
  const Alternative* paged = Offered(r, AlternativeChange::kPagedOptimizer);
  ASSERT_NE(paged, nullptr);
  Scenario with_paged = job;
  with_paged.training.optimizer = Optimizer::kPagedAdamW8bit;
  ExpectReestimated(with_paged, *paged);
}

// Activation offloading is offered where the engine has it (torchtune), re-searched like the rest; the HF
// Trainer has no switch for it, so a job there is not offered it.
TEST(Alternatives, ActivationOffloadingWhereTheEngineOffersIt) {
  json doc = {{"model", "qwen2.5-14b"},
              {"training", {{"method", "full"}, {"framework", "torchtune"}, {"seq_len", 8192}, {"tokens", 1e7}}},
              {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 1}}}};
  const PlanResult torchtune = SearchPlans(ScenarioFromJson(doc, false), OneGpu("rtx-4090", false), 2);
  ASSERT_FALSE(torchtune.feasible);
  const Alternative* offload = Offered(torchtune, AlternativeChange::kActivationOffloading);
  ASSERT_NE(offload, nullptr);
  EXPECT_NE(AlternativeChangeText(*offload).find("host RAM"), std::string::npos);
  EXPECT_EQ(Offered(torchtune, AlternativeChange::kLoss), nullptr);  // torchtune's loss is chunked already
  doc["training"]["framework"] = "hf";
  const PlanResult hf = SearchPlans(ScenarioFromJson(doc, false), OneGpu("rtx-4090", false), 2);
  EXPECT_EQ(Offered(hf, AlternativeChange::kActivationOffloading), nullptr);
}

// With sample lengths shorter than seq_len, packing and group_by_length are offered, each re-estimated.
TEST(Alternatives, SampleLengthsBringPackingAndGroupByLength) {
  const Scenario job = ScenarioFromJson(
      {{"model", "llama-3-8b"},
       {"training", {{"method", "lora"}, {"framework", "hf"}, {"seq_len", 4096}, {"micro_batch", 8},
                     {"sample_mean_tokens", 380}, {"sample_max_tokens", 4096}, {"tokens", 1e9}}},
       {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}},
      false);
  PlanConstraints c;
  c.gpu_types = {"h100-sxm"};
  c.gpus = 1;
  c.framework_fixed = true;
  c.deadline_s = 60;  // too slow as asked
  const PlanResult r = SearchPlans(job, c, 2);
  ASSERT_FALSE(r.feasible);
  const Alternative* packing = Offered(r, AlternativeChange::kPacking);
  const Alternative* grouped = Offered(r, AlternativeChange::kGroupByLength);
  ASSERT_NE(packing, nullptr);
  ASSERT_NE(grouped, nullptr);
  EXPECT_NE(AlternativeChangeText(*packing).find("needs the sample lengths"), std::string::npos);
  EXPECT_NE(AlternativeChangeText(*packing).find("loss weighting per sample"), std::string::npos);
  EXPECT_EQ(packing->reason.code, NoPlanCode::kTooSlow);
  EXPECT_EQ(grouped->reason.code, NoPlanCode::kTooSlow);
  // Each is faster than the job as asked, and packing faster than sorting.
  EXPECT_LT(packing->reason.fastest_s, grouped->reason.fastest_s);
  EXPECT_LT(grouped->reason.fastest_s, r.reason.fastest_s);
}

}  // namespace
}  // namespace trainplan
