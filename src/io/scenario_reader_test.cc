#include "core/scenario.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/framework.h"
#include "io/scenario_reader.h"
#include "support/temp_file.h"

namespace trainplan {
namespace {

using nlohmann::json;

/// Meta-Llama-3-8B's config.json (32 heads, 8 KV heads, 32 layers, SwiGLU 14336).
json Llama3_8bConfig() {
  return {{"model_type", "llama"},
          {"architectures", {"LlamaForCausalLM"}},
          {"hidden_size", 4096},
          {"intermediate_size", 14336},
          {"num_attention_heads", 32},
          {"num_key_value_heads", 8},
          {"num_hidden_layers", 32},
          {"vocab_size", 128256},
          {"max_position_embeddings", 8192},
          {"rms_norm_eps", 1e-5},
          {"hidden_act", "silu"},
          {"tie_word_embeddings", false}};
}

/// Mixtral-8x7B's config.json: 8 experts, top-2.
json MixtralConfig() {
  json c = Llama3_8bConfig();
  c["model_type"] = "mixtral";
  c["vocab_size"] = 32000;
  c["num_local_experts"] = 8;
  c["num_experts_per_tok"] = 2;
  return c;
}

json Doc(json strategy = json::object(), json hardware = {{"gpu", "h100-sxm"}, {"gpus", 8}},
         json training = json::object()) {
  // `{}` as an argument is JSON null: read it as an empty section.
  if (strategy.is_null()) strategy = json::object();
  if (training.is_null()) training = json::object();
  return {{"model", {{"config", Llama3_8bConfig()}, {"name", "llama-3-8b-test"}}},
          {"training", std::move(training)},
          {"hardware", std::move(hardware)},
          {"strategy", std::move(strategy)}};
}

/// The InputError a document raises, or a failure.
InputError ErrorOf(const json& doc) {
  try {
    ScenarioFromJson(doc, /*allow_paths=*/false);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << doc.dump();
  return InputError("", "", "");
}

TEST(ScenarioFromJson, ReadsAFullDocument) {
  json doc = Doc({{"tp", 2},
                  {"pp", 2},
                  {"cp", 1},
                  {"zero", 1},
                  {"recompute", "selective"},
                  {"sequence_parallel", true},
                  {"offload", "none"},
                  {"flash_attention", false},
                  {"interleave", 2},
                  {"tp_comm_overlap", false}},
                 {{"gpu", "NVIDIA H100 80GB HBM3"},
                  {"gpus", 16},
                  {"gpus_per_node", 8},
                  {"links", {{"intra_node", "nvlink"}, {"inter_node", "IB NDR"}}}},
                 {{"method", "Full"},
                  {"precision", "bfloat16"},
                  {"optimizer", "adamw_8bit"},
                  {"framework", "nemo"},
                  {"seq_len", 8192},
                  {"micro_batch", 2},
                  {"global_batch", 64},
                  {"tokens", 2e9}});
  doc["description"] = "two H100 nodes";
  const Scenario s = ScenarioFromJson(doc, false);
  EXPECT_EQ(s.model.name, "llama-3-8b-test");
  EXPECT_EQ(s.model.num_layers, 32);
  EXPECT_EQ(s.training.method, Method::kFull);
  EXPECT_EQ(s.training.precision, Precision::kBf16);
  EXPECT_EQ(s.training.optimizer, Optimizer::kAdamW8bit);
  EXPECT_EQ(s.training.framework, Framework::kMegatron);
  EXPECT_EQ(s.training.seq_len, 8192);
  EXPECT_EQ(s.training.micro_batch, 2);
  EXPECT_EQ(s.training.global_batch, 64);
  EXPECT_DOUBLE_EQ(s.training.tokens, 2e9);
  EXPECT_EQ(s.hardware.gpu.id, "h100-sxm");
  EXPECT_EQ(s.hardware.gpus, 16);
  EXPECT_EQ(s.hardware.nodes(), 2);
  EXPECT_EQ(s.hardware.intra_node.id, "nvlink4-nvswitch");
  EXPECT_EQ(s.hardware.inter_node.id, "ib-ndr400");
  EXPECT_EQ(s.strategy.tp, 2);
  EXPECT_EQ(s.strategy.pp, 2);
  EXPECT_EQ(s.strategy.dp, 4);  // 16 / (2 x 2 x 1)
  EXPECT_EQ(s.strategy.zero, 1);
  EXPECT_EQ(s.strategy.recompute, Recompute::kSelective);
  EXPECT_TRUE(s.strategy.sequence_parallel);
  EXPECT_FALSE(s.strategy.flash_attention);
  EXPECT_EQ(s.strategy.interleave, 2);
  EXPECT_FALSE(s.strategy.tp_comm_overlap);
  EXPECT_TRUE(ScenarioFromJson(Doc(), false).strategy.tp_comm_overlap);
  EXPECT_EQ(GlobalBatch(s), 64);
  EXPECT_EQ(GradAccumSteps(s), 8);  // 64 / (2 x 4)
}

TEST(ScenarioFromJson, FillsDefaults) {
  const Scenario s = ScenarioFromJson({{"model", {{"config", Llama3_8bConfig()}}}}, false);
  EXPECT_EQ(s.training.method, Method::kFull);
  EXPECT_EQ(s.training.precision, Precision::kBf16);
  EXPECT_EQ(s.training.optimizer, Optimizer::kAdamW);
  EXPECT_EQ(s.training.seq_len, 4096);
  EXPECT_EQ(s.hardware.gpu.id, "h100-sxm");
  EXPECT_EQ(s.hardware.gpus, 1);
  EXPECT_EQ(s.hardware.gpus_per_node, 1);
  EXPECT_EQ(s.hardware.intra_node.id, "nvlink4-nvswitch");
  EXPECT_EQ(s.hardware.inter_node.id, "ib-ndr400");
  EXPECT_EQ(s.strategy.dp, 1);
  EXPECT_EQ(s.training.framework, DefaultFramework(Method::kFull, 1, 1));
  // Recompute comes from the framework profile when the scenario does not say.
  EXPECT_EQ(s.strategy.recompute, GetFrameworkProfile(s.training.framework).default_recompute);
  // The one default global batch (DefaultGlobalBatch: 128 sequences for fine-tuning), as `plan` uses.
  EXPECT_EQ(GlobalBatch(s), 128);
  EXPECT_EQ(GradAccumSteps(s), 128);
}

TEST(ScenarioFromJson, DerivesDpAndGpus) {
  // dp from gpus.
  Scenario s = ScenarioFromJson(Doc({{"tp", 4}}, {{"gpus", 32}}), false);
  EXPECT_EQ(s.strategy.dp, 8);
  EXPECT_EQ(s.hardware.gpus_per_node, 8);  // min(gpus, 8)
  EXPECT_EQ(s.hardware.nodes(), 4);
  // gpus from the strategy.
  s = ScenarioFromJson(Doc({{"tp", 2}, {"pp", 2}, {"dp", 4}}, {{"gpu", "a100-80gb-sxm"}}), false);
  EXPECT_EQ(s.hardware.gpus, 16);
  EXPECT_EQ(s.hardware.gpus_per_node, 8);
  EXPECT_EQ(s.hardware.nodes(), 2);
  // The default global batch in whole steps of micro_batch x dp (4 x 4); accumulation from an explicit one.
  s = ScenarioFromJson(Doc({{"tp", 2}}, {{"gpus", 8}}, {{"micro_batch", 4}}), false);
  EXPECT_EQ(GlobalBatch(s), 128);
  EXPECT_EQ(GradAccumSteps(s), 8);
  s = ScenarioFromJson(Doc({{"tp", 2}}, {{"gpus", 8}}, {{"micro_batch", 48}}), false);
  EXPECT_EQ(GlobalBatch(s), 192);  // 128 rounded up to whole steps of 48 x 4
  s = ScenarioFromJson(Doc({{"tp", 2}}, {{"gpus", 8}}, {{"micro_batch", 4}, {"global_batch", 256}}), false);
  EXPECT_EQ(GradAccumSteps(s), 16);
}

TEST(ScenarioFromJson, TokensFromSamples) {
  const Scenario s = ScenarioFromJson(
      Doc({}, {{"gpus", 1}}, {{"samples", 500000}, {"mean_tokens_per_sample", 512}, {"epochs", 3}}), false);
  EXPECT_DOUBLE_EQ(s.training.tokens, 500000.0 * 512 * 3);
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 1}}, {{"samples", 1000}})).field(), "training.mean_tokens_per_sample");
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 1}}, {{"tokens", 1e9}, {"samples", 10}, {"mean_tokens_per_sample", 9}}))
                .field(),
            "training.tokens");
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 1}}, {{"tokens", 1e9}, {"epochs", 2}})).field(), "training.epochs");
}

TEST(ScenarioFromJson, ResolvesModelsByNameAndFile) {
  const Scenario named = ScenarioFromJson({{"model", "meta-llama/Meta-Llama-3-8B"}}, false);
  EXPECT_EQ(named.model.num_layers, 32);
  EXPECT_EQ(named.model.hidden_size, 4096);

  const std::string path = trainplan::test_support::TempPath("scenario_test_config.json");
  std::ofstream(path) << Llama3_8bConfig().dump();
  json doc = {{"model", {{"config_path", path}}}};
  EXPECT_EQ(ScenarioFromJson(doc, /*allow_paths=*/true).model.num_layers, 32);
  EXPECT_EQ(ErrorOf(doc).field(), "model.config_path");  // paths refused when not allowed
  std::ofstream(path) << "{\"model_type\": \"llama\", ";  // truncated
  try {
    ScenarioFromJson(doc, true);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model.config_path");
    EXPECT_NE(e.allowed().find("valid JSON"), std::string::npos);
  }
  std::remove(path.c_str());
  try {
    ScenarioFromJson(doc, true);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "model.config_path");
    EXPECT_EQ(e.value(), path);
  }
  EXPECT_EQ(ErrorOf({{"model", {{"config", Llama3_8bConfig()}, {"config_path", path}}}}).field(), "model");
  EXPECT_EQ(ErrorOf({{"training", json::object()}}).field(), "model");
  EXPECT_THROW(ScenarioFromJson({{"model", "llama-3-8"}}, false), InputError);
}

// DeepSeek-V3's options and the MTP depth: read as given, bad values named with what is allowed.
TEST(ScenarioFromJson, ReadsMoeTrainingOptions) {
  json doc = {{"model", "deepseek-v3"},
              {"training", {{"method", "pretrain"}, {"optimizer_state_dtype", "BF16"}, {"fp8_swiglu_input", true},
                            {"mtp_layers", 1}}},
              {"hardware", {{"gpus", 16}}},
              {"strategy", {{"pp", 16}}}};
  const Scenario s = ScenarioFromJson(doc, false);
  EXPECT_TRUE(s.training.bf16_optimizer_states);
  EXPECT_TRUE(s.training.fp8_swiglu_input);
  EXPECT_EQ(s.training.mtp_layers, 1);
  doc["training"]["optimizer_state_dtype"] = "fp8";
  EXPECT_EQ(ErrorOf(doc).field(), "training.optimizer_state_dtype");
  EXPECT_EQ(ErrorOf(doc).allowed(), "fp32 or bf16");
  doc["training"]["optimizer_state_dtype"] = "fp32";
  doc["training"]["mtp_layers"] = 17;
  EXPECT_EQ(ErrorOf(doc).field(), "training.mtp_layers");
  doc["training"]["mtp_layers"] = 1;
  doc["training"]["method"] = "lora";
  EXPECT_EQ(ErrorOf(doc).field(), "training.mtp_layers");
}

// The engine's release: kept as given, a malformed one named with what is allowed.
TEST(ScenarioFromJson, ReadsTheFrameworkRelease) {
  json doc = {{"model", "llama-3-8b"},
              {"training", {{"method", "pretrain"}, {"framework", "deepspeed"}, {"framework_version", "0.3.13"}}},
              {"hardware", {{"gpus", 8}}},
              {"strategy", {{"zero", 3}}}};
  EXPECT_EQ(ScenarioFromJson(doc, false).training.framework_version, "0.3.13");
  doc["training"]["framework_version"] = "v0.3";
  EXPECT_EQ(ErrorOf(doc).field(), "training.framework_version");
  EXPECT_EQ(ErrorOf(doc).value(), "v0.3");
  EXPECT_EQ(ErrorOf(doc).allowed(), "a release number of digits and dots, such as \"0.3.13\"");
  doc["training"]["framework_version"] = 3;
  EXPECT_EQ(ErrorOf(doc).field(), "training.framework_version");
}

TEST(ScenarioFromJson, UnknownKeysNameTheKeyAndWhatIsAllowed) {
  json doc = Doc();
  doc["strategy"]["tensor_parallel"] = 2;
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "strategy.tensor_parallel");
  EXPECT_NE(e.allowed().find("tp"), std::string::npos);
  doc = Doc();
  doc["trainig"] = json::object();
  EXPECT_EQ(ErrorOf(doc).field(), "trainig");
  doc = Doc();
  doc["training"]["lr"] = 1e-4;
  EXPECT_EQ(ErrorOf(doc).field(), "training.lr");
  doc = Doc();
  doc["hardware"]["links"] = {{"intra", "pcie4"}};
  EXPECT_EQ(ErrorOf(doc).field(), "hardware.links.intra");
  doc = Doc();
  doc["model"]["path"] = "x";
  EXPECT_EQ(ErrorOf(doc).field(), "model.path");
}

TEST(ScenarioFromJson, WrongTypesAndAbsurdValues) {
  struct Case {
    json doc;
    const char* field;
  };
  const Case cases[] = {
      {Doc({}, {{"gpus", "8"}}), "hardware.gpus"},
      {Doc({}, {{"gpus", -8}}), "hardware.gpus"},
      {Doc({}, {{"gpus", 2000000}}), "hardware.gpus"},
      {Doc({}, {{"gpus", 2.5}}), "hardware.gpus"},
      {Doc({}, {{"gpus", 12}, {"gpus_per_node", 8}}), "hardware.gpus"},
      {Doc({}, {{"gpus_per_node", 0}}), "hardware.gpus_per_node"},
      {Doc({}, {{"gpu", 4090}}), "hardware.gpu"},
      {Doc({{"tp", 0}}), "strategy.tp"},
      {Doc({{"tp", "2"}}), "strategy.tp"},
      {Doc({{"zero", 4}}), "strategy.zero"},
      {Doc({{"sequence_parallel", "yes"}}), "strategy.sequence_parallel"},
      {Doc({{"tp_comm_overlap", 1}}), "strategy.tp_comm_overlap"},
      {Doc({}, {{"gpus", 8}}, {{"seq_len", 20000000}}), "training.seq_len"},
      {Doc({}, {{"gpus", 8}}, {{"seq_len", -1}}), "training.seq_len"},
      {Doc({}, {{"gpus", 8}}, {{"micro_batch", 0}}), "training.micro_batch"},
      {Doc({}, {{"gpus", 8}}, {{"tokens", -5}}), "training.tokens"},
      {Doc({}, {{"gpus", 8}}, {{"tokens", 1e20}}), "training.tokens"},
      {Doc({}, {{"gpus", 8}}, {{"method", 3}}), "training.method"},
      {Doc({}, {{"gpus", 8}}, {{"lora_targets", "q_proj"}}), "training.lora_targets"},
      {Doc({}, {{"gpus", 8}}, {{"trainable_layers", 33}}), "training.trainable_layers"},
      {Doc({}, {{"gpus", 8}}, {{"lora_rank", 0}}), "training.lora_rank"},
      {json{{"model", {{"config", Llama3_8bConfig()}}}, {"training", "full"}}, "training"},
      {json::array(), "scenario"},
      {json{{"model", {{"config", Llama3_8bConfig()}}}, {"description", 7}}, "description"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.doc.dump());
    EXPECT_EQ(ErrorOf(c.doc).field(), c.field);
  }
}

TEST(ScenarioFromJson, EnumSpellingsAreForgiving) {
  EXPECT_EQ(ParseMethod("QLoRA"), Method::kQlora);
  EXPECT_EQ(ParseMethod("qlora"), Method::kQlora);
  EXPECT_EQ(ParseMethod("pre-training"), Method::kPretrain);
  EXPECT_EQ(ParseOptimizer("adamw_8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("adamw8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("8bit-adamw"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("paged_adamw_8bit"), Optimizer::kPagedAdamW8bit);
  EXPECT_EQ(ParseOptimizer("SGD"), Optimizer::kSgdMomentum);
  EXPECT_EQ(ParseOptimizer("Adafactor"), Optimizer::kAdafactor);
  EXPECT_EQ(ParsePrecision("BF16"), Precision::kBf16);
  EXPECT_EQ(ParsePrecision("fp16"), Precision::kFp16);
  EXPECT_EQ(ParsePrecision("fp32"), Precision::kFp32);
  EXPECT_EQ(ParsePrecision("FP8"), Precision::kFp8);
  EXPECT_EQ(ParseFramework("hf"), Framework::kHfTrainer);
  EXPECT_EQ(ParseFramework("hf-trainer"), Framework::kHfTrainer);
  EXPECT_EQ(ParseFramework("transformers"), Framework::kHfTrainer);
  EXPECT_EQ(ParseFramework("torchtune"), Framework::kTorchtune);
  EXPECT_EQ(ParseFramework("Unsloth"), Framework::kUnsloth);
  EXPECT_EQ(ParseFramework("DeepSpeed"), Framework::kDeepSpeed);
  EXPECT_EQ(ParseFramework("FSDP"), Framework::kFsdp);
  EXPECT_EQ(ParseFramework("megatron"), Framework::kMegatron);
  EXPECT_EQ(ParseFramework("Megatron-LM"), Framework::kMegatron);
  EXPECT_EQ(ParseFramework("nemo"), Framework::kMegatron);
  EXPECT_EQ(ParseRecompute("selective"), Recompute::kSelective);
  EXPECT_EQ(ParseOffload("optimizer+params"), Offload::kOptimizerAndParams);
  // Every name written round-trips through its parser.
  for (Method m : {Method::kPretrain, Method::kFull, Method::kFreeze, Method::kLora, Method::kQlora}) {
    EXPECT_EQ(ParseMethod(ToString(m)), m);
  }
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp32, Precision::kFp8}) {
    EXPECT_EQ(ParsePrecision(ToString(p)), p);
  }
  for (Optimizer o : {Optimizer::kAdamW, Optimizer::kAdamW8bit, Optimizer::kSgdMomentum, Optimizer::kAdafactor}) {
    EXPECT_EQ(ParseOptimizer(ToString(o)), o);
  }
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    EXPECT_EQ(ParseRecompute(ToString(r)), r);
  }
  for (Offload o : {Offload::kNone, Offload::kOptimizer, Offload::kOptimizerAndParams}) {
    EXPECT_EQ(ParseOffload(ToString(o)), o);
  }
  for (Framework f : {Framework::kHfTrainer, Framework::kTorchtune, Framework::kUnsloth, Framework::kDeepSpeed,
                      Framework::kFsdp, Framework::kMegatron}) {
    EXPECT_EQ(ParseFramework(ToString(f)), f);
  }
  try {
    ParseOptimizer("lion");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "training.optimizer");
    EXPECT_EQ(e.value(), "lion");
    EXPECT_EQ(e.allowed(), "one of: adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, adafactor");
  }
}

TEST(ValidateScenario, ParallelismMustFitTheModel) {
  // 32 heads, 8 KV heads, 32 layers.
  InputError e = ErrorOf(Doc({{"tp", 3}}, {{"gpus", 3}}));
  EXPECT_EQ(e.field(), "strategy.tp");
  EXPECT_EQ(e.value(), "3");
  EXPECT_NE(e.allowed().find("num_attention_heads (32)"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("invalid strategy.tp: '3'"), std::string::npos);
  // tp = 16 > 8 KV heads: allowed, each KV head replicated on 2 ranks.
  EXPECT_EQ(ScenarioFromJson(Doc({{"tp", 16}}, {{"gpus", 16}}), false).strategy.tp, 16);
  // gpus must equal tp x pp x dp x cp.
  e = ErrorOf(Doc({{"tp", 2}, {"dp", 3}}, {{"gpus", 8}}));
  EXPECT_EQ(e.field(), "hardware.gpus");
  EXPECT_NE(e.allowed().find("= 6"), std::string::npos);
  EXPECT_EQ(ErrorOf(Doc({{"tp", 4}, {"pp", 2}}, {{"gpus", 12}, {"gpus_per_node", 12}})).field(), "hardware.gpus");
  EXPECT_EQ(ErrorOf(Doc({{"pp", 64}}, {{"gpus", 64}})).field(), "strategy.pp");
  EXPECT_EQ(ErrorOf(Doc({{"interleave", 2}}, {{"gpus", 1}})).field(), "strategy.interleave");
  EXPECT_EQ(ErrorOf(Doc({{"pp", 4}, {"interleave", 3}}, {{"gpus", 4}})).field(), "strategy.interleave");
  EXPECT_EQ(ScenarioFromJson(Doc({{"pp", 4}, {"interleave", 4}}, {{"gpus", 4}}), false).strategy.interleave, 4);
  e = ErrorOf(Doc({{"ep", 1}, {"moe_dispatcher", "deepep"}}, {{"gpus", 1}}));
  EXPECT_EQ(e.field(), "strategy.moe_dispatcher");
  EXPECT_NE(e.allowed().find("alltoall, flex"), std::string::npos);
  EXPECT_EQ(ScenarioFromJson(Doc({{"moe_dispatcher", "flex"}}, {{"gpus", 1}}), false).strategy.moe_dispatcher,
            MoeDispatcher::kFlex);
  e = ErrorOf(Doc({{"cp_comm", "ring"}}, {{"gpus", 1}}));
  EXPECT_EQ(e.field(), "strategy.cp_comm");
  EXPECT_NE(e.allowed().find("p2p, all_gather, a2a"), std::string::npos);
  EXPECT_EQ(ScenarioFromJson(Doc({{"cp_comm", "all_gather"}}, {{"gpus", 1}}), false).strategy.cp_comm,
            CpComm::kAllGather);
  // DualPipe: a known name, an even pp, no interleave, an even number of at least 2 x pp micro-batches.
  e = ErrorOf(Doc({{"pp", 4}, {"pipeline_schedule", "gpipe"}}, {{"gpus", 4}}));
  EXPECT_EQ(e.field(), "strategy.pipeline_schedule");
  EXPECT_EQ(e.value(), "gpipe");
  EXPECT_NE(e.allowed().find("1f1b, dualpipe, zb1p"), std::string::npos);
  const json batch = {{"global_batch", 8}};
  EXPECT_EQ(ErrorOf(Doc({{"pp", 1}, {"pipeline_schedule", "dualpipe"}}, {{"gpus", 1}}, batch)).field(),
            "strategy.pipeline_schedule");
  EXPECT_EQ(ErrorOf(Doc({{"pp", 4}, {"interleave", 2}, {"pipeline_schedule", "dualpipe"}}, {{"gpus", 4}}, batch))
                .field(),
            "strategy.pipeline_schedule");
  e = ErrorOf(Doc({{"pp", 4}, {"pipeline_schedule", "dualpipe"}}, {{"gpus", 4}}, {{"global_batch", 6}}));
  EXPECT_EQ(e.field(), "strategy.pipeline_schedule");
  EXPECT_NE(e.allowed().find("at least 2 x pp (8)"), std::string::npos);
  EXPECT_EQ(ScenarioFromJson(Doc({{"pp", 4}, {"pipeline_schedule", "DualPipe"}}, {{"gpus", 4}}, batch), false)
                .strategy.pipeline_schedule,
            PipelineSchedule::kDualPipe);
  EXPECT_EQ(ScenarioFromJson(Doc({{"pp", 4}}, {{"gpus", 4}}), false).strategy.pipeline_schedule,
            PipelineSchedule::k1F1B);
  // ZB1P: whole stages, so a pipeline and no interleave.
  EXPECT_EQ(ScenarioFromJson(Doc({{"pp", 4}, {"pipeline_schedule", "zb1p"}}, {{"gpus", 4}}), false).strategy.pipeline_schedule,
            PipelineSchedule::kZeroBubble1P);
  e = ErrorOf(Doc({{"pp", 4}, {"interleave", 2}, {"pipeline_schedule", "zb1p"}}, {{"gpus", 4}}, batch));
  EXPECT_EQ(e.field(), "strategy.pipeline_schedule");
  EXPECT_EQ(e.allowed(), "1f1b, or zb1p with pp >= 2 and interleave 1 (pp is 4, interleave 2)");
  EXPECT_EQ(ErrorOf(Doc({{"pipeline_schedule", "zb1p"}}, {{"gpus", 1}})).field(), "strategy.pipeline_schedule");
  EXPECT_EQ(ErrorOf(Doc({{"ep", 2}}, {{"gpus", 2}})).field(), "strategy.ep");  // dense model
  EXPECT_EQ(ErrorOf(Doc({{"cp", 3}}, {{"gpus", 3}}, {{"seq_len", 4096}})).field(), "strategy.cp");
  EXPECT_EQ(ErrorOf(Doc({{"pp", 2}, {"zero", 3}}, {{"gpus", 8}})).field(), "strategy.zero");
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 8}}, {{"micro_batch", 2}, {"global_batch", 20}})).field(),
            "training.global_batch");
}

// Megatron-Core moves shared experts beside the dispatcher only where there are some, and not while its
// expert-parallel overlap pairs micro-batches.
TEST(ValidateScenario, SharedExpertOverlapNeedsSharedExpertsAndNoPairedOverlap) {
  json doc = Doc({{"ep", 8}, {"moe_shared_expert_overlap", true}}, {{"gpus", 8}}, {{"framework", "megatron"}});
  doc["model"] = {{"config", MixtralConfig()}, {"name", "mixtral-test"}};
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "strategy.moe_shared_expert_overlap");
  EXPECT_EQ(e.value(), "true");
  EXPECT_EQ(e.allowed(), "false for a model without shared experts (mixtral-test)");
  doc["model"] = "deepseek-v2-lite";
  e = ErrorOf(doc);  // pp 1 and EP 8: Megatron-Core's combined 1F1B runs
  EXPECT_EQ(e.field(), "strategy.moe_shared_expert_overlap");
  EXPECT_NE(e.allowed().find("strategy.moe_a2a_overlap false"), std::string::npos) << e.allowed();
  doc["strategy"]["moe_a2a_overlap"] = false;
  EXPECT_TRUE(ScenarioFromJson(doc, false).strategy.moe_shared_expert_overlap);
  doc["strategy"]["moe_shared_expert_overlap"] = "yes";
  EXPECT_EQ(ErrorOf(doc).field(), "strategy.moe_shared_expert_overlap");
}

// The engine's pipeline-send overlap is on unless a job turns it off.
TEST(ScenarioFromJson, PipelineSendOverlapSwitch) {
  EXPECT_TRUE(ScenarioFromJson(Doc({{"tp", 2}}, {{"gpus", 8}}), false).strategy.pp_comm_overlap);
  EXPECT_FALSE(ScenarioFromJson(Doc({{"tp", 2}, {"pp_comm_overlap", false}}, {{"gpus", 8}}), false).strategy.pp_comm_overlap);
  const InputError e = ErrorOf(Doc({{"pp_comm_overlap", "no"}}, {{"gpus", 8}}));
  EXPECT_EQ(e.field(), "strategy.pp_comm_overlap");
  EXPECT_EQ(e.allowed(), ErrorOf(Doc({{"tp_comm_overlap", "no"}}, {{"gpus", 8}})).allowed());
}

TEST(ValidateScenario, ExpertParallelismCarvedOutOfDataParallel) {
  json doc = Doc({{"ep", 8}}, {{"gpus", 8}});
  doc["model"] = {{"config", MixtralConfig()}};
  EXPECT_EQ(ScenarioFromJson(doc, false).strategy.ep, 8);
  doc["strategy"]["ep"] = 3;  // 8 experts
  EXPECT_EQ(ErrorOf(doc).field(), "strategy.ep");
  doc["strategy"] = {{"ep", 8}, {"tp", 2}};  // dp x cp = 4
  InputError e = ErrorOf(doc);
  EXPECT_EQ(e.field(), "strategy.ep");
  EXPECT_NE(e.allowed().find("dp x cp"), std::string::npos);
}

TEST(ValidateScenario, PrecisionMustExistOnTheGpu) {
  InputError e = ErrorOf(Doc({}, {{"gpu", "v100-32gb-sxm2"}, {"gpus", 1}}, {{"precision", "bf16"}}));
  EXPECT_EQ(e.field(), "training.precision");
  EXPECT_NE(e.allowed().find("no BF16"), std::string::npos);
  EXPECT_EQ(ScenarioFromJson(Doc({}, {{"gpu", "v100-32gb-sxm2"}, {"gpus", 1}}, {{"precision", "fp16"}}), false)
                .training.precision,
            Precision::kFp16);
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpu", "a100-80gb-sxm"}, {"gpus", 1}}, {{"precision", "fp8"}})).field(),
            "training.precision");
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 1}}, {{"method", "qlora"}, {"precision", "fp32"}})).field(),
            "training.precision");
}

TEST(ValidateScenario, SequenceParallelIsDroppedWithoutTensorParallel) {
  EXPECT_FALSE(ScenarioFromJson(Doc({{"sequence_parallel", true}}, {{"gpus", 8}}), false).strategy.sequence_parallel);
  EXPECT_TRUE(
      ScenarioFromJson(Doc({{"sequence_parallel", true}, {"tp", 8}}, {{"gpus", 8}}), false).strategy.sequence_parallel);
}

// DeepSpeed's reduce_bucket_size: a number of elements or "auto" (hidden_size^2), refused where the engine has
// no reduce bucket.
TEST(ScenarioFromJson, ReduceBucketElements) {
  const json ds = {{"framework", "deepspeed"}};
  const json one = {{"gpus", 1}};
  EXPECT_EQ(ScenarioFromJson(Doc({{"zero", 2}}, one, ds), false).strategy.reduce_bucket_elements, 0);
  EXPECT_EQ(ScenarioFromJson(Doc({{"zero", 2}, {"reduce_bucket_elements", 2e8}}, one, ds), false)
                .strategy.reduce_bucket_elements,
            2e8);
  EXPECT_EQ(ScenarioFromJson(Doc({{"zero", 3}, {"reduce_bucket_elements", "auto"}}, one, ds), false)
                .strategy.reduce_bucket_elements,
            kReduceBucketAuto);
  for (const json& bad : {json("big"), json(0), json(-1), json(2e12), json(true)}) {
    const InputError e = ErrorOf(Doc({{"zero", 2}, {"reduce_bucket_elements", bad}}, one, ds));
    EXPECT_EQ(e.field(), "strategy.reduce_bucket_elements") << bad;
    EXPECT_NE(e.allowed().find("\"auto\" or a number of elements in [1, 1e+12]"), std::string::npos) << bad;
  }
  const InputError e = ErrorOf(Doc({{"zero", 3}, {"reduce_bucket_elements", 2e8}}, one, {{"framework", "fsdp"}}));
  EXPECT_EQ(e.field(), "strategy.reduce_bucket_elements");
  EXPECT_NE(e.allowed().find("PyTorch FSDP keeps no gradient reduce bucket"), std::string::npos);
}

TEST(ScenarioFromJson, HeadroomAndHostRam) {
  const Scenario defaults = ScenarioFromJson(Doc(), false);
  EXPECT_DOUBLE_EQ(defaults.hardware.usable_memory_fraction, DefaultUsableMemoryFraction());
  EXPECT_DOUBLE_EQ(DefaultUsableMemoryFraction(), 0.93);
  EXPECT_NE(UsableMemorySource().find("2026-12-01"), std::string::npos);
  EXPECT_EQ(defaults.hardware.host_ram_bytes, 0);
  const Scenario s = ScenarioFromJson(
      Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"usable_memory_fraction", 0.9}, {"host_ram_gb", 512}}), false);
  EXPECT_DOUBLE_EQ(s.hardware.usable_memory_fraction, 0.9);
  EXPECT_DOUBLE_EQ(s.hardware.host_ram_bytes, 512e9);

  InputError e = ErrorOf(Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"usable_memory_fraction", 0.4}}));
  EXPECT_EQ(e.field(), "hardware.usable_memory_fraction");
  EXPECT_EQ(e.allowed(), "a number from 0.5 to 1");
  e = ErrorOf(Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"usable_memory_fraction", 1.2}}));
  EXPECT_EQ(e.field(), "hardware.usable_memory_fraction");
  e = ErrorOf(Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"host_ram_gb", 0}}));
  EXPECT_EQ(e.field(), "hardware.host_ram_gb");
  e = ErrorOf(Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"host_ram_gb", "lots"}}));
  EXPECT_EQ(e.field(), "hardware.host_ram_gb");

  // The validator holds a scenario built in code to the same bounds.
  Scenario built = s;
  built.hardware.usable_memory_fraction = 0.3;
  try {
    ValidateScenario(built);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& err) {
    EXPECT_EQ(err.field(), "hardware.usable_memory_fraction");
    EXPECT_EQ(err.allowed(), "a number from 0.5 to 1");
  }
}

TEST(ScenarioFromJson, LinksAndLoraTargets) {
  // "nvlink" on a card without it is an error naming the card.
  InputError e = ErrorOf(Doc({}, {{"gpu", "RTX 4090"}, {"gpus", 2}, {"links", {{"intra_node", "nvlink"}}}}));
  EXPECT_EQ(e.field(), "hardware.links.intra_node");
  EXPECT_NE(e.allowed().find("no NVLink"), std::string::npos);
  Scenario s = ScenarioFromJson(Doc({}, {{"gpu", "rtx-3090"}, {"gpus", 2}, {"links", {{"intra_node", "nvlink"}}}}), false);
  EXPECT_EQ(s.hardware.intra_node.id, "nvlink-bridge-ga102");
  s = ScenarioFromJson(Doc({}, {{"gpu", "rtx-4090"}, {"gpus", 2}}), false);
  EXPECT_EQ(s.hardware.intra_node.id, "pcie4-nop2p");
  s = ScenarioFromJson(Doc({}, {{"gpu", "h100-sxm"}, {"gpus", 8}, {"links", {{"intra_node", "pcie"}}}}), false);
  EXPECT_EQ(s.hardware.intra_node.id, "pcie5");
  s = ScenarioFromJson(Doc({}, {{"gpu", "rtx-3090"}, {"gpus", 2}, {"links", {{"intra_node", "PCIe"}}}}), false);
  EXPECT_EQ(s.hardware.intra_node.id, "pcie4-nop2p");
  EXPECT_EQ(ErrorOf(Doc({}, {{"gpus", 8}, {"links", {{"inter_node", "ib-ndr40"}}}})).field(),
            "hardware.links.inter_node");
  e = ErrorOf(Doc({}, {{"gpu", "h1OO"}}));
  EXPECT_EQ(e.field(), "hardware.gpu");
  EXPECT_NE(e.allowed().find("h100-sxm"), std::string::npos);

  s = ScenarioFromJson(Doc({}, {{"gpus", 1}}, {{"method", "lora"}, {"lora_targets", {"q_proj", "v_proj"}}}), false);
  EXPECT_EQ(s.training.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
  s = ScenarioFromJson(Doc({}, {{"gpus", 1}}, {{"method", "lora"}, {"lora_targets", {"all-linear"}}}), false);
  EXPECT_TRUE(s.training.lora_targets.empty());
  e = ErrorOf(Doc({}, {{"gpus", 1}}, {{"method", "lora"}, {"lora_targets", {"query_key_value"}}}));
  EXPECT_EQ(e.field(), "training.lora_targets[0]");
  EXPECT_NE(e.allowed().find("q_proj"), std::string::npos);
}

}  // namespace
}  // namespace trainplan
