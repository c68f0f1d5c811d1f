#include "cli/errors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "base/error.h"
#include "io/text_io.h"

namespace trainplan::cli {

namespace {

struct FlagPath {
  std::string_view path, flag;
};

/// Every flag that writes a document field, by that field's path (cli/commands.cc writes them).
constexpr FlagPath kFlagPaths[] = {
    {"model", "--model"},
    {"model.generic_config", "--generic-config"},
    {"training.method", "--method"},
    {"training.precision", "--precision"},
    {"training.optimizer", "--optimizer"},
    {"training.framework", "--framework"},
    {"training.attention", "--attention"},
    {"training.seq_len", "--seq-len"},
    {"training.micro_batch", "--micro-batch"},
    {"training.global_batch", "--global-batch"},
    {"training.tokens", "--tokens"},
    {"training.lora_rank", "--lora-rank"},
    {"training.lora_targets", "--lora-targets"},
    {"training.trainable_layers", "--trainable-layers"},
    {"training.loss", "--loss"},
    {"training.optimizer_in_backward", "--optimizer-in-backward"},
    {"training.master_weights", "--master-weights"},
    {"training.modules_to_save", "--modules-to-save"},
    {"training.moe_capacity_factor", "--moe-capacity-factor"},
    {"training.activation_offloading", "--activation-offloading"},
    {"training.dora", "--dora"},
    {"training.double_quant", "--no-double-quant"},
    {"training.objective", "--training-objective"},
    {"training.sample_mean_tokens", "--sample-mean-tokens"},
    {"training.sample_max_tokens", "--sample-max-tokens"},
    {"training.sample_lengths", "--sample-lengths"},
    {"training.packing", "--packing"},
    {"training.group_by_length", "--group-by-length"},
    {"training.liger", "--liger"},
    {"training.compile", "--compile"},
    {"training.dataloader_workers", "--dataloader-workers"},
    {"hardware.gpu", "--gpu"},
    {"hardware.gpus", "--gpus"},
    {"hardware.gpus_per_node", "--gpus-per-node"},
    {"hardware.links.intra_node", "--intra-link"},
    {"hardware.links.inter_node", "--inter-link"},
    {"hardware.usable_memory_fraction", "--usable-memory"},
    {"hardware.host_ram_gb", "--host-ram"},
    {"strategy.tp", "--tp"},
    {"strategy.pp", "--pp"},
    {"strategy.dp", "--dp"},
    {"strategy.cp", "--cp"},
    {"strategy.ep", "--ep"},
    {"strategy.etp", "--etp"},
    {"training.mtp_layers", "--mtp-layers"},
    {"training.eval_interval_steps", "--eval-interval-steps"},
    {"training.eval_sequences", "--eval-sequences"},
    {"training.optimizer_state_dtype", "--optimizer-state-dtype"},
    {"training.fp8_swiglu_input", "--fp8-swiglu-input"},
    {"strategy.zero", "--zero"},
    {"strategy.interleave", "--interleave"},
    {"strategy.pipeline_schedule", "--pipeline-schedule"},
    {"strategy.moe_dispatcher", "--moe-dispatcher"},
    {"strategy.cp_comm", "--cp-comm"},
    {"strategy.recompute", "--recompute"},
    {"strategy.offload", "--offload"},
    {"strategy.sequence_parallel", "--sequence-parallel"},
    {"strategy.flash_attention", "--no-flash-attention"},
    {"strategy.tp_comm_overlap", "--no-tp-comm-overlap"},
    {"strategy.pp_comm_overlap", "--no-pp-comm-overlap"},
    {"strategy.moe_a2a_overlap", "--no-moe-a2a-overlap"},
    {"strategy.moe_shared_expert_overlap", "--moe-shared-expert-overlap"},
    {"plan.gpu", "--gpu"},
    {"plan.gpus", "--gpus"},
    {"plan.max_gpus", "--max-gpus"},
    {"plan.max_rent_gpus", "--max-rent-gpus"},
    {"plan.gpus_per_node", "--gpus-per-node"},
    {"plan.inter_link", "--inter-link"},
    {"plan.deadline", "--deadline"},
    {"plan.budget_usd", "--budget"},
    {"plan.budget", "--budget"},
    {"plan.currency", "--currency"},
    {"plan.objective", "--objective"},
    {"plan.offload", "--no-offload"},
    {"plan.top", "--top"},
    {"plan.prices", "--price"},
    {"recommend.deadline", "--deadline"},
    {"recommend.budget_usd", "--budget"},
    {"recommend.budget", "--budget"},
    {"recommend.currency", "--currency"},
    {"recommend.prefer_domestic", "--prefer-domestic"},
    {"recommend.usage", "--usage"},
    {"recommend.runs_per_month", "--runs-per-month"},
    {"recommend.months", "--months"},
    {"recommend.data_sensitivity", "--data-sensitivity"},
    {"recommend.region", "--region"},
    {"recommend.as_of", "--as-of"},
    {"recommend.electricity_usd_per_kwh", "--electricity"},
    {"recommend.pue", "--pue"},
    {"recommend.hosting_usd_per_kw_month", "--hosting"},
    {"recommend.gpu", "--gpu"},
    {"recommend.max_gpus", "--max-gpus"},
    {"recommend.gpus", "--gpus"},
    {"recommend.prices", "--price"},
    {"recommend.purchase_prices", "--purchase"},
    {"recommend.dataset_gb", "--dataset-gb"},
    {"recommend.checkpoints_kept", "--checkpoints-kept"},
    {"recommend.psu_n_plus_n", "--psu-n-plus-n"},
    {"output", "-o"},
    {"format", "--format"},
    {"interval", "--interval"},
    {"duration", "--duration"},
    {"data", "--data"},
    {"checkpoint", "--checkpoint"},
    {"measurements", "--reference"},
};

bool Under(std::string_view field, std::string_view path) {
  return field == path ||
         (field.size() > path.size() && field.starts_with(path) && (field[path.size()] == '.' || field[path.size()] == '['));
}

bool Given(std::string_view flag, const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a == flag || (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=') ||
           (flag == "-o" && a == "--output");
  });
}

}  // namespace

std::string FieldAsGiven(const std::string& field, const std::vector<std::string>& args) {
  // `review` reads its job from the build's "job" object, with the job flags written over it.
  const std::string_view job_field = std::string_view(field).starts_with("job.") ? std::string_view(field).substr(4)
                                                                                : std::string_view(field);
  for (const FlagPath& f : kFlagPaths) {
    if (Under(job_field, f.path) && Given(f.flag, args)) return std::string(f.flag);
  }
  return field;
}

int ReportError(std::exception_ptr e, const std::vector<std::string>& args) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& error) {
    std::cerr << fmt::format("error: invalid {}: '{}'; {}\n", FieldAsGiven(error.field(), args), error.value(),
                             error.allowed());
    return kExitBadInput;
  } catch (const OutputError& error) {
    std::cerr << "error: cannot write the answer: " << error.what() << "\n";
    return kExitMachineCannot;
  } catch (const std::exception& error) {
    std::cerr << "internal error: " << error.what() << "\n";
  } catch (...) {
    std::cerr << "internal error\n";
  }
  return kExitInternal;
}

int FinishAnswer(int status) {
  // A write that failed earlier left its errno (nothing since clears it); a failing flush now sets its own.
  const int earlier = errno;
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
  if (!failed) return status;
  const int reason = errno != 0 ? errno : earlier;
  std::cerr << "error: cannot write the answer: " << (reason != 0 ? std::strerror(reason) : "the write failed")
            << "\n";
  return kExitMachineCannot;
}

}  // namespace trainplan::cli
