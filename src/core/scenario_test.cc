// ValidateScenario's checks, one case each: the field, the value and what is allowed.
#include "core/scenario.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "io/scenario_reader.h"

namespace trainplan {
namespace {

using nlohmann::json;

struct Case {
  const char* name;
  json training, hardware, strategy;
  std::string field, value, allowed;
};

/// Llama 3 8B (32 heads, 8 KV heads, 32 layers) on 8 H100s, with the case's sections over these.
json Doc(const Case& c) {
  json doc = {{"model", "llama-3-8b"},
              {"training", {{"tokens", 1e9}}},
              {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}},
              {"strategy", json::object()}};
  // `{}` in a case is JSON null: nothing over the defaults.
  auto over = [](json& section, const json& given) {
    if (given.is_object()) section.update(given);
  };
  over(doc["training"], c.training);
  over(doc["hardware"], c.hardware);
  over(doc["strategy"], c.strategy);
  return doc;
}

TEST(ValidateScenario, EachCheckNamesFieldValueAndAllowed) {
  const std::vector<Case> cases = {
      {"gpus across nodes", {}, {{"gpus", 12}, {"gpus_per_node", 8}}, {},
       "hardware.gpus", "12", "a multiple of hardware.gpus_per_node (8) when the job spans nodes"},
      {"gpus not tp x pp x cp", {}, {}, {{"tp", 3}},
       "hardware.gpus", "8", "a multiple of tp x pp x cp = 3 x 1 x 1 = 3"},
      {"gpus not tp x pp x dp x cp", {}, {}, {{"tp", 2}, {"dp", 2}},
       "hardware.gpus", "8", "tp x pp x dp x cp = 2 x 1 x 2 x 1 = 4"},
      {"tp and heads", {}, {{"gpus", 6}}, {{"tp", 3}},
       "strategy.tp", "3", "must divide num_attention_heads (32)"},
      {"pp beyond layers", {}, {{"gpus", 64}, {"gpus_per_node", 8}}, {{"pp", 64}},
       "strategy.pp", "64", "at most num_hidden_layers (32)"},
      {"interleave without pp", {}, {}, {{"interleave", 2}},
       "strategy.interleave", "2", "1 unless pipeline parallel (pp > 1)"},
      {"interleave and layers", {}, {}, {{"pp", 2}, {"interleave", 3}},
       "strategy.interleave", "3",
       "a split of num_hidden_layers (32) into pp (2) stages of interleave (3) virtual stages: ceil(layers / pp) "
       "layers on the busiest stage, a multiple of interleave, and at least one layer on the first and on the "
       "last stage"},
      {"ep on a dense model", {}, {}, {{"ep", 2}},
       "strategy.ep", "2", "1 for a dense model (no experts)"},
      {"cp and seq_len", {{"seq_len", 2050}}, {}, {{"cp", 2}},
       "strategy.cp", "2", "2 x cp must divide seq_len (2050)"},
      {"a2a cp and heads", {}, {{"gpus", 32}}, {{"tp", 2}, {"cp", 16}, {"cp_comm", "a2a"}},
       "strategy.cp_comm", "a2a", "p2p or all_gather; a2a needs cp (16) to divide the heads of each TP rank (16 query, 4 key/value)"},
      {"sequence parallel and seq_len", {{"seq_len", 2050}}, {}, {{"tp", 4}, {"sequence_parallel", true}},
       "strategy.sequence_parallel", "true", "tp (4) must divide seq_len (2050)"},
      {"zero with pp", {}, {}, {{"pp", 2}, {"zero", 2}},
       "strategy.zero", "2", "0 or 1 with pipeline parallelism (pp > 1); 2 or 3 with framework fsdp or torchtitan"},
      {"global batch", {{"global_batch", 12}, {"micro_batch", 1}}, {}, {},
       "training.global_batch", "12", "a multiple of micro_batch x dp = 1 x 8 = 8"},
      {"bf16 on a V100", {{"precision", "bf16"}}, {{"gpu", "v100-sxm2-32gb"}}, {},
       "training.precision", "bf16", "NVIDIA Tesla V100 SXM2 32GB has no BF16; use fp16 or fp32"},
      {"fp8 on an A100", {{"precision", "fp8"}}, {{"gpu", "a100-80gb-sxm"}}, {},
       "training.precision", "fp8", "NVIDIA A100 SXM4 80GB has no FP8 tensor cores; use bf16, fp16 or fp32"},
      {"qlora in fp32", {{"method", "qlora"}, {"precision", "fp32"}}, {}, {},
       "training.precision", "fp32", "bf16 or fp16 with qlora (its compute dtype)"},
      {"evaluation without sequences", {{"eval_interval_steps", 1000}}, {}, {},
       "training.eval_sequences", "0", "at least 1 with eval_interval_steps: the held-out sequences each evaluation scores"},
      {"evaluation without an interval", {{"eval_sequences", 512}}, {}, {},
       "training.eval_interval_steps", "0", "at least 1 with eval_sequences: the optimizer steps between two evaluations"},
      {"negative evaluation interval", {{"eval_interval_steps", -5}}, {}, {},
       "training.eval_interval_steps", "-5", "an integer from 0 to 100000000"},
  };
  for (const Case& c : cases) {
    try {
      ScenarioFromJson(Doc(c), false);
      ADD_FAILURE() << c.name << ": no InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), c.field) << c.name;
      EXPECT_EQ(e.value(), c.value) << c.name;
      EXPECT_EQ(e.allowed(), c.allowed) << c.name;
    }
  }
}

// PyTorch FSDP shards gradients (and parameters) inside each pipeline stage; DeepSpeed's pipeline engine cannot.
TEST(ValidateScenario, FsdpShardsGradientsAcrossPipelineStages) {
  json doc = Doc({"fsdp with pp", {{"framework", "fsdp"}}, {}, {{"pp", 2}, {"zero", 2}}, "", "", ""});
  EXPECT_EQ(ScenarioFromJson(doc, false).strategy.zero, 2);
  doc["training"]["framework"] = "deepspeed";
  EXPECT_THROW(ScenarioFromJson(doc, false), InputError);
}

}  // namespace
}  // namespace trainplan
