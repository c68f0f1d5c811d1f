#include "machine/launch.h"

#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/writers.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

/// What `trainplan estimate --json` writes for a scenario document.
json EstimateDoc(const json& scenario_doc) {
  const Scenario s = ScenarioFromJson(scenario_doc, false);
  return EstimateToJson(s, EstimateScenario(s));
}

/// What `trainplan plan --json` writes for a job on `gpus` GPUs of one type.
json PlanDoc(const std::string& model, const std::string& method, const std::string& gpu, int gpus,
             const std::string& framework = "") {
  json doc = {{"model", model}, {"training", {{"method", method}}}, {"hardware", {{"gpu", gpu}, {"gpus", 1}}}};
  PlanConstraints c;
  c.gpu_types = {gpu};
  c.gpus = gpus;
  c.objective = Objective::kTime;
  c.top = 1;
  if (!framework.empty()) {
    doc["training"]["framework"] = framework;
    c.framework_fixed = true;
  }
  const Scenario job = ScenarioFromJson(doc, false);
  return PlanResultToJson(job, SearchPlans(job, c, 2));
}

/// Key paths of a block-style YAML document ("spec.pytorchReplicaSpecs.Master.replicas" -> "1"), read from
/// the indentation; list items ("- name: x") open a level. Enough to check the structure of what
/// RenderLaunch writes, which uses no flow mappings or multi-line scalars.
std::multimap<std::string, std::string> YamlPaths(const std::string& text) {
  std::multimap<std::string, std::string> out;
  std::vector<std::pair<size_t, std::string>> stack;  // indentation, key
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#') continue;
    std::string body = line.substr(indent);
    if (body.rfind("- ", 0) == 0) {
      body = body.substr(2);
      indent += 2;
    }
    while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
    const size_t colon = body.find(':');
    if (colon == std::string::npos) {
      std::string path;
      for (const auto& [i, k] : stack) path += (path.empty() ? "" : ".") + k;
      out.emplace(path, body);
      continue;
    }
    const std::string key = body.substr(0, colon);
    const std::string value = colon + 1 < body.size() ? body.substr(colon + 2) : "";
    std::string path;
    for (const auto& [i, k] : stack) path += path.empty() ? k : "." + k;
    path += (path.empty() ? "" : ".") + key;
    out.emplace(path, value);
    stack.emplace_back(indent, key);
  }
  return out;
}

std::string One(const std::multimap<std::string, std::string>& yaml, const std::string& path) {
  EXPECT_EQ(yaml.count(path), 1u) << path;
  const auto it = yaml.find(path);
  return it == yaml.end() ? "" : it->second;
}

const json kMegatron16 = {{"model", "llama-3-8b"},
                          {"training",
                           {{"method", "pretrain"},
                            {"framework", "megatron"},
                            {"seq_len", 8192},
                            {"micro_batch", 1},
                            {"global_batch", 64}}},
                          {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 16}, {"gpus_per_node", 8}}},
                          {"strategy",
                           {{"tp", 2},
                            {"pp", 2},
                            {"interleave", 2},
                            {"sequence_parallel", true},
                            {"recompute", "full"}}}};

TEST(Launch, ReadsTheFirstPlanOfAPlanFile) {
  const LaunchPlan p = LaunchPlanFromJson(PlanDoc("llama-3-8b", "full", "h100-sxm", 8), "plan.json");
  EXPECT_EQ(p.model, "llama-3-8b");
  EXPECT_EQ(p.gpus, 8);
  EXPECT_EQ(p.gpu_id, "h100-sxm");
  EXPECT_EQ(p.strategy.tp * p.strategy.pp * p.strategy.cp * p.strategy.dp, 8);
  EXPECT_EQ(p.global_batch, p.micro_batch * p.grad_accum_steps * p.strategy.dp);
}

TEST(Launch, BadPlanFilesNameTheField) {
  auto field_of = [](nlohmann::json doc) {
    try {
      LaunchPlanFromJson(doc, "plan.json");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  nlohmann::json doc = PlanDoc("llama-3-8b", "full", "h100-sxm", 8);
  nlohmann::json bad = doc;
  bad["plans"][0]["strategy"]["tp"] = "x";
  EXPECT_EQ(field_of(bad), "plan.json: plans[0].strategy.tp");
  bad = doc;
  bad["plans"][0]["training"].erase("seq_len");
  EXPECT_EQ(field_of(bad), "plan.json: plans[0].training.seq_len");
  bad = doc;
  bad["plans"][0]["strategy"]["zero"] = 4;
  EXPECT_EQ(field_of(bad), "plan.json: plans[0].strategy.zero");
  EXPECT_EQ(field_of(nlohmann::json::array()), "plan.json");
}

TEST(Launch, JobDocumentPlansTheSameJobAgain) {
  const LaunchPlan p = LaunchPlanFromJson(PlanDoc("llama-3-8b", "lora", "h100-sxm", 2), "plan.json");
  json doc = JobDocument(p);
  EXPECT_FALSE(doc.contains("strategy"));
  doc["hardware"] = {{"gpu", "rtx-4090"}, {"gpus", 1}};
  const Scenario again = ScenarioFromJson(doc, false);
  EXPECT_EQ(again.model.num_layers, 32);
  EXPECT_EQ(again.training.method, Method::kLora);
  EXPECT_EQ(again.training.lora_rank, p.lora_rank);
  EXPECT_EQ(again.training.seq_len, p.seq_len);
  EXPECT_EQ(again.training.framework, p.framework);
}

TEST(Launch, DeepSpeedConfigFromAPlan) {
  const LaunchPlan p = LaunchPlanFromJson(PlanDoc("llama-3-8b", "full", "h100-sxm", 8, "deepspeed"), "plan.json");
  const json ds = json::parse(RenderLaunch(p, LaunchFormat::kDeepSpeed, {}));
  EXPECT_EQ(ds["zero_optimization"]["stage"].get<int>(), p.strategy.zero);
  EXPECT_EQ(ds["train_micro_batch_size_per_gpu"].get<int64_t>(), p.micro_batch);
  EXPECT_EQ(ds["gradient_accumulation_steps"].get<int64_t>(), p.grad_accum_steps);
  // DeepSpeed refuses a config unless train_batch_size = micro * accumulation * data-parallel world size.
  EXPECT_EQ(ds["train_batch_size"].get<int64_t>(), p.micro_batch * p.grad_accum_steps * p.strategy.dp);
  EXPECT_TRUE(ds["bf16"]["enabled"].get<bool>());
  EXPECT_FALSE(ds["fp16"]["enabled"].get<bool>());
  // The reduce bucket the estimate counted: DeepSpeed's default unless the job named one.
  EXPECT_FALSE(ds["zero_optimization"].contains("reduce_bucket_size"));
  for (const json& bucket : {json(2e8), json("auto")}) {
    json job = {{"model", "llama-3-8b"},
                {"training", {{"method", "full"}, {"framework", "deepspeed"}}},
                {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
                {"strategy", {{"zero", 2}, {"reduce_bucket_elements", bucket}}}};
    const json written = DeepSpeedConfig(LaunchPlanFromJson(EstimateDoc(job), "estimate.json"));
    EXPECT_EQ(written["zero_optimization"]["reduce_bucket_size"], bucket.is_string() ? bucket : json(200000000));
  }
}

TEST(Launch, DeepSpeedOffloadAndFp16) {
  json doc = {{"model", "llama-3-8b"},
              {"training", {{"method", "full"}, {"framework", "deepspeed"}, {"precision", "fp16"}, {"global_batch", 32}}},
              {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 4}}},
              {"strategy", {{"zero", 3}, {"offload", "optimizer+params"}, {"recompute", "full"}}}};
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(doc), "estimate.json");
  const json ds = DeepSpeedConfig(p);
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_EQ(ds["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_EQ(ds["zero_optimization"]["offload_param"]["device"], "cpu");
  EXPECT_TRUE(ds["fp16"]["enabled"].get<bool>());
  EXPECT_EQ(ds["fp16"]["loss_scale"], 0);
  EXPECT_EQ(ds["train_batch_size"], 32);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 8);  // 32 / (1 x 4)
  EXPECT_EQ(ds["optimizer"]["type"], "AdamW");      // ZeRO-Offload runs DeepSpeed's CPU Adam
  const auto yaml = YamlPaths(RenderLaunch(p, LaunchFormat::kAccelerate, {}));
  EXPECT_EQ(One(yaml, "distributed_type"), "DEEPSPEED");
  EXPECT_EQ(One(yaml, "deepspeed_config.zero_stage"), "3");
  EXPECT_EQ(One(yaml, "deepspeed_config.offload_param_device"), "cpu");
  EXPECT_EQ(One(yaml, "deepspeed_config.gradient_accumulation_steps"), "8");
  EXPECT_EQ(One(yaml, "mixed_precision"), "fp16");
  EXPECT_EQ(One(yaml, "num_processes"), "4");
  EXPECT_EQ(One(yaml, "num_machines"), "1");
  const std::string torchrun = RenderLaunch(p, LaunchFormat::kTorchrun, {});
  EXPECT_NE(torchrun.find("torchrun --nnodes=1 --nproc_per_node=4"), std::string::npos) << torchrun;
  EXPECT_NE(torchrun.find("--deepspeed ds_config.json"), std::string::npos);
  EXPECT_NE(torchrun.find("--gradient_checkpointing"), std::string::npos);
  EXPECT_NE(torchrun.find("--fp16"), std::string::npos);
}

TEST(Launch, MegatronTpOverlapOnlyWhereTheEstimateAssumedIt) {
  json job = kMegatron16;
  job["strategy"]["tp_comm_overlap"] = false;
  const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(job), "estimate.json"));
  EXPECT_EQ(std::find(args.begin(), args.end(), "--tp-comm-overlap"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--sequence-parallel"), args.end());
}

// Megatron-Core pairs micro-batches to hide the expert all-to-alls with virtual stages under a pipeline and
// without full recomputation: the arguments ask for it exactly where the estimate assumed it.
TEST(Launch, MegatronExpertOverlapWhereTheEstimateAssumedIt) {
  json job = kMegatron16;
  job["model"] = "mixtral-8x7b";
  job["strategy"]["ep"] = 2;
  job["strategy"]["recompute"] = "selective";
  auto has_overlap = [](const json& j) {
    const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(j), "estimate.json"));
    return std::find(args.begin(), args.end(), "--overlap-moe-expert-parallel-comm") != args.end();
  };
  EXPECT_TRUE(has_overlap(job));
  job["strategy"]["moe_a2a_overlap"] = false;  // the estimate charged the all-to-alls in full
  EXPECT_FALSE(has_overlap(job));
  job["strategy"].erase("moe_a2a_overlap");
  job["strategy"]["recompute"] = "full";
  EXPECT_FALSE(has_overlap(job));
  job["strategy"]["recompute"] = "selective";
  job["strategy"]["interleave"] = 1;
  EXPECT_FALSE(has_overlap(job));
  job["strategy"]["pipeline_schedule"] = "dualpipe";
  EXPECT_THROW(MegatronArguments(LaunchPlanFromJson(EstimateDoc(job), "estimate.json")), InputError);
  job["strategy"]["pipeline_schedule"] = "zb1p";  // Megatron-LM has no zero-bubble schedule either
  try {
    MegatronArguments(LaunchPlanFromJson(EstimateDoc(job), "estimate.json"));
    ADD_FAILURE() << "zb1p launched";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "strategy.pipeline_schedule");
    EXPECT_EQ(e.value(), "zb1p");
  }
}

// Megatron-LM overlaps the interleaved schedule's pipeline sends unless told not to: a plan timed with them in line
// says so.
TEST(Launch, MegatronPipelineSendOverlapWhereTheEstimateAssumedIt) {
  json job = kMegatron16;
  auto has_flag = [](const json& j) {
    const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(j), "estimate.json"));
    return std::find(args.begin(), args.end(), "--no-overlap-p2p-communication") != args.end();
  };
  job["strategy"]["pp"] = 4;
  job["strategy"]["tp"] = 1;
  EXPECT_FALSE(has_flag(job));  // interleave 2, overlapped
  job["strategy"]["pp_comm_overlap"] = false;
  EXPECT_TRUE(has_flag(job));
  job["strategy"]["interleave"] = 1;  // no virtual stages: Megatron-LM sends in line anyway
  EXPECT_FALSE(has_flag(job));
  // Megatron-LM asserts more than two stages for the interleaved schedule without overlapped sends.
  job["strategy"]["interleave"] = 2;
  job["strategy"]["pp"] = 2;
  job["strategy"]["tp"] = 2;
  try {
    has_flag(job);
    ADD_FAILURE() << "launched";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "strategy.pp_comm_overlap");
    EXPECT_NE(e.allowed().find("more than 2 pipeline stages"), std::string::npos) << e.allowed();
  }
}

// Megatron-LM's dispatcher defaults to allgather, which no estimate assumes: a MoE plan names the one it was timed
// with, and the shared experts' overlap where the estimate hid the all-to-alls behind them.
TEST(Launch, MegatronNamesTheDispatcherAndSharedExpertOverlapTheEstimateAssumed) {
  json job = kMegatron16;
  job["model"] = "deepseek-v2-lite";
  job["strategy"] = {{"tp", 1}, {"pp", 2}, {"ep", 8}, {"recompute", "selective"}, {"moe_a2a_overlap", false}};
  auto value_of = [](const json& j, const std::string& flag) {
    const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(j), "estimate.json"));
    const auto at = std::find(args.begin(), args.end(), flag);
    if (at == args.end()) return std::string("(absent)");
    return at + 1 == args.end() || at[1].starts_with("--") ? std::string("(flag)") : at[1];
  };
  EXPECT_EQ(value_of(job, "--moe-token-dispatcher-type"), "alltoall");
  EXPECT_EQ(value_of(job, "--moe-shared-expert-overlap"), "(absent)");
  // DeepSeek-V2-Lite's config.json: first_k_dense_replace 1 of 27 layers, intermediate_size 10944,
  // moe_intermediate_size 1408, n_shared_experts 2.
  EXPECT_EQ(value_of(job, "--moe-layer-freq"), "[0]*1+[1]*26");
  EXPECT_EQ(value_of(job, "--ffn-hidden-size"), "10944");
  EXPECT_EQ(value_of(job, "--moe-ffn-hidden-size"), "1408");
  EXPECT_EQ(value_of(job, "--moe-shared-expert-intermediate-size"), "2816");
  EXPECT_EQ(value_of(job, "--num-experts"), "64");
  // Its attention: kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, no q_lora_rank.
  EXPECT_EQ(value_of(job, "--multi-latent-attention"), "(flag)");
  EXPECT_EQ(value_of(job, "--kv-lora-rank"), "512");
  EXPECT_EQ(value_of(job, "--qk-head-dim"), "128");
  EXPECT_EQ(value_of(job, "--qk-pos-emb-head-dim"), "64");
  EXPECT_EQ(value_of(job, "--v-head-dim"), "128");
  EXPECT_EQ(value_of(job, "--q-lora-rank"), "(absent)");
  job["model"] = "deepseek-v3";  // q_lora_rank 1536
  job["strategy"] = {{"tp", 1}, {"pp", 1}, {"ep", 16}, {"moe_a2a_overlap", false}};
  EXPECT_EQ(value_of(job, "--q-lora-rank"), "1536");
  EXPECT_EQ(value_of(job, "--moe-router-num-groups"), "8");  // n_group 8, topk_group 4
  EXPECT_EQ(value_of(job, "--moe-router-group-topk"), "4");
  EXPECT_EQ(value_of(job, "--moe-layer-freq"), "[0]*3+[1]*58");
  job["strategy"]["moe_dispatcher"] = "flex";
  job["strategy"]["moe_shared_expert_overlap"] = true;
  EXPECT_EQ(value_of(job, "--moe-token-dispatcher-type"), "flex");
  EXPECT_EQ(value_of(job, "--moe-shared-expert-overlap"), "(flag)");
  job["model"] = "llama-3-8b";  // dense: no dispatcher to name
  job["strategy"] = {{"tp", 2}, {"pp", 2}};
  EXPECT_EQ(value_of(job, "--moe-token-dispatcher-type"), "(absent)");
}

// Expert-tensor parallelism, MTP and DeepSeek-V3's memory savers reach Megatron-LM as its own flags; ETP only where
// it differs from Megatron-Core's default (tp).
TEST(Launch, MegatronExpertTensorParallelMtpAndStateDtypes) {
  json job = kMegatron16;
  job["model"] = "mixtral-8x7b";
  job["strategy"]["ep"] = 2;
  auto args_of = [](const json& j) { return MegatronArguments(LaunchPlanFromJson(EstimateDoc(j), "estimate.json")); };
  auto value = [](const std::vector<std::string>& args, const std::string& flag) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) return args[i + 1];
    return std::string("(absent)");
  };
  EXPECT_EQ(value(args_of(job), "--expert-tensor-parallel-size"), "(absent)");
  EXPECT_EQ(value(args_of(job), "--mtp-num-layers"), "(absent)");
  job["strategy"]["etp"] = 1;
  job["training"]["mtp_layers"] = 1;
  job["training"]["optimizer_state_dtype"] = "bf16";
  job["training"]["fp8_swiglu_input"] = true;
  const std::vector<std::string> args = args_of(job);
  EXPECT_EQ(value(args, "--expert-tensor-parallel-size"), "1");
  EXPECT_EQ(value(args, "--mtp-num-layers"), "1");
  EXPECT_EQ(value(args, "--exp-avg-dtype"), "bf16");
  EXPECT_EQ(value(args, "--exp-avg-sq-dtype"), "bf16");
  EXPECT_NE(std::find(args.begin(), args.end(), "--use-precision-aware-optimizer"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--activation-func-fp8-input-store"), args.end());
}

// Megatron-Bridge 25.09's DeepSeek-V3 preset on 1,024 H100: 61 layers over pp 8 x 4 virtual stages, 7 and 6 on
// the ends, which only Megatron-Core's --pipeline-model-parallel-layout states (the preset's "Et|(tt|)*30mL").
TEST(Launch, MegatronLayoutForSplitsTheVirtualStagesCannotShareEvenly) {
  const json job = {{"model", "deepseek-v3"},
                    {"training",
                     {{"method", "pretrain"}, {"framework", "megatron"}, {"precision", "fp8"}, {"seq_len", 4096},
                      {"micro_batch", 1}, {"global_batch", 8192}, {"mtp_layers", 1}}},
                    {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1024}}},
                    {"strategy",
                     {{"tp", 2}, {"pp", 8}, {"ep", 64}, {"etp", 1}, {"interleave", 4}, {"zero", 1},
                      {"sequence_parallel", true}, {"recompute", "selective"}}}};
  const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(job), "estimate.json"));
  const auto flag = std::find(args.begin(), args.end(), "--pipeline-model-parallel-layout");
  ASSERT_NE(flag, args.end());
  const std::string layout = *std::next(flag);
  EXPECT_EQ(std::count(layout.begin(), layout.end(), '|'), 31);
  EXPECT_EQ(std::count(layout.begin(), layout.end(), 't'), 61);
  EXPECT_EQ(layout.substr(0, 4), "Ett|");          // rank 0, chunk 0: the embedding and 2 of its 7 layers
  EXPECT_EQ(layout.substr(layout.size() - 4), "|tmL");  // rank 7, chunk 3: 1 of its 6 layers, MTP and the loss
  EXPECT_EQ(std::find(args.begin(), args.end(), "--decoder-first-pipeline-num-layers"), args.end());
  EXPECT_EQ(std::find(args.begin(), args.end(), "--num-virtual-stages-per-pipeline-rank"), args.end());
}

TEST(Launch, MegatronArgumentsCarryEveryParallelSize) {
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(kMegatron16), "estimate.json");
  const std::vector<std::string> args = MegatronArguments(p);
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) return args[i + 1];
    return std::string("(absent)");
  };
  auto has = [&](const std::string& flag) { return std::find(args.begin(), args.end(), flag) != args.end(); };
  EXPECT_EQ(value("--tensor-model-parallel-size"), "2");
  EXPECT_EQ(value("--pipeline-model-parallel-size"), "2");
  EXPECT_EQ(value("--context-parallel-size"), "1");
  EXPECT_EQ(std::stoi(value("--tensor-model-parallel-size")) * std::stoi(value("--pipeline-model-parallel-size")) *
                std::stoi(value("--context-parallel-size")) * p.strategy.dp,
            16);
  EXPECT_EQ(value("--num-layers"), "32");
  EXPECT_EQ(value("--num-layers-per-virtual-pipeline-stage"), "8");  // 32 layers / (pp 2 x 2 virtual stages)
  EXPECT_EQ(value("--hidden-size"), "4096");
  EXPECT_EQ(value("--ffn-hidden-size"), "14336");
  EXPECT_EQ(value("--num-attention-heads"), "32");
  EXPECT_EQ(value("--num-query-groups"), "8");
  EXPECT_TRUE(has("--group-query-attention"));
  EXPECT_TRUE(has("--sequence-parallel"));
  EXPECT_TRUE(has("--tp-comm-overlap"));  // the estimate hid the TP collectives behind the GEMMs
  EXPECT_TRUE(has("--use-distributed-optimizer"));
  EXPECT_EQ(value("--recompute-granularity"), "full");
  EXPECT_EQ(value("--recompute-method"), "uniform");
  EXPECT_EQ(value("--micro-batch-size"), "1");
  EXPECT_EQ(value("--global-batch-size"), "64");
  EXPECT_EQ(value("--seq-length"), "8192");
  EXPECT_TRUE(has("--bf16"));
  EXPECT_FALSE(has("--expert-model-parallel-size"));
  const std::string script = RenderLaunch(p, LaunchFormat::kMegatron, {});
  EXPECT_NE(script.find("MEGATRON_ARGS=("), std::string::npos);
  EXPECT_NE(script.find("  --tensor-model-parallel-size 2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("torchrun --nnodes=2 --nproc_per_node=8"), std::string::npos);
  EXPECT_NE(script.find("pretrain_gpt.py \"${MEGATRON_ARGS[@]}\""), std::string::npos);
}

TEST(Launch, MegatronAsksForBlockingContextParallelOnlyWhenPlanned) {
  auto cp_comm_type = [](const json& strategy) {
    json doc = kMegatron16;
    doc["strategy"].update(strategy);
    const std::vector<std::string> args = MegatronArguments(LaunchPlanFromJson(EstimateDoc(doc), "estimate.json"));
    const auto at = std::find(args.begin(), args.end(), "--cp-comm-type");
    return at == args.end() ? std::string("(absent)") : *(at + 1);
  };
  EXPECT_EQ(cp_comm_type({{"pp", 1}, {"interleave", 1}, {"cp", 4}, {"cp_comm", "all_gather"}}), "all_gather");
  EXPECT_EQ(cp_comm_type({{"pp", 1}, {"interleave", 1}, {"cp", 4}, {"cp_comm", "a2a"}}), "a2a");
  EXPECT_EQ(cp_comm_type({{"pp", 1}, {"interleave", 1}, {"cp", 4}}), "(absent)");  // Megatron-LM's default, p2p
  EXPECT_EQ(cp_comm_type({{"cp_comm", "all_gather"}}), "(absent)");                 // cp 1: nothing to move
}

TEST(Launch, MegatronPlanFromTheSearch) {
  const LaunchPlan p =
      LaunchPlanFromJson(PlanDoc("llama-3-70b", "pretrain", "h100-sxm", 64, "megatron"), "plan.json");
  EXPECT_EQ(p.nodes, 8);
  const std::vector<std::string> args = MegatronArguments(p);
  int product = p.strategy.dp;
  for (const char* flag : {"--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size"})
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) product *= std::stoi(args[i + 1]);
  EXPECT_EQ(product, 64);
}

TEST(Launch, SlurmScriptForMultiNode) {
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(kMegatron16), "estimate.json");
  LaunchOptions o;
  o.job_name = "llama8b";
  const std::string s = RenderLaunch(p, LaunchFormat::kSlurm, o);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(s.find("#SBATCH --job-name=llama8b\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --nodes=2\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --ntasks-per-node=1\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --gpus-per-node=8\n"), std::string::npos);
  EXPECT_NE(s.find("srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8"), std::string::npos) << s;
  EXPECT_NE(s.find("--rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT"), std::string::npos);
  EXPECT_NE(s.find("pretrain_gpt.py"), std::string::npos);
  EXPECT_NE(s.find("--tensor-model-parallel-size 2"), std::string::npos);
}

TEST(Launch, KubernetesPyTorchJob) {
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(kMegatron16), "estimate.json");
  const auto yaml = YamlPaths(RenderLaunch(p, LaunchFormat::kK8s, {}));
  EXPECT_EQ(One(yaml, "apiVersion"), "kubeflow.org/v1");
  EXPECT_EQ(One(yaml, "kind"), "PyTorchJob");
  EXPECT_EQ(One(yaml, "metadata.name"), "trainplan");
  const std::string master = "spec.pytorchReplicaSpecs.Master.";
  const std::string worker = "spec.pytorchReplicaSpecs.Worker.";
  EXPECT_EQ(One(yaml, master + "replicas"), "1");
  EXPECT_EQ(One(yaml, worker + "replicas"), "1");  // 2 nodes: the master and one worker
  EXPECT_EQ(One(yaml, master + "restartPolicy"), "OnFailure");
  // The training operator requires the container to be named "pytorch".
  EXPECT_EQ(One(yaml, master + "template.spec.containers.name"), "pytorch");
  EXPECT_EQ(One(yaml, master + "template.spec.containers.resources.limits.nvidia.com/gpu"), "8");
  EXPECT_EQ(One(yaml, worker + "template.spec.containers.resources.limits.nvidia.com/gpu"), "8");
  EXPECT_EQ(One(yaml, master + "template.spec.volumes.emptyDir.medium"), "Memory");
  // The command runs under bash -c, as the one item of args, with the operator's rank and master address.
  bool found = false;
  for (const auto& [path, value] : yaml)
    if (path == master + "template.spec.containers.args" &&
        value.find("torchrun --nnodes=2 --nproc_per_node=8 --node_rank=${RANK}") != std::string::npos)
      found = true;
  EXPECT_TRUE(found);
}

TEST(Launch, SingleNodeKubernetesJobHasNoWorkers) {
  const LaunchPlan p = LaunchPlanFromJson(PlanDoc("llama-3-8b", "lora", "h100-sxm", 1), "plan.json");
  const auto yaml = YamlPaths(RenderLaunch(p, LaunchFormat::kK8s, {}));
  EXPECT_EQ(yaml.count("spec.pytorchReplicaSpecs.Worker.replicas"), 0u);
  EXPECT_EQ(One(yaml, "spec.pytorchReplicaSpecs.Master.template.spec.containers.resources.limits.nvidia.com/gpu"), "1");
}

TEST(Launch, FsdpAndTorchtuneCommands) {
  json fsdp = {{"model", "llama-3-8b"},
               {"training", {{"method", "full"}, {"framework", "fsdp"}}},
               {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
               {"strategy", {{"zero", 3}, {"recompute", "full"}}}};
  LaunchPlan p = LaunchPlanFromJson(EstimateDoc(fsdp), "estimate.json");
  EXPECT_NE(RenderLaunch(p, LaunchFormat::kTorchrun, {}).find("--fsdp 'full_shard auto_wrap'"), std::string::npos);
  const auto yaml = YamlPaths(RenderLaunch(p, LaunchFormat::kAccelerate, {}));
  EXPECT_EQ(One(yaml, "distributed_type"), "FSDP");
  EXPECT_EQ(One(yaml, "fsdp_config.fsdp_sharding_strategy"), "FULL_SHARD");
  EXPECT_EQ(One(yaml, "fsdp_config.fsdp_activation_checkpointing"), "true");
  json tune = {{"model", "llama-3-8b"},
               {"training", {{"method", "lora"}, {"framework", "torchtune"}}},
               {"hardware", {{"gpu", "rtx-4090"}, {"gpus", 2}}},
               {"strategy", {{"recompute", "full"}}}};
  p = LaunchPlanFromJson(EstimateDoc(tune), "estimate.json");
  const std::string cmd = RenderLaunch(p, LaunchFormat::kTorchrun, {});
  EXPECT_NE(cmd.find("tune run --nnodes=1 --nproc_per_node=2"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("lora_finetune_distributed"), std::string::npos);
  EXPECT_NE(cmd.find("enable_activation_checkpointing=True"), std::string::npos);
}

TEST(Launch, PlansThatDoNotAddUpAreBadInput) {
  json doc = EstimateDoc(kMegatron16);
  json bad = doc;
  bad["strategy"]["dp"] = 3;  // 2 x 2 x 1 x 3 = 12 on 16 GPUs
  EXPECT_THROW(LaunchPlanFromJson(bad, "plan.json"), InputError);
  bad = doc;
  bad["strategy"]["global_batch"] = 65;
  EXPECT_THROW(LaunchPlanFromJson(bad, "plan.json"), InputError);
  bad = doc;
  bad["strategy"]["ep"] = 3;
  EXPECT_THROW(LaunchPlanFromJson(bad, "plan.json"), InputError);
  bad = doc;
  bad.erase("strategy");
  EXPECT_THROW(LaunchPlanFromJson(bad, "plan.json"), InputError);
  EXPECT_THROW(LaunchPlanFromJson(json{{"feasible", false}, {"plans", json::array()}, {"reason", "does not fit"}},
                                  "plan.json"),
               InputError);
  EXPECT_THROW(LaunchPlanFromJson(json::array(), "plan.json"), InputError);
  // A tensor-parallel plan has no DeepSpeed-only form, and ZeRO-3 has no Megatron form.
  const LaunchPlan megatron = LaunchPlanFromJson(doc, "plan.json");
  EXPECT_THROW(RenderLaunch(megatron, LaunchFormat::kDeepSpeed, {}), InputError);
  json zero3 = {{"model", "llama-3-8b"},
                {"training", {{"method", "full"}, {"framework", "deepspeed"}}},
                {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
                {"strategy", {{"zero", 3}}}};
  EXPECT_THROW(RenderLaunch(LaunchPlanFromJson(EstimateDoc(zero3), "e"), LaunchFormat::kMegatron, {}), InputError);
  EXPECT_THROW(ParseLaunchFormat("docker"), InputError);
}

/// The value after `flag` in an argument list, or "(absent)".
std::string ValueOf(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "(absent)";
}

json LitGptJob(const std::string& method, const std::string& gpu, int gpus) {
  return {{"model", "llama-3-8b"},
          {"training", {{"method", method}, {"framework", "litgpt"}, {"global_batch", 16}, {"seq_len", 2048}}},
          {"hardware", {{"gpu", gpu}, {"gpus", gpus}, {"gpus_per_node", 8}}}};
}

TEST(Launch, LitGptFullFineTuneRunsTheLitGptCli) {
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(LitGptJob("full", "h100-sxm", 16)), "estimate.json");
  const std::vector<std::string> cmd = EngineCommand(p, {});
  ASSERT_GE(cmd.size(), 3u);
  EXPECT_EQ(cmd[0], "litgpt");
  EXPECT_EQ(cmd[1], "finetune_full");
  EXPECT_EQ(cmd[2], "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(ValueOf(cmd, "--devices"), "8");
  EXPECT_EQ(ValueOf(cmd, "--num_nodes"), "2");
  EXPECT_EQ(ValueOf(cmd, "--precision"), "bf16-true");
  EXPECT_EQ(ValueOf(cmd, "--train.micro_batch_size"), std::to_string(p.micro_batch));
  EXPECT_EQ(ValueOf(cmd, "--train.global_batch_size"), "16");
  EXPECT_EQ(ValueOf(cmd, "--train.max_seq_length"), "2048");
  EXPECT_EQ(ValueOf(cmd, "--quantize"), "(absent)");
  EXPECT_EQ(ValueOf(cmd, "--lora_r"), "(absent)");
  // No Hugging Face Trainer flags and no torchrun: Fabric spawns the processes.
  const std::string script = RenderLaunch(p, LaunchFormat::kTorchrun, {});
  EXPECT_EQ(script.find("torchrun"), std::string::npos) << script;
  EXPECT_EQ(script.find("--per_device_train_batch_size"), std::string::npos) << script;
  EXPECT_NE(script.find("MASTER_ADDR=${MASTER_ADDR:?set to the first node} MASTER_PORT=29500 "
                        "NODE_RANK=${NODE_RANK:?0 on the first node, 1 on the last} \\\n  litgpt finetune_full"),
            std::string::npos)
      << script;
  const std::string slurm = RenderLaunch(p, LaunchFormat::kSlurm, {});
  EXPECT_NE(slurm.find("#SBATCH --ntasks-per-node=8\n"), std::string::npos) << slurm;
  EXPECT_NE(slurm.find("srun litgpt finetune_full meta-llama/Meta-Llama-3-8B \\\n  --devices 8"), std::string::npos) << slurm;
  const auto yaml = YamlPaths(RenderLaunch(p, LaunchFormat::kK8s, {}));
  // Each pod is one node: Fabric takes its rank from the operator's RANK and the master from MASTER_ADDR/PORT.
  int commands = 0;
  for (const auto& [path, value] : yaml)
    if (path.ends_with("template.spec.containers.args") &&
        value.rfind("\"NODE_RANK=${RANK} litgpt finetune_full meta-llama/Meta-Llama-3-8B --devices 8 --num_nodes 2", 0) == 0)
      ++commands;
  EXPECT_EQ(commands, 2);  // the master's and the worker's
  EXPECT_THROW(RenderLaunch(p, LaunchFormat::kAccelerate, {}), InputError);
  EXPECT_THROW(RenderLaunch(p, LaunchFormat::kDeepSpeed, {}), InputError);
}

TEST(Launch, LitGptLoraAndQloraCommands) {
  LaunchPlan p = LaunchPlanFromJson(EstimateDoc(LitGptJob("lora", "h100-sxm", 2)), "estimate.json");
  std::vector<std::string> cmd = EngineCommand(p, {});
  EXPECT_EQ(cmd[1], "finetune_lora");
  EXPECT_EQ(ValueOf(cmd, "--lora_r"), std::to_string(p.lora_rank));
  EXPECT_GT(p.lora_rank, 0);
  EXPECT_EQ(ValueOf(cmd, "--devices"), "2");
  EXPECT_EQ(ValueOf(cmd, "--num_nodes"), "1");
  EXPECT_EQ(ValueOf(cmd, "--quantize"), "(absent)");
  const std::string script = RenderLaunch(p, LaunchFormat::kTorchrun, {});
  EXPECT_NE(script.find("set -euo pipefail\nlitgpt finetune_lora meta-llama/Meta-Llama-3-8B \\\n  --devices 2"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("NODE_RANK"), std::string::npos);  // one node: nothing to set
  p = LaunchPlanFromJson(EstimateDoc(LitGptJob("qlora", "rtx-4090", 1)), "estimate.json");
  cmd = EngineCommand(p, {});
  EXPECT_EQ(cmd[1], "finetune_lora");
  EXPECT_EQ(ValueOf(cmd, "--quantize"), "bnb.nf4");
  EXPECT_EQ(ValueOf(cmd, "--precision"), "bf16-true");
  EXPECT_EQ(ValueOf(cmd, "--optimizer"), "(absent)");  // QLoRA runs bitsandbytes PagedAdamW whatever is asked
  // litgpt refuses --quantize on more than one device, and has no fp8, offload or freeze fine-tuning.
  LaunchPlan bad = p;
  bad.gpus = 2;
  bad.strategy.dp = 2;
  EXPECT_THROW(EngineCommand(bad, {}), InputError);
  bad = p;
  bad.precision = Precision::kFp8;
  EXPECT_THROW(EngineCommand(bad, {}), InputError);
  bad = p;
  bad.method = Method::kFull;
  bad.strategy.offload = Offload::kOptimizer;
  EXPECT_THROW(EngineCommand(bad, {}), InputError);
  bad = p;
  bad.method = Method::kFreeze;
  EXPECT_THROW(EngineCommand(bad, {}), InputError);
  bad = p;
  bad.method = Method::kFull;
  bad.optimizer = Optimizer::kAdamW8bit;
  EXPECT_EQ(ValueOf(EngineCommand(bad, {}), "--optimizer"), "bitsandbytes.optim.AdamW8bit");
}

json TorchtitanJob(int global_batch) {
  return {{"model", "llama-3-8b"},
          {"training", {{"method", "pretrain"}, {"framework", "torchtitan"}, {"seq_len", 8192}, {"micro_batch", 1},
                        {"global_batch", global_batch}}},
          {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 16}, {"gpus_per_node", 8}}},
          {"strategy", {{"tp", 2}, {"zero", 3}, {"recompute", "full"}}}};
}

// torchtitan's train.py takes its parallel sizes and checkpointing mode as overrides of the TOML config.
TEST(Launch, TorchtitanRunsTrainPyWithConfigOverrides) {
  const LaunchPlan p = LaunchPlanFromJson(EstimateDoc(TorchtitanJob(8)), "estimate.json");
  const std::vector<std::string> cmd = EngineCommand(p, {});
  ASSERT_FALSE(cmd.empty());
  EXPECT_EQ(cmd[0], "train.py");
  EXPECT_EQ(ValueOf(cmd, "--job.config_file"), "CONFIG.toml");
  EXPECT_EQ(ValueOf(cmd, "--training.batch_size"), "1");
  EXPECT_EQ(ValueOf(cmd, "--training.seq_len"), "8192");
  EXPECT_EQ(ValueOf(cmd, "--training.data_parallel_degree"), "8");
  EXPECT_EQ(ValueOf(cmd, "--training.tensor_parallel_degree"), "2");
  EXPECT_EQ(ValueOf(cmd, "--training.pipeline_parallel_degree"), "1");
  EXPECT_EQ(ValueOf(cmd, "--activation_checkpoint.mode"), "full");
  const std::string script = RenderLaunch(p, LaunchFormat::kTorchrun, {});
  EXPECT_NE(script.find("torchrun --nnodes=2 --nproc_per_node=8"), std::string::npos) << script;
  // It has no gradient accumulation: a global batch above micro-batch x dp cannot be launched.
  const LaunchPlan accumulating = LaunchPlanFromJson(EstimateDoc(TorchtitanJob(32)), "estimate.json");
  EXPECT_THROW(EngineCommand(accumulating, {}), InputError);
}

TEST(Launch, DataAndKernelOptionsReachTheEngineFlags) {
  json job = {{"model", "llama-3-8b"},
              {"training",
               {{"method", "lora"},
                {"framework", "hf"},
                {"optimizer", "paged_adamw_8bit"},
                {"group_by_length", true},
                {"liger", true},
                {"compile", true},
                {"dataloader_workers", 4},
                {"sample_mean_tokens", 400},
                {"sample_max_tokens", 2048}}},
              {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  const LaunchPlan hf = LaunchPlanFromJson(EstimateDoc(job), "estimate.json");
  EXPECT_TRUE(hf.group_by_length && hf.liger && hf.compile);
  const std::vector<std::string> cmd = EngineCommand(hf, {});
  auto has = [&](const std::string& flag) { return std::find(cmd.begin(), cmd.end(), flag) != cmd.end(); };
  EXPECT_TRUE(has("--group_by_length"));
  EXPECT_TRUE(has("--use_liger_kernel"));
  EXPECT_TRUE(has("--torch_compile"));
  EXPECT_EQ(ValueOf(cmd, "--dataloader_num_workers"), "4");
  EXPECT_EQ(ValueOf(cmd, "--optim"), "paged_adamw_8bit");
  // Off, and a document written before these keys existed: no flags.
  json plain = EstimateDoc({{"model", "llama-3-8b"},
                            {"training", {{"method", "lora"}, {"framework", "hf"}}},
                            {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}});
  for (const char* key : {"group_by_length", "liger", "compile", "dataloader_workers"}) plain["training"].erase(key);
  const std::vector<std::string> bare = EngineCommand(LaunchPlanFromJson(plain, "old.json"), {});
  for (const char* flag : {"--group_by_length", "--use_liger_kernel", "--torch_compile", "--dataloader_num_workers"})
    EXPECT_EQ(std::find(bare.begin(), bare.end(), flag), bare.end()) << flag;
  // torchtune's recipes take compile=True; LitGPT's scripts have neither Liger nor compile.
  job["training"]["framework"] = "torchtune";
  job["training"]["optimizer"] = "adamw";
  job["training"].erase("group_by_length");
  const std::vector<std::string> tune = EngineCommand(LaunchPlanFromJson(EstimateDoc(job), "e"), {});
  EXPECT_EQ(tune.back(), "compile=True");
  LaunchPlan litgpt = LaunchPlanFromJson(EstimateDoc(LitGptJob("lora", "h100-sxm", 1)), "e");
  litgpt.liger = true;
  EXPECT_THROW(EngineCommand(litgpt, {}), InputError);
}

// Evaluation reaches the engine as the estimate timed it: Megatron-LM's eval-iters global batches every
// eval-interval steps (3,200 sequences in global batches of 64: 50), and --eval-iters 0 without it, since releases whose
// --eval-interval defaulted to 1000 would otherwise evaluate; the HF Trainer's eval_strategy "steps". The recipe
// engines take it in configs launch does not write: refused, naming the field. The job document keeps it.
TEST(Launch, EvaluationReachesTheEngineAsTimed) {
  json job = kMegatron16;
  EXPECT_EQ(ValueOf(MegatronArguments(LaunchPlanFromJson(EstimateDoc(job), "e")), "--eval-iters"), "0");
  job["training"]["eval_interval_steps"] = 1000;
  job["training"]["eval_sequences"] = 3200;
  const LaunchPlan megatron = LaunchPlanFromJson(EstimateDoc(job), "e");
  const std::vector<std::string> args = MegatronArguments(megatron);
  EXPECT_EQ(ValueOf(args, "--eval-interval"), "1000");
  EXPECT_EQ(ValueOf(args, "--eval-iters"), "50");
  EXPECT_EQ(JobDocument(megatron)["training"]["eval_sequences"], 3200);
  json hf = {{"model", "llama-3-8b"},
             {"training", {{"method", "lora"}, {"framework", "hf"}, {"eval_interval_steps", 200}, {"eval_sequences", 500}}},
             {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 1}}}};
  const std::vector<std::string> cmd = EngineCommand(LaunchPlanFromJson(EstimateDoc(hf), "e"), {});
  EXPECT_EQ(ValueOf(cmd, "--eval_strategy"), "steps");
  EXPECT_EQ(ValueOf(cmd, "--eval_steps"), "200");
  hf["training"]["framework"] = "torchtune";
  try {
    EngineCommand(LaunchPlanFromJson(EstimateDoc(hf), "e"), {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.eval_interval_steps");
    EXPECT_EQ(e.value(), "200");
  }
}

}  // namespace
}  // namespace trainplan
