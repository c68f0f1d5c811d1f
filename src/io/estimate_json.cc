#include "io/writers.h"

#include <nlohmann/json.hpp>

#include "catalog/efficiency.h"
#include "core/sequences.h"
#include "core/units.h"
#include "text/explain.h"
#include "text/format.h"
#include "text/job_costs_text.h"

namespace trainplan {

nlohmann::json ParamComponentsToJson(const ParamCounts& p) {
  return {{"embedding", p.embedding}, {"attention", p.attention},        {"mlp", p.mlp},
          {"experts", p.experts},     {"shared_experts", p.shared_experts}, {"router", p.router},
          {"norms", p.norms},         {"lm_head", p.lm_head}};
}

nlohmann::json EstimateToJson(const Scenario& s, const Estimate& e, Lang lang) {
  using nlohmann::json;
  json params = {{"total", e.params.total},
                 {"active", e.params.active},
                 {"trainable", static_cast<int64_t>(e.trainable.trainable)},
                 {"frozen", static_cast<int64_t>(e.trainable.frozen)},
                 {"lora", static_cast<int64_t>(e.trainable.lora)},
                 {"components", ParamComponentsToJson(e.params)},
                 {"checkpoint_extra", e.params.checkpoint_extra},
                 {"vision", e.params.vision}};
  json mem_components = json::object();
  for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i)
    mem_components[MemTermName(static_cast<MemTerm>(i))] = e.memory.bytes[i];
  json memory = {{"per_gpu_bytes", e.memory.per_gpu_bytes},
                 {"per_gpu_gib", e.memory.per_gpu_bytes / kGiB},
                 {"capacity_bytes", e.memory.capacity_bytes},
                 {"components", mem_components},
                 {"usable_bytes", e.memory.usable_bytes},
                 {"usable_memory_fraction", s.hardware.usable_memory_fraction},
                 {"at_edge", e.memory.at_edge},
                 {"host_bytes", e.memory.host_bytes},
                 {"host_limit_bytes", e.memory.host_limit_bytes > 0 ? json(e.memory.host_limit_bytes) : json()},
                 {"pageable_bytes", e.memory.pageable_bytes},
                 {"paged_spill_bytes", e.memory.paged_spill_bytes},
                 {"stream_cache_bytes", e.memory.stream_cache_bytes},
                 {"load_peak_bytes", e.memory.load_peak_bytes},
                 {"load_host_bytes", e.memory.load_host_bytes},
                 {"load_peak_binds", e.memory.LoadPeakBinds()},
                 {"fits", e.memory.fits},
                 {"reference_weights_bytes", e.memory.reference_weights_bytes}};
  json time_breakdown = json::object();
  for (size_t i = 0; i < static_cast<size_t>(TimeTerm::kCount); ++i)
    time_breakdown[TimeTermName(static_cast<TimeTerm>(i))] = e.time.seconds[i];
  const TimeEstimate& t = e.time;
  json fixed = json::object();
  for (size_t i = 0; i < static_cast<size_t>(FixedTerm::kCount); ++i)
    fixed[FixedTermName(static_cast<FixedTerm>(i))] = t.fixed[i];
  json time = {{"step_s", t.step_s},
               {"breakdown_s", time_breakdown},
               {"tokens_per_step", t.tokens_per_step},
               {"tokens_per_s", t.tokens_per_s},
               {"model_flops_per_step", t.model_flops_per_step},
               {"hardware_flops_per_step", t.hardware_flops_per_step},
               {"model_tflops_per_gpu", t.model_tflops_per_gpu},
               {"hardware_tflops_per_gpu", t.hardware_tflops_per_gpu},
               {"mfu", t.mfu},
               {"hfu", t.hfu},
               {"steps", t.steps},
               {"training_s", t.training_s},
               {"fixed_s", t.fixed_s},
               {"fixed_breakdown_s", fixed},
               {"fixed_text", FixedCostsText(t, lang)},
               {"interruption_s", t.interruption_s},
               {"evaluations", t.evaluations},
               {"evaluation_pass_s", t.evaluation_pass_s},
               {"evaluation_s", t.evaluation_s},
               {"total_s", t.total_s},
               {"gpu_hours", t.gpu_hours},
               {"duration", FormatDuration(t.total_s, lang)},
               {"padded_tokens_per_step", t.padded_tokens_per_step},
               {"padding_fraction", t.padding_fraction},
               {"reference_forward_s", t.reference_forward_s}};
  const Strategy& st = s.strategy;
  json strategy = {{"tp", st.tp},
                   {"pp", st.pp},
                   {"dp", st.dp},
                   {"cp", st.cp},
                   {"ep", st.ep},
                   {"etp", ExpertTp(st)},
                   {"zero", st.zero},
                   {"recompute", ToString(st.recompute)},
                   {"sequence_parallel", st.sequence_parallel},
                   {"offload", ToString(st.offload)},
                   {"flash_attention", st.flash_attention},
                   {"interleave", st.interleave},
                   {"tp_comm_overlap", st.tp_comm_overlap},
                   {"pp_comm_overlap", st.pp_comm_overlap},
                   {"moe_a2a_overlap", st.moe_a2a_overlap},
                   {"moe_shared_expert_overlap", st.moe_shared_expert_overlap},
                   {"moe_dispatcher", ToString(st.moe_dispatcher)},
                   {"cp_comm", ToString(st.cp_comm)},
                   {"pipeline_schedule", ToString(st.pipeline_schedule)},
                   {"micro_batch", s.training.micro_batch},
                   {"global_batch", GlobalBatch(s)},
                   {"global_batch_source", s.training.global_batch > 0 ? "given" : "default"},
                   {"global_batch_note", GlobalBatchText(s, lang)},
                   {"grad_accum_steps", GradAccumSteps(s)}};
  if (st.reduce_bucket_elements == kReduceBucketAuto) strategy["reduce_bucket_elements"] = "auto";
  if (st.reduce_bucket_elements > 0) strategy["reduce_bucket_elements"] = st.reduce_bucket_elements;
  json training = {{"method", ToString(s.training.method)},
                   {"precision", ToString(s.training.precision)},
                   {"optimizer", ToString(s.training.optimizer)},
                   {"framework", ToString(s.training.framework)},
                   {"seq_len", s.training.seq_len},
                   {"tokens", s.training.tokens},
                   {"loss", ToString(EffectiveLoss(s.training))},
                   {"optimizer_in_backward", EffectiveOptimizerInBackward(s.training, s.hardware.gpus)},
                   {"activation_offloading", EffectiveActivationOffloading(s.training, s.strategy.recompute)},
                   {"fp32_weights", s.training.fp32_weights},
                   {"master_weights", EffectiveMasterWeights(s.training)}};
  if (IsAdapterMethod(s.training.method)) {
    training["lora_rank"] = s.training.lora_rank;
    training["dora"] = s.training.dora;
    training["modules_to_save"] = s.training.modules_to_save;
  }
  if (s.training.method == Method::kQlora) {
    training["double_quant"] = s.training.double_quant;
    training["quantization"] = s.training.quantization == Quantization::kGptq4 ? "gptq" : "nf4";
  }
  training["objective"] = ToString(s.training.objective);
  training["packing"] = s.training.packing;
  training["group_by_length"] = s.training.group_by_length;
  training["liger"] = s.training.liger;
  training["compile"] = s.training.compile;
  training["dataloader_workers"] = EffectiveDataloaderWorkers(s.training);
  training["optimizer_state_dtype"] = s.training.bf16_optimizer_states ? "bf16" : "fp32";
  training["fp8_swiglu_input"] = s.training.fp8_swiglu_input;
  training["mtp_layers"] = s.training.mtp_layers;
  if (s.training.eval_interval_steps > 0) {
    training["eval_interval_steps"] = s.training.eval_interval_steps;
    training["eval_sequences"] = s.training.eval_sequences;
  }
  training["moe_capacity_factor"] = s.training.moe_capacity_factor;
  if (!s.training.framework_version.empty()) training["framework_version"] = s.training.framework_version;
  // The sample lengths as the job gave them (a histogram, or mean and maximum), so the output replays the job.
  if (!s.training.sample_lengths.empty()) {
    training["sample_lengths"] = s.training.sample_lengths;
  } else if (s.training.sample_mean_tokens > 0) {
    training["sample_mean_tokens"] = s.training.sample_mean_tokens;
    if (s.training.sample_max_tokens > 0) training["sample_max_tokens"] = s.training.sample_max_tokens;
  }
  if (const SequenceShape shape = ShapeOf(s.training); shape.described) {
    training["sequences"] = {{"mean_sample_tokens", shape.mean_sample_tokens},
                             {"peak_row_tokens", shape.peak_row_tokens},
                             {"rows_per_example", shape.rows_per_example},
                             {"row_tokens", shape.row_tokens},
                             {"useful_tokens_per_row", shape.useful_tokens},
                             {"attention_tokens", shape.attention_tokens},
                             {"padding_fraction", shape.padding_fraction()},
                             {"truncated", shape.truncated}};
  }
  json hardware = {{"gpu", s.hardware.gpu.id},
                   {"gpu_name", s.hardware.gpu.name},
                   {"gpus", s.hardware.gpus},
                   {"gpus_per_node", s.hardware.gpus_per_node},
                   {"nodes", s.hardware.nodes()},
                   {"intra_node", s.hardware.intra_node.id},
                   {"inter_node", s.hardware.inter_node.id}};
  json model = {{"name", s.model.name},
                {"hf_id", s.model.hf_id},
                {"model_type", s.model.model_type},
                {"approximate", s.model.approximate},
                {"source", s.model.source}};
  json options = json::array();
  for (const auto& o : e.options)
    options.push_back({{"change", FitChangeText(o, lang)}, {"per_gpu_bytes", o.per_gpu_bytes}, {"host_bytes", o.host_bytes},
                       {"fits", o.fits}});
  memory["options"] = options;
  return {{"model", model},       {"training", training},          {"hardware", hardware},
          {"strategy", strategy}, {"strategy_text", StrategyText(st, s.training.micro_batch)},
          {"params", params},     {"memory", memory},
          {"time", time},         {"assumptions", EstimateAssumptions(s, e, lang)},
          {"warnings", EstimateWarnings(s, e, lang)},  {"confidence", ConfidenceText(e.confidence, lang)}};
}

}  // namespace trainplan
