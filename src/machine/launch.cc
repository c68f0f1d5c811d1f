#include "machine/launch.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "core/framework.h"
#include "core/limits.h"
#include "core/moe_time.h"
#include "io/model_catalog.h"
#include "core/units.h"
#include "io/scenario_reader.h"

namespace trainplan {

namespace {

using nlohmann::json;


/// DeepSpeed runs the job: the DeepSpeed engine, or a Hugging Face Trainer plan that shards or offloads
/// (the Trainer does both through its DeepSpeed integration).
bool UsesDeepSpeed(const LaunchPlan& p) {
  if (p.framework == Framework::kDeepSpeed) return true;
  return (p.framework == Framework::kHfTrainer || p.framework == Framework::kUnsloth) &&
         (p.strategy.zero > 0 || p.strategy.offload != Offload::kNone);
}

/// Single-quotes an argument for a POSIX shell when it holds anything but plain characters.
std::string ShellQuote(const std::string& arg) {
  if (arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+@%") ==
      std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Quoted arguments with each "--flag value" pair kept together, one element per pair, and the words before the
/// first flag (program, subcommand, positional arguments) as the first element.
std::vector<std::string> PairedArgs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  size_t i = 0;
  for (; i < args.size() && args[i].rfind("--", 0) != 0; ++i) {
    if (out.empty()) {
      out.push_back(ShellQuote(args[i]));
    } else {
      out.back().append(1, ' ').append(ShellQuote(args[i]));
    }
  }
  for (; i < args.size(); ++i) {
    std::string item = ShellQuote(args[i]);
    if (args[i].rfind("--", 0) == 0 && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0)
      item += " " + ShellQuote(args[++i]);
    out.push_back(item);
  }
  return out;
}

std::string Join(const std::vector<std::string>& args, const std::string& separator) {
  std::string out;
  for (const auto& a : PairedArgs(args)) out += (out.empty() ? "" : separator) + a;
  return out;
}

std::string Summary(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  return fmt::format(
      "{} {} with {} on {}x {} ({} node(s) x {}): tp={} pp={} dp={} cp={} ep={} zero={} offload={} recompute={}, "
      "micro-batch {}, global batch {} ({} accumulation step(s)), seq {}",
      p.model, ToString(p.method), ToString(p.framework), p.gpus, p.gpu_id, p.nodes, p.gpus_per_node, s.tp, s.pp,
      s.dp, s.cp, s.ep, s.zero, ToString(s.offload), ToString(s.recompute), p.micro_batch, p.global_batch,
      p.grad_accum_steps, p.seq_len);
}

/// "torchrun" or torchtune's "tune run" (which takes torchrun's arguments) and the per-node arguments.
std::vector<std::string> Launcher(const LaunchPlan& p, const std::string& nnodes, const std::string& rendezvous,
                                  const std::string& rdzv_id) {
  std::vector<std::string> cmd;
  if (p.framework == Framework::kTorchtune) {
    cmd = {"tune", "run"};
  } else {
    cmd = {"torchrun"};
  }
  cmd.push_back("--nnodes=" + nnodes);
  cmd.push_back(fmt::format("--nproc_per_node={}", std::min(p.gpus, p.gpus_per_node)));
  if (!rendezvous.empty()) {
    cmd.push_back("--rdzv_id=" + rdzv_id);
    cmd.push_back("--rdzv_backend=c10d");
    cmd.push_back("--rdzv_endpoint=" + rendezvous);
  }
  return cmd;
}

/// The launcher's words, leaving those with shell variables unquoted for the shell to expand.
std::string LauncherLine(const std::vector<std::string>& launcher) {
  std::string out;
  for (const auto& a : launcher) out += (out.empty() ? "" : " ") + (a.find('$') != std::string::npos ? a : ShellQuote(a));
  return out;
}

/// The launcher and the engine's command, one argument pair per line.
std::string CommandLine(const std::vector<std::string>& launcher, const std::vector<std::string>& engine) {
  const std::string body = Join(engine, " \\\n  ");
  return launcher.empty() ? body : LauncherLine(launcher) + " \\\n  " + body;
}

/// LitGPT starts its own workers: Lightning Fabric spawns one process per device on each node and takes the
/// node's place from MASTER_ADDR, MASTER_PORT and NODE_RANK (LightningEnvironment), or from SLURM under srun.
bool SelfLaunched(const LaunchPlan& p) { return p.framework == Framework::kLitGpt; }

/// What LitGPT needs before its command on a node started by hand: nothing on one node.
std::vector<std::string> FabricNodeEnvironment(const LaunchPlan& p, const LaunchOptions& o) {
  if (p.nodes == 1) return {};
  return {"MASTER_ADDR=${MASTER_ADDR:?set to the first node}", fmt::format("MASTER_PORT={}", o.master_port),
          fmt::format("NODE_RANK=${{NODE_RANK:?0 on the first node, {} on the last}}", p.nodes - 1)};
}

/// The rendezvous endpoint on the first node for a script started by hand on every node; "" on one node.
std::string ManualRendezvous(const LaunchPlan& p, const LaunchOptions& o) {
  return p.nodes > 1 ? fmt::format("${{MASTER_ADDR:?set to the first node}}:{}", o.master_port) : "";
}

/// Megatron-LM's GPT entry point unless the options name another script.
std::string MegatronScript(const LaunchOptions& o) {
  return o.script == LaunchOptions().script ? "pretrain_gpt.py" : o.script;
}

std::string YamlBool(bool b) { return b ? "true" : "false"; }

std::string YamlQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

std::string MixedPrecision(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kFp32: return "'no'";
  }
  return "'no'";
}

std::string RenderAccelerate(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  std::string distributed;
  std::string section;
  if (p.framework == Framework::kMegatron) {
    distributed = "MEGATRON_LM";
    section = fmt::format(
        "megatron_lm_config:\n"
        "  megatron_lm_gradient_clipping: 1.0\n"
        "  megatron_lm_num_micro_batches: {}\n"
        "  megatron_lm_pp_degree: {}\n"
        "  megatron_lm_recompute_activations: {}\n"
        "  megatron_lm_sequence_parallelism: {}\n"
        "  megatron_lm_tp_degree: {}\n"
        "  megatron_lm_use_distributed_optimizer: {}\n",
        p.grad_accum_steps, s.pp, YamlBool(s.recompute != Recompute::kNone), YamlBool(s.sequence_parallel), s.tp,
        YamlBool(s.zero >= 1));
  } else if (UsesDeepSpeed(p)) {
    distributed = "DEEPSPEED";
    const bool offload_optimizer = s.offload != Offload::kNone;
    const bool offload_params = s.offload == Offload::kOptimizerAndParams;
    section = fmt::format(
        "deepspeed_config:\n"
        "  gradient_accumulation_steps: {}\n"
        "  gradient_clipping: 1.0\n"
        "  offload_optimizer_device: {}\n"
        "  offload_param_device: {}\n"
        "  zero3_init_flag: {}\n"
        "  zero3_save_16bit_model: {}\n"
        "  zero_stage: {}\n",
        p.grad_accum_steps, offload_optimizer ? "cpu" : "none", offload_params ? "cpu" : "none",
        YamlBool(s.zero == 3), YamlBool(s.zero == 3), s.zero);
  } else if (p.framework == Framework::kFsdp || p.framework == Framework::kTorchtune) {
    distributed = "FSDP";
    const char* sharding = s.zero >= 3 ? "FULL_SHARD" : s.zero == 2 ? "SHARD_GRAD_OP" : "NO_SHARD";
    section = fmt::format(
        "fsdp_config:\n"
        "  fsdp_activation_checkpointing: {}\n"
        "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
        "  fsdp_backward_prefetch: BACKWARD_PRE\n"
        "  fsdp_cpu_ram_efficient_loading: true\n"
        "  fsdp_forward_prefetch: false\n"
        "  fsdp_offload_params: {}\n"
        "  fsdp_sharding_strategy: {}\n"
        "  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
        "  fsdp_sync_module_states: true\n"
        "  fsdp_use_orig_params: true\n",
        YamlBool(s.recompute != Recompute::kNone), YamlBool(s.offload == Offload::kOptimizerAndParams), sharding);
  } else {
    distributed = p.gpus > 1 ? "MULTI_GPU" : "'NO'";
  }
  return fmt::format(
      "# {}\n"
      "compute_environment: LOCAL_MACHINE\n"
      "debug: false\n"
      "{}"
      "distributed_type: {}\n"
      "downcast_bf16: 'no'\n"
      "machine_rank: 0\n"
      "main_training_function: main\n"
      "mixed_precision: {}\n"
      "num_machines: {}\n"
      "num_processes: {}\n"
      "rdzv_backend: {}\n"
      "same_network: true\n"
      "use_cpu: false\n",
      Summary(p), section, distributed, MixedPrecision(p.precision), p.nodes, p.gpus,
      p.nodes > 1 ? "c10d" : "static");
}

std::string RenderSlurm(const LaunchPlan& p, const LaunchOptions& o) {
  // Lightning Fabric under srun wants one task per GPU (its SLURMEnvironment checks the task count).
  const bool fabric = SelfLaunched(p);
  const std::vector<std::string> launcher =
      fabric ? std::vector<std::string>{} : Launcher(p, "$SLURM_NNODES", "$MASTER_ADDR:$MASTER_PORT", "$SLURM_JOB_ID");
  return fmt::format(
      "#!/bin/bash\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node={}\n"
      "#SBATCH --gpus-per-node={}\n"
      "#SBATCH --exclusive\n"
      "# {}\n"
      "set -euo pipefail\n"
      "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      "export MASTER_PORT={}\n"
      "# {}\n"
      "srun {}\n",
      o.job_name, p.nodes, fabric ? std::min(p.gpus, p.gpus_per_node) : 1, std::min(p.gpus, p.gpus_per_node),
      Summary(p), o.master_port,
      fabric ? "one task per GPU; Lightning Fabric reads each task's rank from SLURM"
             : "one torchrun per node; the c10d rendezvous on the first node assigns the ranks",
      CommandLine(launcher, EngineCommand(p, o)));
}

std::string RenderKubernetes(const LaunchPlan& p, const LaunchOptions& o) {
  // The training operator sets MASTER_ADDR, MASTER_PORT and RANK (the pod's index) in every pod; the
  // shell expands them at start.
  std::vector<std::string> launcher;
  if (SelfLaunched(p)) {
    launcher = {"NODE_RANK=${RANK}"};  // Fabric reads MASTER_ADDR and MASTER_PORT as the operator sets them
  } else {
    launcher = Launcher(p, std::to_string(p.nodes), "", "");
    launcher.push_back("--node_rank=${RANK}");
    launcher.push_back("--master_addr=${MASTER_ADDR}");
    launcher.push_back("--master_port=${MASTER_PORT}");
  }
  const std::string command = LauncherLine(launcher) + " " + Join(EngineCommand(p, o), " ");
  const int gpus_per_pod = std::min(p.gpus, p.gpus_per_node);
  auto replica = [&](const char* role, int replicas) {
    return fmt::format(
        "    {}:\n"
        "      replicas: {}\n"
        "      restartPolicy: OnFailure\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "            - name: pytorch\n"
        "              image: {}\n"
        "              command: [\"/bin/bash\", \"-c\"]\n"
        "              args:\n"
        "                - {}\n"
        "              resources:\n"
        "                limits:\n"
        "                  nvidia.com/gpu: {}\n"
        "              volumeMounts:\n"
        "                - name: dshm\n"
        "                  mountPath: /dev/shm\n"
        "          volumes:\n"
        "            - name: dshm\n"
        "              emptyDir:\n"
        "                medium: Memory\n",
        role, replicas, o.image, YamlQuote(command), gpus_per_pod);
  };
  std::string out = fmt::format(
      "# {}\n"
      "apiVersion: kubeflow.org/v1\n"
      "kind: PyTorchJob\n"
      "metadata:\n"
      "  name: {}\n"
      "spec:\n"
      "  pytorchReplicaSpecs:\n",
      Summary(p), o.job_name);
  out += replica("Master", 1);
  if (p.nodes > 1) out += replica("Worker", p.nodes - 1);
  return out;
}

}  // namespace

const char* ToString(LaunchFormat f) {
  switch (f) {
    case LaunchFormat::kTorchrun: return "torchrun";
    case LaunchFormat::kDeepSpeed: return "deepspeed";
    case LaunchFormat::kAccelerate: return "accelerate";
    case LaunchFormat::kMegatron: return "megatron";
    case LaunchFormat::kSlurm: return "slurm";
    case LaunchFormat::kK8s: return "k8s";
  }
  return "";
}

LaunchFormat ParseLaunchFormat(const std::string& s, const std::string& field) {
  for (LaunchFormat f : {LaunchFormat::kTorchrun, LaunchFormat::kDeepSpeed, LaunchFormat::kAccelerate,
                         LaunchFormat::kMegatron, LaunchFormat::kSlurm, LaunchFormat::kK8s})
    if (s == ToString(f)) return f;
  throw InputError(field, s, "torchrun | deepspeed | accelerate | megatron | slurm | k8s");
}

LaunchPlan LaunchPlanFromJson(const json& input, const std::string& source) {
  // Fields are named "<file>: strategy.tp", like a scenario file's.
  if (!input.is_object()) {
    Field(input, source).Fail("a plan written by `trainplan plan --json` or `trainplan estimate --json`");
  }
  const Field file(input, source + ": ");
  Field doc = file;
  if (auto plans = file.Get("plans")) {
    const auto items = plans->Items();
    if (items.empty()) {
      const auto reason = file.Get("reason");
      throw InputError(source, reason ? reason->Shown() : "no plans",
                       "a feasible plan (`trainplan plan` lists the changes that make the job fit)");
    }
    doc = items.front();
  }
  const Field model = doc.At("model"), training = doc.At("training"), hardware = doc.At("hardware"),
              strategy = doc.At("strategy");
  constexpr IntRange kCount{1, 1'000'000'000};
  LaunchPlan p;
  p.model = model.At("name").String();
  if (auto hf = model.Get("hf_id")) p.hf_id = hf->String();
  auto text = [](const Field& f) { return std::pair{f.String(), f.path()}; };
  p.method = std::apply(ParseMethod, text(training.At("method")));
  p.precision = std::apply(ParsePrecision, text(training.At("precision")));
  p.optimizer = std::apply(ParseOptimizer, text(training.At("optimizer")));
  p.framework = std::apply(ParseFramework, text(training.At("framework")));
  p.seq_len = training.At("seq_len").Int(kCount);
  if (auto tokens = training.Get("tokens")) p.tokens = tokens->Number(0, 1e30, /*lo_inclusive=*/true);
  if (auto rank = training.Get("lora_rank")) p.lora_rank = rank->Int({0, 1'000'000});
  if (auto v = training.Get("group_by_length")) p.group_by_length = v->Bool();
  if (auto v = training.Get("liger")) p.liger = v->Bool();
  if (auto v = training.Get("compile")) p.compile = v->Bool();
  if (auto v = training.Get("dataloader_workers")) p.dataloader_workers = v->Int({0, 256});
  if (auto v = training.Get("mtp_layers")) p.mtp_layers = v->Int(limits::kMtpLayers);
  if (auto v = training.Get("eval_interval_steps")) p.eval_interval_steps = v->Int(limits::kEvalIntervalSteps);
  if (auto v = training.Get("eval_sequences")) p.eval_sequences = v->Int(limits::kEvalSequences);
  if (auto v = training.Get("optimizer_state_dtype")) p.bf16_optimizer_states = v->String() == "bf16";
  if (auto v = training.Get("fp8_swiglu_input")) p.fp8_swiglu_input = v->Bool();
  p.gpu_id = hardware.At("gpu").String();
  p.gpus = static_cast<int>(hardware.At("gpus").Int(kCount));
  p.gpus_per_node = static_cast<int>(hardware.At("gpus_per_node").Int(kCount));
  p.nodes = static_cast<int>(hardware.At("nodes").Int(kCount));
  Strategy& st = p.strategy;
  auto size = [&](const char* key) { return static_cast<int>(strategy.At(key).Int(kCount)); };
  st.tp = size("tp");
  st.pp = size("pp");
  st.dp = size("dp");
  st.cp = size("cp");
  st.ep = size("ep");
  if (strategy.Has("etp")) st.etp = size("etp");
  st.interleave = size("interleave");
  st.zero = static_cast<int>(strategy.At("zero").Int({0, 3}));
  st.recompute = std::apply(ParseRecompute, text(strategy.At("recompute")));
  st.offload = std::apply(ParseOffload, text(strategy.At("offload")));
  st.sequence_parallel = strategy.At("sequence_parallel").Bool();
  st.flash_attention = strategy.At("flash_attention").Bool();
  if (const auto v = strategy.Get("tp_comm_overlap")) st.tp_comm_overlap = v->Bool();
  if (const auto v = strategy.Get("pp_comm_overlap")) st.pp_comm_overlap = v->Bool();
  if (const auto v = strategy.Get("moe_a2a_overlap")) st.moe_a2a_overlap = v->Bool();
  if (const auto v = strategy.Get("moe_shared_expert_overlap")) st.moe_shared_expert_overlap = v->Bool();
  if (const auto v = strategy.Get("pipeline_schedule")) st.pipeline_schedule = std::apply(ParsePipelineSchedule, text(*v));
  if (const auto v = strategy.Get("moe_dispatcher")) st.moe_dispatcher = std::apply(ParseMoeDispatcher, text(*v));
  if (const auto v = strategy.Get("cp_comm")) st.cp_comm = std::apply(ParseCpComm, text(*v));
  if (const auto v = strategy.Get("reduce_bucket_elements")) {
    st.reduce_bucket_elements = v->value().is_string() && v->String() == "auto"
                                    ? kReduceBucketAuto
                                    : v->Number(1, limits::kMaxReduceBucketElements, /*lo_inclusive=*/true);
  }
  p.micro_batch = strategy.At("micro_batch").Int(kCount);
  p.global_batch = strategy.At("global_batch").Int(kCount);
  p.grad_accum_steps = strategy.At("grad_accum_steps").Int(kCount);
  const Strategy& s = p.strategy;
  if (s.tp * s.pp * s.cp * s.dp != p.gpus)
    throw InputError(source, fmt::format("tp*pp*cp*dp = {}*{}*{}*{} on {} GPUs", s.tp, s.pp, s.cp, s.dp, p.gpus),
                     "parallel sizes whose product is the GPU count");
  if ((s.dp * s.cp) % s.ep != 0)
    throw InputError(source, fmt::format("ep={} with dp*cp={}", s.ep, s.dp * s.cp), "ep dividing dp*cp");
  if (p.global_batch != p.micro_batch * p.grad_accum_steps * s.dp)
    throw InputError(source,
                     fmt::format("global batch {} with micro-batch {}, {} accumulation step(s), dp={}",
                                 p.global_batch, p.micro_batch, p.grad_accum_steps, s.dp),
                     "global batch = micro-batch * accumulation * dp");
  if (p.nodes != (p.gpus + p.gpus_per_node - 1) / p.gpus_per_node)
    throw InputError(source, fmt::format("{} node(s) for {} GPUs at {} per node", p.nodes, p.gpus, p.gpus_per_node),
                     "nodes = ceil(gpus / gpus_per_node)");
  return p;
}

json JobDocument(const LaunchPlan& p) {
  json training = {{"method", ToString(p.method)},     {"precision", ToString(p.precision)},
                   {"optimizer", ToString(p.optimizer)}, {"framework", ToString(p.framework)},
                   {"seq_len", p.seq_len},               {"global_batch", p.global_batch},
                   {"tokens", p.tokens}};
  if (p.lora_rank > 0) training["lora_rank"] = p.lora_rank;
  if (p.eval_interval_steps > 0) {
    training["eval_interval_steps"] = p.eval_interval_steps;
    training["eval_sequences"] = p.eval_sequences;
  }
  return {{"model", p.hf_id.empty() ? p.model : p.hf_id}, {"training", training}};
}

json DeepSpeedConfig(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  if (s.tp > 1 || s.pp > 1 || s.cp > 1)
    throw InputError("format", "deepspeed",
                     fmt::format("a data-parallel plan (this one has tp={} pp={} cp={}: use the megatron format)", s.tp,
                                 s.pp, s.cp));
  json zero = {{"stage", s.zero}, {"overlap_comm", true}, {"contiguous_gradients", true}};
  if (s.offload != Offload::kNone) zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  if (s.offload == Offload::kOptimizerAndParams) zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
  if (s.zero == 3) zero["stage3_gather_16bit_weights_on_model_save"] = true;
  if (s.reduce_bucket_elements == kReduceBucketAuto) zero["reduce_bucket_size"] = "auto";
  if (s.reduce_bucket_elements > 0) zero["reduce_bucket_size"] = static_cast<int64_t>(s.reduce_bucket_elements);
  json config = {{"train_batch_size", p.micro_batch * p.grad_accum_steps * s.dp},
                 {"train_micro_batch_size_per_gpu", p.micro_batch},
                 {"gradient_accumulation_steps", p.grad_accum_steps},
                 {"gradient_clipping", 1.0},
                 {"zero_optimization", zero},
                 {"bf16", {{"enabled", p.precision == Precision::kBf16 || p.precision == Precision::kFp8}}},
                 {"fp16", {{"enabled", p.precision == Precision::kFp16}}}};
  if (p.precision == Precision::kFp16) {
    config["fp16"]["loss_scale"] = 0;  // dynamic loss scaling
    config["fp16"]["initial_scale_power"] = 16;
  }
  if (s.offload != Offload::kNone) {
    // ZeRO-Offload needs DeepSpeed's CPU Adam; "auto" takes the learning rate and betas from the
    // Hugging Face Trainer or Accelerate arguments this file is written for.
    config["optimizer"] = {
        {"type", "AdamW"},
        {"params", {{"lr", "auto"}, {"betas", "auto"}, {"eps", "auto"}, {"weight_decay", "auto"}}}};
  }
  return config;
}

namespace {

/// Megatron-Core's --pipeline-model-parallel-layout for `split` (docs/user-guide/features/pipeline_parallel_layout.md,
/// NVIDIA/Megatron-LM d98e8a64): stages split by '|', virtual stage k on pipeline rank k % pp as its chunk k / pp;
/// E the embedding, t a decoder layer, m an MTP layer, L the loss. A rank's layers fill its chunks as evenly as
/// they divide, the earlier chunks taking the remainder.
std::string PipelineLayout(const PipelineSplit& split, int pp, int interleave, int64_t mtp_layers) {
  std::vector<std::string> stages(static_cast<size_t>(pp) * interleave);
  for (int rank = 0; rank < pp; ++rank) {
    const int64_t layers = rank == 0 ? split.first : rank == pp - 1 ? split.last : split.middle;
    for (int chunk = 0; chunk < interleave; ++chunk) {
      const int64_t count = layers / interleave + (chunk < layers % interleave ? 1 : 0);
      stages[static_cast<size_t>(chunk) * pp + rank] = std::string(static_cast<size_t>(count), 't');
    }
  }
  stages.front().insert(0, "E");
  stages.back() += std::string(static_cast<size_t>(mtp_layers), 'm') + "L";
  return fmt::format("{}", fmt::join(stages, "|"));
}

/// Expert tensor parallelism where it differs from Megatron-Core's default (tp), MTP, and DeepSeek-V3's memory
/// savers as Megatron-LM's own flags (megatron/training/arguments.py at d98e8a64).
void AddDeepSeekArguments(const LaunchPlan& p, std::vector<std::string>& args) {
  const Strategy& s = p.strategy;
  if (s.etp > 0 && s.etp != s.tp) args.insert(args.end(), {"--expert-tensor-parallel-size", std::to_string(s.etp)});
  if (p.mtp_layers > 0) args.insert(args.end(), {"--mtp-num-layers", std::to_string(p.mtp_layers)});
  if (p.fp8_swiglu_input) args.push_back("--activation-func-fp8-input-store");
  if (p.bf16_optimizer_states)  // the precision-aware optimizer keeps AdamW's moments in bf16
    args.insert(args.end(), {"--use-precision-aware-optimizer", "--exp-avg-dtype", "bf16", "--exp-avg-sq-dtype", "bf16"});
}

/// Multi-head latent attention as Megatron-LM reads it (its MLA arguments; DeepSeek-V2-Lite's example in
/// examples/post_training/modelopt/conf at d98e8a64): the latent ranks and head widths, recovered from the
/// projections the config built (kv_a_proj yields the latent plus the shared rope key, kv_b_proj each head's
/// no-rope key and value), and the latents' norms.
void AddMlaArguments(const LayerSpec& layer, std::vector<std::string>& args) {
  if (!layer.attention.mla) return;
  auto out_of = [&](std::string_view name) -> int64_t {
    const auto l = std::ranges::find_if(layer.linears, [&](const Linear& x) { return x.name == name; });
    return l == layer.linears.end() ? 0 : l->out;
  };
  const AttentionShape& a = layer.attention;
  const int64_t nope = out_of("kv_b_proj") / a.num_heads - a.v_head_dim;
  const int64_t rope = a.qk_head_dim - nope;
  args.insert(args.end(), {"--multi-latent-attention", "--kv-lora-rank", std::to_string(out_of("kv_a_proj") - rope),
                           "--qk-head-dim", std::to_string(nope), "--qk-pos-emb-head-dim", std::to_string(rope),
                           "--v-head-dim", std::to_string(a.v_head_dim), "--qk-layernorm"});
  if (const int64_t q_lora = out_of("q_a_proj"); q_lora > 0)
    args.insert(args.end(), {"--q-lora-rank", std::to_string(q_lora)});
}

/// The MoE layers as Megatron-LM reads them: expert and dense widths apart, expert layers placed by a pattern
/// where some stay dense, and the dispatcher the estimate timed (Megatron-LM's default, allgather, is none of
/// them; TransformerConfig.moe_token_dispatcher_type, d98e8a64).
void AddMoeArguments(const ModelSpec& m, const Strategy& s, std::vector<std::string>& args) {
  const auto moe = std::ranges::find_if(m.layers, [](const LayerGroup& g) { return g.spec.is_moe(); });
  if (moe == m.layers.end()) return;
  const LayerSpec& expert = moe->spec;
  args.insert(args.end(), {"--num-experts", std::to_string(expert.num_experts), "--moe-router-topk",
                           std::to_string(expert.experts_per_token), "--moe-ffn-hidden-size",
                           std::to_string(expert.mlp_intermediate)});
  if (expert.shared_expert_intermediate > 0)
    args.insert(args.end(),
                {"--moe-shared-expert-intermediate-size", std::to_string(expert.shared_expert_intermediate)});
  // Group-limited routing, which the estimate's all-to-all counted in nodes reached per token.
  if (expert.expert_groups > 0)
    args.insert(args.end(), {"--moe-router-num-groups", std::to_string(expert.expert_groups), "--moe-router-group-topk",
                             std::to_string(expert.expert_groups_per_token)});
  if (!std::ranges::all_of(m.layers, [](const LayerGroup& g) { return g.spec.is_moe(); })) {
    std::vector<std::pair<bool, int64_t>> runs;  // (expert layers?, how many), merging groups split by attention
    for (const LayerGroup& g : m.layers) {
      if (!runs.empty() && runs.back().first == g.spec.is_moe()) runs.back().second += g.count;
      else runs.emplace_back(g.spec.is_moe(), g.count);
    }
    std::vector<std::string> pattern;
    for (const auto& [sparse, count] : runs) pattern.push_back(fmt::format("[{}]*{}", sparse ? 1 : 0, count));
    args.insert(args.end(), {"--moe-layer-freq", fmt::format("{}", fmt::join(pattern, "+"))});
  }
  args.insert(args.end(), {"--moe-token-dispatcher-type", ToString(s.moe_dispatcher)});
  if (s.moe_shared_expert_overlap) args.push_back("--moe-shared-expert-overlap");
}

}  // namespace

std::vector<std::string> MegatronArguments(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  if (s.zero >= 2 || s.offload != Offload::kNone)
    throw InputError("format", "megatron",
                     fmt::format("a plan Megatron-LM can run (this one uses zero={} offload={}, which are DeepSpeed "
                                 "or FSDP features: re-plan with training.framework megatron)",
                                 s.zero, ToString(s.offload)));
  if (s.pipeline_schedule != PipelineSchedule::k1F1B)
    throw InputError("strategy.pipeline_schedule", ToString(s.pipeline_schedule),
                     "a schedule Megatron-LM runs (1f1b; DualPipe is DeepSeek's own engine, zero-bubble schedules "
                     "run on forks such as sail-sg/zero-bubble-pipeline-parallelism)");
  std::vector<std::string> args;
  auto add = [&](const std::string& flag, auto value) {
    args.push_back(flag);
    args.push_back(fmt::format("{}", value));
  };
  // The model's shape, for catalog models (a config file's model must be described by the user).
  const ModelEntry* entry = FindModelEntry(p.hf_id.empty() ? p.model : p.hf_id);
  if (entry == nullptr) entry = FindModelEntry(p.model);
  int64_t num_layers = 0;
  if (entry != nullptr) {
    const ModelSpec m = FindModel(entry->id);
    const LayerSpec& layer = m.layers.front().spec;
    num_layers = m.num_layers;
    add("--num-layers", m.num_layers);
    add("--hidden-size", m.hidden_size);
    const auto dense = std::ranges::find_if(m.layers, [](const LayerGroup& g) { return !g.spec.is_moe(); });
    add("--ffn-hidden-size", (dense != m.layers.end() ? dense->spec : layer).mlp_intermediate);
    add("--num-attention-heads", layer.attention.num_heads);
    if (layer.attention.num_kv_heads > 0 && layer.attention.num_kv_heads < layer.attention.num_heads) {
      args.push_back("--group-query-attention");
      add("--num-query-groups", layer.attention.num_kv_heads);
    }
    add("--max-position-embeddings", std::max<int64_t>(m.max_position_embeddings, p.seq_len));
    if (layer.mlp == MlpKind::kGated) args.push_back("--swiglu");
    add("--normalization", m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
    if (!m.learned_position_embeddings) add("--position-embedding-type", "rope");
    if (!m.tie_word_embeddings) args.push_back("--untie-embeddings-and-output-weights");
    AddMlaArguments(layer, args);
    AddMoeArguments(m, s, args);
  }
  add("--seq-length", p.seq_len);
  add("--micro-batch-size", p.micro_batch);
  add("--global-batch-size", p.global_batch);
  // Evaluation as the plan timed it: eval-iters global batches every eval-interval steps; none otherwise, which
  // releases whose --eval-interval defaulted to 1000 (with --eval-iters 100) need said.
  if (p.eval_interval_steps > 0) {
    add("--eval-interval", p.eval_interval_steps);
    add("--eval-iters", (p.eval_sequences + p.global_batch - 1) / p.global_batch);
  } else {
    add("--eval-iters", 0);
  }
  add("--tensor-model-parallel-size", s.tp);
  add("--pipeline-model-parallel-size", s.pp);
  if (s.interleave > 1 && num_layers == 0)
    throw InputError("model", p.model, "a catalog model, so that the layers per virtual pipeline stage are known");
  if (num_layers > 0 && (s.pp > 1 || s.interleave > 1)) {
    // The same split ValidateScenario and the search accept; uneven stages name the first and last
    // stage's layers and the virtual stages per rank, as Megatron-Core asks for them.
    const auto split = SplitPipeline(num_layers, s.pp, s.interleave);
    if (!split)
      throw InputError("strategy.interleave", std::to_string(s.interleave),
                       fmt::format("a split of {} layers into pp {} stages Megatron-Core accepts", num_layers, s.pp));
    if (s.interleave > 1 && p.grad_accum_steps % s.pp != 0)
      throw InputError("strategy.interleave", std::to_string(s.interleave),
                       fmt::format("1, or micro-batches per step ({}) a multiple of pp ({})", p.grad_accum_steps, s.pp));
    // First and last counts the virtual stages cannot share evenly need an explicit layout (SplitPipeline).
    if (s.interleave > 1 && (split->first % s.interleave != 0 || split->last % s.interleave != 0)) {
      add("--pipeline-model-parallel-layout", PipelineLayout(*split, s.pp, s.interleave, p.mtp_layers));
    } else if (split->even()) {
      if (s.interleave > 1) add("--num-layers-per-virtual-pipeline-stage", num_layers / (s.pp * s.interleave));
    } else {
      add("--decoder-first-pipeline-num-layers", split->first);
      add("--decoder-last-pipeline-num-layers", split->last);
      if (s.interleave > 1) add("--num-virtual-stages-per-pipeline-rank", s.interleave);
    }
  }
  add("--context-parallel-size", s.cp);
  // Megatron-LM's default is the overlapped ring (--cp-comm-type p2p); TransformerEngine spells the others.
  if (s.cp > 1 && s.cp_comm != CpComm::kP2p) add("--cp-comm-type", ToString(s.cp_comm));
  if (s.ep > 1) add("--expert-model-parallel-size", s.ep);
  AddDeepSeekArguments(p, args);
  // The estimate hid the expert all-to-alls behind a paired micro-batch (combined 1F1B); Megatron-LM needs asking.
  if (ScheduledOverlap(GetFrameworkProfile(Framework::kMegatron).moe_overlap, s) == MoeOverlap::kA2aOverlap)
    args.push_back("--overlap-moe-expert-parallel-comm");
  if (s.sequence_parallel) args.push_back("--sequence-parallel");
  // The estimate hid TP collectives behind the GEMMs (Transformer Engine userbuffers); Megatron-LM needs asking.
  if (s.sequence_parallel && s.tp > 1 && s.tp_comm_overlap) args.push_back("--tp-comm-overlap");
  if (s.zero >= 1) args.push_back("--use-distributed-optimizer");
  // Megatron-LM overlaps the interleaved schedule's sends unless told not to, and then needs more than two stages
  // (megatron/training/arguments.py, d98e8a64: two sends and receives between the same two ranks per batch).
  if (s.interleave > 1 && !s.pp_comm_overlap) {
    if (s.pp <= 2)
      throw InputError("strategy.pp_comm_overlap", "false",
                       fmt::format("true with interleave {} on pp {} (Megatron-LM runs the interleaved schedule "
                                   "without overlapped sends only on more than 2 pipeline stages)",
                                   s.interleave, s.pp));
    args.push_back("--no-overlap-p2p-communication");
  }
  if (s.recompute == Recompute::kSelective) {
    add("--recompute-granularity", "selective");
  } else if (s.recompute == Recompute::kFull) {
    add("--recompute-granularity", "full");
    add("--recompute-method", "uniform");
    add("--recompute-num-layers", 1);
  }
  switch (p.precision) {
    case Precision::kBf16: args.push_back("--bf16"); break;
    case Precision::kFp16: args.push_back("--fp16"); break;
    case Precision::kFp8:
      args.push_back("--bf16");
      add("--fp8-format", "hybrid");  // Transformer Engine: E4M3 forward, E5M2 gradients
      break;
    case Precision::kFp32: break;
  }
  if (p.optimizer != Optimizer::kAdamW && p.optimizer != Optimizer::kSgdMomentum)
    throw InputError("training.optimizer", ToString(p.optimizer), "adamw or sgd with Megatron-LM");
  add("--optimizer", p.optimizer == Optimizer::kAdamW ? "adam" : "sgd");  // Megatron's adam is AdamW
  return args;
}

/// LitGPT's CLI as Lightning-AI/litgpt @00af8b0d defines it: the subcommands of litgpt/__main__.py, the
/// setup() arguments of litgpt/finetune/{full,lora}.py and litgpt/pretrain.py, and TrainArgs
/// (litgpt/args.py) as --train.*. The model is the Hugging Face id, which finetune downloads to checkpoints/
/// (auto_download_checkpoint) and pretrain resolves to its config (Config.from_name). One device runs
/// strategy "auto" and several run FSDP with activation checkpointing on every Block, so neither takes a
/// recomputation flag.
std::vector<std::string> LitGptCommand(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  const char* subcommand = p.method == Method::kPretrain ? "pretrain"
                           : p.method == Method::kFull   ? "finetune_full"
                           : IsAdapterMethod(p.method)   ? "finetune_lora"
                                                         : nullptr;
  if (subcommand == nullptr)
    throw InputError("training.method", ToString(p.method), "pretrain, full, lora or qlora with LitGPT");
  if (s.offload != Offload::kNone)
    throw InputError("strategy.offload", ToString(s.offload),
                     "none with LitGPT (its FSDPStrategy runs with cpu_offload=False)");
  const char* precision = p.precision == Precision::kBf16   ? "bf16-true"
                          : p.precision == Precision::kFp16 ? "16-true"
                          : p.precision == Precision::kFp32 ? "32-true"
                                                            : nullptr;
  if (precision == nullptr)
    throw InputError("training.precision", ToString(p.precision), "bf16, fp16 or fp32 with LitGPT");
  if (p.liger || p.compile)
    throw InputError(p.liger ? "training.liger" : "training.compile", "true",
                     "false with LitGPT (its finetune and pretrain scripts take no kernel replacement)");
  std::vector<std::string> cmd = {"litgpt", subcommand, p.hf_id.empty() ? p.model : p.hf_id};
  auto add = [&](const std::string& flag, auto value) {
    cmd.push_back(flag);
    cmd.push_back(fmt::format("{}", value));
  };
  add("--devices", std::min(p.gpus, p.gpus_per_node));
  add("--num_nodes", p.nodes);
  add("--precision", precision);
  if (p.method == Method::kQlora) {
    // finetune/lora.py raises NotImplementedError for --quantize on more than one device.
    if (p.gpus > 1)
      throw InputError("hardware.gpus", std::to_string(p.gpus), "1 for a LitGPT QLoRA plan (no multi-GPU quantization)");
    add("--quantize", "bnb.nf4");  // its optimizer is then bitsandbytes PagedAdamW (instantiate_bnb_optimizer)
  } else if (p.optimizer != Optimizer::kAdamW) {
    // instantiate_torch_optimizer imports a dotted class path; torch.optim.AdamW is the default.
    const char* optimizer = p.optimizer == Optimizer::kAdamW8bit        ? "bitsandbytes.optim.AdamW8bit"
                            : p.optimizer == Optimizer::kPagedAdamW     ? "bitsandbytes.optim.PagedAdamW"
                            : p.optimizer == Optimizer::kPagedAdamW8bit ? "bitsandbytes.optim.PagedAdamW8bit"
                                                                        : nullptr;
    if (optimizer == nullptr)
      throw InputError("training.optimizer", ToString(p.optimizer),
                       "adamw, adamw8bit, paged_adamw or paged_adamw8bit with LitGPT");
    add("--optimizer", optimizer);
  }
  if (IsAdapterMethod(p.method) && p.lora_rank > 0) add("--lora_r", p.lora_rank);
  add("--train.micro_batch_size", p.micro_batch);
  add("--train.global_batch_size", p.global_batch);  // across ranks: accumulation = global / (devices x nodes x micro)
  add("--train.max_seq_length", p.seq_len);
  if (p.method == Method::kPretrain && p.tokens > 0) add("--train.max_tokens", fmt::format("{:.0f}", p.tokens));
  return cmd;
}

/// torchtitan's train.py with overrides of its TOML config as pytorch/torchtitan @04133643 defines them
/// (torchtitan/config_manager.py: --training.*, --activation_checkpoint.mode). It pre-trains with FSDP2, TP and
/// PP; there is no gradient accumulation (the global batch is batch_size x data_parallel_degree), no adapter,
/// no context parallelism and no offloading.
std::vector<std::string> TorchtitanCommand(const LaunchPlan& p) {
  const Strategy& s = p.strategy;
  if (IsAdapterMethod(p.method) || p.method == Method::kFreeze)
    throw InputError("training.method", ToString(p.method), "pretrain or full with torchtitan");
  if (p.grad_accum_steps > 1)
    throw InputError("training.global_batch", std::to_string(p.global_batch),
                     fmt::format("micro-batch x dp = {} with torchtitan (it has no gradient accumulation)",
                                 p.micro_batch * s.dp));
  if (s.cp > 1) throw InputError("strategy.cp", std::to_string(s.cp), "1 with torchtitan");
  if (s.offload != Offload::kNone)
    throw InputError("strategy.offload", ToString(s.offload), "none with torchtitan");
  std::vector<std::string> cmd = {"train.py", "--job.config_file", "CONFIG.toml"};
  auto add = [&](const std::string& flag, const auto& value) {
    cmd.push_back(flag);
    cmd.push_back(fmt::format("{}", value));
  };
  add("--training.batch_size", p.micro_batch);
  add("--training.seq_len", p.seq_len);
  add("--training.data_parallel_degree", s.dp);
  add("--training.tensor_parallel_degree", s.tp);
  add("--training.pipeline_parallel_degree", s.pp);
  add("--activation_checkpoint.mode", ToString(s.recompute));
  if (p.compile) cmd.push_back("--training.compile");
  return cmd;
}

std::vector<std::string> EngineCommand(const LaunchPlan& p, const LaunchOptions& o) {
  const Strategy& s = p.strategy;
  if (p.framework == Framework::kMegatron) {
    std::vector<std::string> cmd = {MegatronScript(o)};
    for (auto& a : MegatronArguments(p)) cmd.push_back(a);
    return cmd;
  }
  // Evaluation is written in Megatron-LM's and the HF Trainer's arguments; the recipe engines name theirs in
  // configs this launch does not write.
  if (p.eval_interval_steps > 0 && (p.framework == Framework::kTorchtitan || p.framework == Framework::kTorchtune ||
                                    p.framework == Framework::kLitGpt))
    throw InputError("training.eval_interval_steps", std::to_string(p.eval_interval_steps),
                     fmt::format("0 with framework {}: launch writes evaluation for megatron and Hugging Face Trainer "
                                 "scripts (hf, deepspeed, fsdp, unsloth); set it in the recipe's own config",
                                 ToString(p.framework)));
  if (p.framework == Framework::kTorchtitan) return TorchtitanCommand(p);
  if (s.tp > 1 || s.pp > 1 || s.cp > 1)
    throw InputError("training.framework", ToString(p.framework),
                     "megatron for a plan with tensor, pipeline or context parallelism");
  if (p.framework == Framework::kLitGpt) return LitGptCommand(p);
  if (p.framework == Framework::kTorchtune) {
    // torchtune recipes take key=value overrides of their YAML config.
    std::vector<std::string> cmd = {
        IsAdapterMethod(p.method) ? "lora_finetune_distributed" : "full_finetune_distributed", "--config",
        "CONFIG.yaml", fmt::format("batch_size={}", p.micro_batch),
        fmt::format("gradient_accumulation_steps={}", p.grad_accum_steps),
        fmt::format("enable_activation_checkpointing={}", s.recompute != Recompute::kNone ? "True" : "False"),
        fmt::format("dtype={}", p.precision == Precision::kFp32 ? "fp32" : "bf16")};
    if (p.compile) cmd.push_back("compile=True");
    return cmd;
  }
  // Hugging Face TrainingArguments flags (Trainer, TRL and Unsloth scripts).
  std::vector<std::string> cmd = {o.script, "--per_device_train_batch_size", std::to_string(p.micro_batch),
                                  "--gradient_accumulation_steps", std::to_string(p.grad_accum_steps)};
  if (p.precision == Precision::kBf16 || p.precision == Precision::kFp8) cmd.push_back("--bf16");
  if (p.precision == Precision::kFp16) cmd.push_back("--fp16");
  if (s.recompute != Recompute::kNone) cmd.push_back("--gradient_checkpointing");
  // TrainingArguments.optim names, by Optimizer.
  static constexpr const char* kOptim[] = {"adamw_torch", "adamw_bnb_8bit",    "sgd",
                                           "adafactor",   "paged_adamw_32bit", "paged_adamw_8bit"};
  static_assert(std::size(kOptim) == static_cast<size_t>(Optimizer::kPagedAdamW8bit) + 1);
  cmd.push_back("--optim");
  cmd.push_back(kOptim[static_cast<int>(p.optimizer)]);
  if (p.group_by_length) cmd.push_back("--group_by_length");
  if (p.eval_interval_steps > 0) {
    cmd.insert(cmd.end(), {"--eval_strategy", "steps", "--eval_steps", std::to_string(p.eval_interval_steps),
                           "--per_device_eval_batch_size", std::to_string(p.micro_batch)});
  }
  if (p.liger) cmd.push_back("--use_liger_kernel");
  if (p.compile) cmd.push_back("--torch_compile");
  if (p.dataloader_workers > 0) {
    cmd.push_back("--dataloader_num_workers");
    cmd.push_back(std::to_string(p.dataloader_workers));
  }
  if (UsesDeepSpeed(p)) {
    cmd.push_back("--deepspeed");
    cmd.push_back(o.deepspeed_config);
  } else if (p.framework == Framework::kFsdp && p.gpus > 1) {
    std::string fsdp = s.zero >= 3 ? "full_shard" : s.zero == 2 ? "shard_grad_op" : "no_shard";
    if (s.offload != Offload::kNone) fsdp += " offload";
    cmd.push_back("--fsdp");
    cmd.push_back(fsdp + " auto_wrap");
  }
  return cmd;
}

std::string RenderLaunch(const LaunchPlan& p, LaunchFormat format, const LaunchOptions& o) {
  if (SelfLaunched(p) && (format == LaunchFormat::kDeepSpeed || format == LaunchFormat::kAccelerate))
    throw InputError("format", ToString(format),
                     "torchrun (a script), slurm or k8s for a LitGPT plan (litgpt starts its processes through "
                     "Lightning Fabric, without DeepSpeed or Accelerate)");
  switch (format) {
    case LaunchFormat::kDeepSpeed:
      return DeepSpeedConfig(p).dump(2) + "\n";
    case LaunchFormat::kAccelerate:
      return RenderAccelerate(p);
    case LaunchFormat::kSlurm:
      return RenderSlurm(p, o);
    case LaunchFormat::kK8s:
      return RenderKubernetes(p, o);
    case LaunchFormat::kMegatron: {
      LaunchPlan megatron = p;
      megatron.framework = Framework::kMegatron;
      std::string out = fmt::format("#!/bin/bash\n# {}\nset -euo pipefail\nMEGATRON_ARGS=(\n", Summary(p));
      const std::vector<std::string> args = MegatronArguments(megatron);
      for (const auto& line : PairedArgs(args)) out += "  " + line + "\n";
      out += ")\n# add the data, tokenizer and learning-rate arguments of your run\n";
      const std::string rendezvous = ManualRendezvous(p, o);
      return out + LauncherLine(Launcher(megatron, std::to_string(p.nodes), rendezvous, o.job_name)) + " " +
             ShellQuote(MegatronScript(o)) + " \"${MEGATRON_ARGS[@]}\"\n";
    }
    case LaunchFormat::kTorchrun: {
      const std::string rendezvous = ManualRendezvous(p, o);
      std::string out = fmt::format("#!/bin/bash\n# {}\n", Summary(p));
      if (p.nodes > 1)
        out += fmt::format("# run on each of the {} nodes with MASTER_ADDR set to the first one{}\n", p.nodes,
                           SelfLaunched(p) ? " and NODE_RANK to the node's index" : "");
      if (UsesDeepSpeed(p))
        out += fmt::format("# {} comes from: trainplan launch PLAN.json --format deepspeed -o {}\n", o.deepspeed_config,
                           o.deepspeed_config);
      const std::vector<std::string> launcher = SelfLaunched(p)
                                                    ? FabricNodeEnvironment(p, o)
                                                    : Launcher(p, std::to_string(p.nodes), rendezvous, o.job_name);
      return out + "set -euo pipefail\n" + CommandLine(launcher, EngineCommand(p, o)) + "\n";
    }
  }
  return "";
}

}  // namespace trainplan
