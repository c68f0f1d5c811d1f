#include "core/moe_time.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "catalog/efficiency.h"
#include "core/estimate.h"
#include "core/framework.h"
#include "core/model.h"
#include "core/scenario.h"
#include "core/units.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

TEST(MoeTime, AllToAllSplitsNvlinkAndNetworkShares) {
  // 64 ranks, 8 per node: of 125 tokens x 8 copies of 100 bytes, 1/64 stays, 7/64 cross NVLink, 56/64 the network.
  const AllToAllBytes a = ExpertAllToAllBytes(125, 8, 100, 64, 8, 0);
  EXPECT_DOUBLE_EQ(a.intra_bytes, 1000 * 100 * 7.0 / 64);
  EXPECT_DOUBLE_EQ(a.inter_bytes, 1000 * 100 * 56.0 / 64);
  EXPECT_EQ(a.intra_peers, 7);
  EXPECT_EQ(a.inter_peers, 56);
  // Inside one node nothing crosses the network; one rank sends nothing.
  EXPECT_EQ(ExpertAllToAllBytes(125, 8, 100, 8, 8, 0).inter_bytes, 0);
  EXPECT_EQ(ExpertAllToAllBytes(125, 8, 100, 1, 8, 0).intra_bytes, 0);
}

TEST(MoeTime, NodeLimitedRoutingCrossesTheNetworkOncePerNode) {
  // DeepSeek-V3: 8 groups, 4 per token, EP 64 over 8 nodes: at most 4 nodes, 7/8 of them remote.
  EXPECT_EQ(NodesPerToken(8, 4, 8), 4);
  EXPECT_EQ(NodesPerToken(8, 4, 16), 8);  // a group spans two nodes
  EXPECT_EQ(NodesPerToken(0, 0, 8), 0);
  const AllToAllBytes limited = ExpertAllToAllBytes(125, 8, 100, 64, 8, 4);
  EXPECT_DOUBLE_EQ(limited.inter_bytes, 125 * 4 * 7.0 / 8 * 100);
  EXPECT_DOUBLE_EQ(limited.intra_bytes, 1000 * 100 * 7.0 / 8);
  EXPECT_EQ(limited.inter_peers, 7);
  EXPECT_LT(limited.inter_bytes, ExpertAllToAllBytes(125, 8, 100, 64, 8, 0).inter_bytes);
}

TEST(MoeTime, ExpertRanksPerNodeFollowTheRankOrder) {
  EXPECT_EQ(ExpertRanksPerNode(64, 1, 8), 8);
  EXPECT_EQ(ExpertRanksPerNode(64, 2, 8), 4);   // TP 2 takes half of each node's GPUs
  EXPECT_EQ(ExpertRanksPerNode(4, 1, 8), 4);    // the whole group in one node
  EXPECT_EQ(ExpertRanksPerNode(16, 8, 8), 1);   // TP fills the node
  EXPECT_EQ(ExpertRanksPerNode(8, 4, 72), 8);   // a 72-GPU NVLink domain
}

TEST(MoeTime, OverlapOnlyLowersTheExposedTime) {
  for (double comm : {0.0, 1.0, 5.0, 20.0})
    for (double window : {0.0, 0.5, 3.0, 50.0})
      for (double share : {0.0, 0.3, 1.0}) {
        const double exposed = ExposedExpertComm(comm, window, share);
        EXPECT_LE(exposed, comm);
        EXPECT_GE(exposed, 0);
        EXPECT_LE(ExposedExpertComm(comm, window + 1, share), exposed);  // more compute to hide behind
      }
  EXPECT_DOUBLE_EQ(ExposedExpertComm(10, 4, 0.5), 0.5 * 10 + 0.5 * 6);
}

TEST(MoeTime, OnlyOverlappingEnginesPairMicroBatches) {
  EXPECT_EQ(PairedMicroBatchShare(MoeOverlap::kNone, 120, 16), 0);
  EXPECT_DOUBLE_EQ(PairedMicroBatchShare(MoeOverlap::kA2aOverlap, 120, 16), 105.0 / 120);
  EXPECT_DOUBLE_EQ(PairedMicroBatchShare(MoeOverlap::kDualPipe, 8, 1), 7.0 / 8);
  EXPECT_EQ(PairedMicroBatchShare(MoeOverlap::kA2aOverlap, 1, 1), 0);  // nothing to pair with
  EXPECT_EQ(PairedMicroBatchShare(MoeOverlap::kA2aOverlap, 10, 16), 0);
}

TEST(MoeTime, DualPipeHalvesTheBubble) {
  EXPECT_DOUBLE_EQ(PipelineBubbleSlots(MoeOverlap::kNone, 16, 1), 15);
  EXPECT_DOUBLE_EQ(PipelineBubbleSlots(MoeOverlap::kA2aOverlap, 16, 2), 7.5);
  EXPECT_DOUBLE_EQ(PipelineBubbleSlots(MoeOverlap::kDualPipe, 16, 1), 7);
  EXPECT_EQ(PipelineBubbleSlots(MoeOverlap::kDualPipe, 1, 1), 0);
  for (int p : {2, 4, 8, 16, 32})
    EXPECT_LE(PipelineBubbleSlots(MoeOverlap::kDualPipe, p, 1), PipelineBubbleSlots(MoeOverlap::kNone, p, 1));
}

TEST(MoeTime, TheDualPipeScheduleSetsThePairing) {
  Strategy dual;
  dual.pp = 16;
  dual.ep = 64;
  dual.pipeline_schedule = PipelineSchedule::kDualPipe;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kNone, dual), MoeOverlap::kDualPipe);
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, dual), MoeOverlap::kDualPipe);
  // PP16: 7 idle slots instead of 15; 120 micro-batches, 15 of them unpaired.
  EXPECT_DOUBLE_EQ(PipelineBubbleSlots(ScheduledOverlap(MoeOverlap::kNone, dual), 16, 1), 7);
  EXPECT_DOUBLE_EQ(PairedMicroBatchShare(ScheduledOverlap(MoeOverlap::kNone, dual), 120, 16), 105.0 / 120);
}

// Megatron-Core's combined 1F1B runs only with EP > 1, without a pipeline or with virtual stages, and without
// full recomputation; elsewhere the engine waits for its all-to-alls.
TEST(MoeTime, MegatronOverlapOnlyWhereMegatronCoreRunsIt) {
  Strategy s;
  s.ep = 8;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kA2aOverlap);
  s.pp = 4;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kNone);
  s.interleave = 2;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kA2aOverlap);
  s.recompute = Recompute::kFull;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kNone);
  s.recompute = Recompute::kSelective;
  s.ep = 1;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kNone);
}

// A job that turns the engine's overlap off (Megatron-Bridge's moe_a2a_overlap=False) pairs nothing where
// Megatron-Core could; DualPipe is the schedule itself and pairs whatever the engine's option.
TEST(MoeTime, TurningTheOverlapOffPairsNothing) {
  Strategy s;
  s.ep = 8;
  s.moe_a2a_overlap = false;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kNone);
  EXPECT_EQ(PairedMicroBatchShare(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), 64, 1), 0);
  s.pp = 4;
  s.pipeline_schedule = PipelineSchedule::kDualPipe;
  EXPECT_EQ(ScheduledOverlap(MoeOverlap::kA2aOverlap, s), MoeOverlap::kDualPipe);
}

TEST(MoeTime, RouterAndPermutationBytes) {
  EXPECT_DOUBLE_EQ(RouterBytesPerToken(256, 8, false), 256 * 10 + 8 * 12);
  EXPECT_DOUBLE_EQ(RouterBytesPerToken(256, 8, true), 256 * 14 + 8 * 4);
  EXPECT_DOUBLE_EQ(PermutationBytesPerCopy(7168 * 2), 4 * 7168 * 2);
}

// DeepSeek-V3 pre-training (arXiv 2412.19437, Table 1 and section 3): 2.664M H800 GPU-hours for 14.8T tokens on
// 2,048 H800 (8 per node, NVLink inside, one 400 Gb/s InfiniBand NIC per GPU), PP16, EP64 across 8 nodes, ZeRO-1
// data parallelism, FP8 GEMMs, sequence 4096 and a final batch of 15,360 sequences. 54.2 days on 2,048 GPUs.
nlohmann::json DeepSeekV3(const std::string& framework) {
  return {{"model", "deepseek-v3"},
          {"training", {{"method", "pretrain"}, {"precision", "fp8"}, {"framework", framework}, {"seq_len", 4096},
                        {"micro_batch", 1}, {"global_batch", 15360}, {"tokens", 14.8e12}}},
          {"hardware", {{"gpu", "h800-sxm"}, {"gpus", 2048}, {"gpus_per_node", 8},
                        {"links", {{"inter_node", "ib-ndr400"}}}}},
          {"strategy", {{"tp", 1}, {"pp", 16}, {"ep", 64}, {"zero", 1}, {"recompute", "none"}}}};
}

// Megatron-Core at DeepSeek-V3's published layout cannot pair micro-batches: PP 16 needs virtual stages for its
// combined 1F1B, and 61 layers admit none. Its all-to-alls show; DeepSeek's own DualPipe hides them but for the
// warm-up and cool-down micro-batches', which pair with nothing.
TEST(MoeTime, DeepSeekV3AsMegatronCannotHideItsAllToAlls) {
  nlohmann::json doc = DeepSeekV3("megatron");
  const Estimate megatron = EstimateScenario(ScenarioFromJson(doc, false));
  doc["strategy"]["pipeline_schedule"] = "dualpipe";
  const Estimate dual = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_GT(megatron.time[TimeTerm::kEpComm], 0.15 * megatron.time.step_s);
  EXPECT_LT(dual.time[TimeTerm::kEpComm], 0.08 * dual.time.step_s);
  EXPECT_GT(megatron.time.training_s, 1.2 * dual.time.training_s);
}

// As DeepSeek ran it: DualPipe and recomputation of the norms and MLA up-projections: 54 days against the
// report's 54.2 without its MTP module. Without the report's memory savers (bf16 moments, FP8 SwiGLU inputs) the
// busiest rank is still just over the H800's 80 GB.
TEST(MoeTime, DeepSeekV3AsPublishedOnDualPipe) {
  nlohmann::json doc = DeepSeekV3("megatron");
  doc["strategy"]["recompute"] = "selective";
  doc["strategy"]["pipeline_schedule"] = "dualpipe";
  const Estimate dual = EstimateScenario(ScenarioFromJson(doc, false));
  const double published_days = 2.664e6 / 2048 / 24;
  EXPECT_NEAR(dual.time.training_s / 86400, published_days, 0.30 * published_days);
  EXPECT_GT(dual.memory.per_gpu_bytes, 80 * kGiB);
}

// DeepSeek-V3's memory savers (section 3.2.3 and 3.3): bf16 AdamW moments, FP8 SwiGLU inputs; with them and its MTP
// module the published layout fits the H800's 80 GB (it ran). Each saver only lowers the peak; MTP only raises it
// and adds its own time term.
TEST(MoeTime, DeepSeekV3WithItsMemorySaversFitsOnH800) {
  nlohmann::json doc = DeepSeekV3("megatron");
  doc["strategy"]["recompute"] = "selective";
  doc["strategy"]["pipeline_schedule"] = "dualpipe";
  const Estimate plain = EstimateScenario(ScenarioFromJson(doc, false));
  doc["training"]["optimizer_state_dtype"] = "bf16";
  const Estimate bf16 = EstimateScenario(ScenarioFromJson(doc, false));
  const FrameworkProfile& megatron = GetFrameworkProfile(Framework::kMegatron);
  EXPECT_EQ(OptimizerStateBytesPerParam(Optimizer::kAdamW, Precision::kFp8, megatron, true), 4);
  EXPECT_EQ(OptimizerStateBytesPerParam(Optimizer::kAdamW, Precision::kFp8, megatron), 8);
  EXPECT_LT(bf16.memory[MemTerm::kOptimizerStates], plain.memory[MemTerm::kOptimizerStates]);
  EXPECT_LT(bf16.memory.per_gpu_bytes, plain.memory.per_gpu_bytes);
  doc["training"]["fp8_swiglu_input"] = true;
  const Estimate fp8 = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_LT(fp8.memory[MemTerm::kActivations], bf16.memory[MemTerm::kActivations]);
  EXPECT_EQ(fp8.time[TimeTerm::kMtp], 0);
  doc["training"]["mtp_layers"] = 1;
  const Estimate mtp = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_GT(mtp.memory.per_gpu_bytes, fp8.memory.per_gpu_bytes);
  EXPECT_GT(mtp.time[TimeTerm::kMtp], 0);
  EXPECT_TRUE(mtp.memory.fits);
  EXPECT_LT(mtp.memory.per_gpu_bytes, 80 * kGiB);
}

// The routed experts' optimizer states shard over their expert data-parallel ranks only: at EP 64 of DP 128 two
// replicas hold each expert, so the master copy is far more than DP 128's share of the whole stage.
TEST(MoeTime, ExpertStatesShardOverExpertDataParallelRanks) {
  nlohmann::json doc = DeepSeekV3("megatron");
  const Scenario sc = ScenarioFromJson(doc, false);
  EXPECT_EQ(ExpertDataParallel(sc.strategy), 2);
  const Estimate ep64 = EstimateScenario(sc);
  doc["strategy"]["ep"] = 8;
  const Estimate ep8 = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_GT(ep64.memory[MemTerm::kMasterWeights], 5 * ep8.memory[MemTerm::kMasterWeights] / 8);
}

// Expert-tensor parallelism: absent, it is tp (Megatron-Core); it must fit the expert grid and the expert width.
// Splitting experts over ETP lowers their weights per GPU and adds the expert-TP gather and reduce-scatter.
TEST(MoeTime, ExpertTensorParallelSplitsExpertsAndValidates) {
  nlohmann::json doc = DeepSeekV3("megatron");
  doc["strategy"]["tp"] = 2;
  doc["strategy"]["sequence_parallel"] = true;
  doc["strategy"]["ep"] = 8;
  EXPECT_EQ(ExpertTp(ScenarioFromJson(doc, false).strategy), 2);
  doc["strategy"]["etp"] = 1;
  const Estimate etp1 = EstimateScenario(ScenarioFromJson(doc, false));
  doc["strategy"]["etp"] = 2;
  const Estimate etp2 = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_LT(etp2.memory[MemTerm::kWeights], etp1.memory[MemTerm::kWeights]);
  EXPECT_GT(etp2.time[TimeTerm::kTpComm], etp1.time[TimeTerm::kTpComm]);
  doc["strategy"]["etp"] = 3;
  try {
    ScenarioFromJson(doc, false);
    FAIL() << "etp 3 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "strategy.etp");
  }
  doc["model"] = "llama-3-8b";
  doc["strategy"] = {{"tp", 2}, {"etp", 1}};
  doc["hardware"] = {{"gpu", "h100-sxm"}, {"gpus", 8}};
  EXPECT_THROW(ScenarioFromJson(doc, false), InputError);
}

// MTP trains a block like the last layer, a 2h x h projection and three norms: the checkpoint's MTP weights less its
// own copies of the embedding and head (DeepSeek-V3: 685B on Hugging Face = 671B + 14B).
TEST(MoeTime, MtpModuleIsTheCheckpointExtraLessItsEmbeddingAndHead) {
  const Scenario sc = ScenarioFromJson(DeepSeekV3("megatron"), false);
  const ModelSpec& m = sc.model;
  EXPECT_EQ(MtpModuleParams(m) + 2 * m.vocab_size * m.hidden_size, m.extra_checkpoint_params);
}

// Without a pipeline Megatron-Core pairs micro-batches (combined 1F1B); DeepSpeed waits for every all-to-all.
TEST(MoeTime, AnOverlappingEngineIsNeverSlowerThanThePlainOne) {
  nlohmann::json megatron = DeepSeekV3("megatron"), deepspeed = DeepSeekV3("deepspeed");
  for (nlohmann::json* doc : {&megatron, &deepspeed}) {
    (*doc)["strategy"]["pp"] = 1;
    (*doc)["training"]["global_batch"] = 16384;  // a multiple of the 2,048 data-parallel ranks
  }
  const Estimate overlapped = EstimateScenario(ScenarioFromJson(megatron, false));
  const Estimate plain = EstimateScenario(ScenarioFromJson(deepspeed, false));
  EXPECT_LT(overlapped.time[TimeTerm::kEpComm], plain.time[TimeTerm::kEpComm]);
  EXPECT_GT(plain.time[TimeTerm::kMoeRouter], 0);
  EXPECT_GT(plain.time[TimeTerm::kMoePermute], 0);
  EXPECT_GT(plain.time[TimeTerm::kMoeImbalance], 0);
}

// Selective recomputation of an MLA model replays the up-projections whose outputs it dropped (core/memory.cc):
// never free, never as dear as recomputing the whole forward; with flash attention a plain GQA model has
// nothing to replay.
TEST(MoeTime, SelectiveRecomputeOfMlaReplaysTheUpProjections) {
  nlohmann::json doc = DeepSeekV3("megatron");
  doc["strategy"]["recompute"] = "selective";
  const double selective = EstimateScenario(ScenarioFromJson(doc, false)).time[TimeTerm::kRecompute];
  doc["strategy"]["recompute"] = "full";
  const double full = EstimateScenario(ScenarioFromJson(doc, false)).time[TimeTerm::kRecompute];
  EXPECT_GT(selective, 0);
  EXPECT_LT(selective, 0.2 * full);
  doc["model"] = "llama-3-8b";
  doc["strategy"] = {{"recompute", "selective"}};
  doc["hardware"] = {{"gpu", "h800-sxm"}, {"gpus", 8}};
  EXPECT_EQ(EstimateScenario(ScenarioFromJson(doc, false)).time[TimeTerm::kRecompute], 0);
}

// A dropless Megatron-Core MoE layer waits in its forward for the token counts on the host, so its dispatch adds to
// the layer (moe_host_sync): the engine's figure per MoE layer of the busiest stage and micro-batch under 1F1B, where
// no micro-batch pairs with another; DualPipe pairs all but the pp - 1 warm-up and cool-down ones, whose waits alone
// show. Dense layers have no counts to wait for; an engine without the figure charges none.
TEST(MoeTime, HostSyncIsChargedPerUnpairedMoeLayer) {
  nlohmann::json doc = DeepSeekV3("megatron");
  const double per_layer = Efficiency().Engine(Framework::kMegatron).moe_sync_host_s_per_layer;
  ASSERT_GT(per_layer, 0);
  const Estimate plain = EstimateScenario(ScenarioFromJson(doc, false));
  // 120 micro-batches (15,360 sequences over 128 data-parallel ranks); the busiest stage holds 4 of 61 layers,
  // 58 of them MoE.
  EXPECT_NEAR(plain.time[TimeTerm::kMoeHostSync], 120 * 58.0 * 4 / 61 * per_layer, 1e-9);
  // The constant is fitted on two runs and measured rows spread widely around it: the estimate says so.
  const auto& reasons = plain.confidence.reasons;
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), ConfidenceReason::kMoeHostSync), reasons.end());
  EXPECT_LE(plain.confidence.level, ConfidenceLevel::kMedium);
  doc["strategy"]["pipeline_schedule"] = "dualpipe";
  const Estimate dual = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_NEAR(dual.time[TimeTerm::kMoeHostSync] / plain.time[TimeTerm::kMoeHostSync], 15.0 / 120, 1e-9);
  const Estimate deepspeed = EstimateScenario(ScenarioFromJson(DeepSeekV3("deepspeed"), false));
  EXPECT_EQ(deepspeed.time[TimeTerm::kMoeHostSync], 0);
  EXPECT_EQ(std::count(deepspeed.confidence.reasons.begin(), deepspeed.confidence.reasons.end(),
                       ConfidenceReason::kMoeHostSync),
            0);
  doc = DeepSeekV3("megatron");
  doc["model"] = "llama-3-8b";
  doc["strategy"] = {{"tp", 1}, {"pp", 16}};
  EXPECT_EQ(EstimateScenario(ScenarioFromJson(doc, false)).time[TimeTerm::kMoeHostSync], 0);
}

// Shared experts on their own stream (Megatron-Core moe_shared_expert_overlap) hide behind the dispatch, the combine
// and the two gradient all-to-alls. Across nodes each all-to-all outlasts the shared GEMM beside it, so the exposed
// all-to-all time falls by exactly the shared experts' GEMM time, which is what they add to the compute; nothing else
// changes. Without expert parallelism there is nothing to hide behind.
TEST(MoeTime, SharedExpertsHideBehindTheAllToAlls) {
  auto job = [](int shared, bool overlap, int ep) {
    nlohmann::json config = {
        {"model_type", "deepseek_v2"}, {"hidden_size", 2048},        {"intermediate_size", 10944},
        {"moe_intermediate_size", 1408}, {"num_hidden_layers", 27},   {"num_attention_heads", 16},
        {"num_key_value_heads", 16},    {"n_shared_experts", shared}, {"n_routed_experts", 64},
        {"num_experts_per_tok", 6},     {"first_k_dense_replace", 1}, {"moe_layer_freq", 1},
        {"q_lora_rank", nullptr},       {"kv_lora_rank", 512},        {"qk_nope_head_dim", 128},
        {"qk_rope_head_dim", 64},       {"v_head_dim", 128},          {"vocab_size", 102400},
        {"tie_word_embeddings", false}, {"max_position_embeddings", 163840}};
    nlohmann::json doc = {
        {"model", {{"config", config}, {"name", "deepseek-v2-lite-shared"}}},
        {"training", {{"method", "pretrain"}, {"framework", "megatron"}, {"seq_len", 4096}, {"micro_batch", 1},
                      {"global_batch", 64}}},
        {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 16}, {"gpus_per_node", 8}}},
        {"strategy", {{"ep", ep}, {"moe_a2a_overlap", false}, {"moe_shared_expert_overlap", overlap}}}};
    if (!overlap) doc["strategy"].erase("moe_shared_expert_overlap");
    return EstimateScenario(ScenarioFromJson(doc, false)).time;
  };
  const TimeEstimate plain = job(2, false, 16), hidden = job(2, true, 16), none = job(0, false, 16);
  const double shared_gemms = plain[TimeTerm::kCompute] - none[TimeTerm::kCompute];
  ASSERT_GT(shared_gemms, 0);
  ASSERT_GT(plain[TimeTerm::kEpComm], 2 * shared_gemms);
  EXPECT_NEAR(plain[TimeTerm::kEpComm] - hidden[TimeTerm::kEpComm], shared_gemms, 1e-9 * shared_gemms);
  EXPECT_NEAR(plain.step_s - hidden.step_s, shared_gemms, 1e-9 * shared_gemms);
  EXPECT_EQ(job(2, true, 1).step_s, job(2, false, 1).step_s);
}

// Megatron-Bridge 26.02's GPT-OSS 120B preset (EP 64, MBS 4, no pipeline, GBS 1280 over 64 GPUs).
nlohmann::json GptOss(const std::string& gpu, int gpus_per_node) {
  return {{"model", "gpt-oss-120b"},
          {"training", {{"method", "pretrain"}, {"precision", "bf16"}, {"framework", "megatron"}, {"seq_len", 4096},
                        {"micro_batch", 4}, {"global_batch", 1280}, {"tokens", 1e12}}},
          {"hardware", {{"gpu", gpu}, {"gpus", 64}, {"gpus_per_node", gpus_per_node}}},
          {"strategy", {{"tp", 1}, {"pp", 1}, {"ep", 64}, {"zero", 1}, {"recompute", "selective"}}}};
}

// Turning the engine's overlap off can only lengthen a step: the all-to-alls and the host synchronisation a paired
// micro-batch hid show in full, and nothing else changes.
TEST(MoeTime, OverlapOnlyLowersAStep) {
  nlohmann::json doc = GptOss("gb200", 72);
  const Estimate on = EstimateScenario(ScenarioFromJson(doc, false));
  doc["strategy"]["moe_a2a_overlap"] = false;
  const Estimate off = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_GT(off.time[TimeTerm::kEpComm], on.time[TimeTerm::kEpComm]);
  EXPECT_GT(off.time[TimeTerm::kMoeHostSync], on.time[TimeTerm::kMoeHostSync]);
  EXPECT_EQ(off.time[TimeTerm::kCompute], on.time[TimeTerm::kCompute]);
  EXPECT_GT(off.time.step_s, on.time.step_s);
}

// The same EP 64 plan on the same GPUs: inside one 72-GPU NVLink domain (GB200 NVL72) the all-to-alls stay on
// NVLink; split into 8-GPU nodes most copies cross each GPU's network link, never faster.
TEST(MoeTime, AllToAllAcrossNodesIsNeverFasterThanInsideAnNvlinkDomain) {
  for (const bool overlap : {true, false}) {
    nlohmann::json rack = GptOss("gb200", 72), nodes = GptOss("gb200", 8);
    rack["strategy"]["moe_a2a_overlap"] = nodes["strategy"]["moe_a2a_overlap"] = overlap;
    const Estimate in_rack = EstimateScenario(ScenarioFromJson(rack, false));
    const Estimate across = EstimateScenario(ScenarioFromJson(nodes, false));
    EXPECT_GT(across.time[TimeTerm::kEpComm], 4 * in_rack.time[TimeTerm::kEpComm]) << overlap;
    EXPECT_GE(across.time.step_s, in_rack.time.step_s) << overlap;
  }
}

// NCCL's all-to-all reaches 0.426 of NVLink 5's line rate where the ring collectives reach 0.822 (data/links.json
// all_to_all_efficiency); DeepEP and HybridEP run at the rings' rate, and a link with no all-to-all measurement
// (InfiniBand here) keeps its one efficiency whichever dispatcher runs.
TEST(MoeTime, NcclAllToAllRunsAtItsMeasuredShareOfTheLink) {
  const LinkSpec& nvlink = FindLink("nvlink5-nvswitch");
  EXPECT_DOUBLE_EQ(AllToAllLink(nvlink, MoeDispatcher::kAllToAll).efficiency, 0.426);
  EXPECT_DOUBLE_EQ(AllToAllLink(nvlink, MoeDispatcher::kFlex).efficiency, nvlink.efficiency);
  const LinkSpec& ib = FindLink("ib-ndr400");
  EXPECT_EQ(ib.all_to_all_efficiency, 0);
  EXPECT_DOUBLE_EQ(AllToAllLink(ib, MoeDispatcher::kAllToAll).efficiency, ib.efficiency);
}

// The same job on NCCL's all-to-all is never faster than on the flex kernels: inside an NVL72 rack the all-to-alls
// move at 0.426 instead of 0.822 of the line rate (their per-peer latency stays) and nothing else changes; across
// 8-GPU nodes the network sets the pace either way.
TEST(MoeTime, NcclAllToAllIsNeverFasterThanFlexKernels) {
  for (const int gpus_per_node : {72, 8}) {
    nlohmann::json doc = GptOss("gb200", gpus_per_node);
    doc["strategy"]["moe_a2a_overlap"] = false;
    doc["strategy"]["moe_dispatcher"] = "flex";
    const Estimate flex = EstimateScenario(ScenarioFromJson(doc, false));
    doc["strategy"]["moe_dispatcher"] = "alltoall";
    const Estimate nccl = EstimateScenario(ScenarioFromJson(doc, false));
    if (gpus_per_node == 72) {
      EXPECT_GT(nccl.time[TimeTerm::kEpComm], 1.2 * flex.time[TimeTerm::kEpComm]);
    } else {
      EXPECT_EQ(nccl.time[TimeTerm::kEpComm], flex.time[TimeTerm::kEpComm]);
    }
    EXPECT_EQ(nccl.time[TimeTerm::kCompute], flex.time[TimeTerm::kCompute]) << gpus_per_node;
    EXPECT_GE(nccl.time.step_s, flex.time.step_s) << gpus_per_node;
  }
  // Unset, a job runs NCCL's all-to-all (Megatron-Bridge's recipes set moe_token_dispatcher_type alltoall).
  EXPECT_EQ(ScenarioFromJson(GptOss("gb200", 72), false).strategy.moe_dispatcher, MoeDispatcher::kAllToAll);
}

// Expert inputs padded to a capacity have shapes known before routing: no host wait for the token counts, and
// every expert runs capacity x the mean rows whatever the routing (at 1.0, DeepSeek-V2's device-level budget, no
// busiest-rank excess; at 1.25, 0.25 x the experts' GEMMs against the dropless profile's 0.1).
TEST(MoeTime, CapacityPaddingWaitsForNoCountsAndRunsTheCapacity) {
  nlohmann::json doc = GptOss("b200", 8);
  doc["strategy"]["moe_a2a_overlap"] = false;
  const Estimate dropless = EstimateScenario(ScenarioFromJson(doc, false));
  doc["training"]["moe_capacity_factor"] = 1.0;
  const Estimate budget = EstimateScenario(ScenarioFromJson(doc, false));
  doc["training"]["moe_capacity_factor"] = 1.25;
  const Estimate padded = EstimateScenario(ScenarioFromJson(doc, false));
  EXPECT_GT(dropless.time[TimeTerm::kMoeHostSync], 0);
  EXPECT_EQ(budget.time[TimeTerm::kMoeHostSync], 0);
  EXPECT_EQ(budget.time[TimeTerm::kMoeImbalance], 0);
  const double excess = GetFrameworkProfile(Framework::kMegatron).moe_load_imbalance - 1;
  EXPECT_NEAR(padded.time[TimeTerm::kMoeImbalance] / dropless.time[TimeTerm::kMoeImbalance], 0.25 / excess, 1e-9);
  EXPECT_LT(budget.time.step_s, dropless.time.step_s);
}

TEST(MoeTime, CapacityFactorOutsideItsRangeIsRefused) {
  nlohmann::json doc = GptOss("b200", 8);
  for (const double bad : {-1.0, 65.0}) {
    doc["training"]["moe_capacity_factor"] = bad;
    try {
      (void)ScenarioFromJson(doc, false);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "training.moe_capacity_factor") << bad;
    }
  }
}

}  // namespace
}  // namespace trainplan
