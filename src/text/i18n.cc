#include "text/i18n.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace trainplan {

namespace {

struct Entry {
  std::string_view key, en, zh;
};

// Chinese terms as the field uses them in China (显存, 张量并行, 梯度累积, 算力利用率, ...); identifiers, numbers
// and units stay as they are. Named arguments let each language order them its own way.
constexpr Entry kPhrases[] = {
    // Memory terms (their English names are the JSON keys).
    {"mem.weights", "weights", "权重"},
    {"mem.master_weights", "master_weights", "主权重"},
    {"mem.gradients", "gradients", "梯度"},
    {"mem.optimizer_states", "optimizer_states", "优化器状态"},
    {"mem.activations", "activations", "激活值"},
    {"mem.logits", "logits", "logits"},
    {"mem.comm_buffers", "comm_buffers", "通信缓冲区"},
    {"mem.runtime", "runtime", "运行时开销"},
    {"mem.fragmentation", "fragmentation", "显存碎片"},
    // Step-time terms (their English names are the JSON keys).
    {"time.compute", "compute", "计算"},
    {"time.memory_bound", "memory_bound", "访存受限"},
    {"time.recompute", "recompute", "激活重计算"},
    {"time.tp_comm", "tp_comm", "张量并行通信"},
    {"time.pp_comm", "pp_comm", "流水线并行通信"},
    {"time.dp_comm", "dp_comm", "数据并行通信"},
    {"time.ep_comm", "ep_comm", "专家并行通信"},
    {"time.moe_router", "moe_router", "MoE 路由"},
    {"time.moe_permute", "moe_permute", "MoE token 重排"},
    {"time.moe_imbalance", "moe_imbalance", "MoE 负载不均"},
    {"time.cp_comm", "cp_comm", "上下文并行通信"},
    {"time.pipeline_bubble", "pipeline_bubble", "流水线气泡"},
    {"time.offload", "offload", "卸载"},
    {"time.activation_offload", "activation_offload", "激活值卸载"},
    {"time.paged_optimizer", "paged_optimizer", "分页优化器"},
    {"time.dora", "dora", "DoRA"},
    {"time.dataloader", "dataloader", "数据加载"},
    {"time.straggler", "straggler", "慢节点"},
    {"time.fp8_casts", "fp8_casts", "fp8 类型转换"},
    {"time.mtp", "mtp", "MTP"},
    // list separators
    {"list.comma", ", ", "，"},
    {"list.semicolon", "; ", "；"},
    // confidence of an estimate
    {"conf.line", "{level}: {reasons}", "{level}：{reasons}"},
    {"conf.low", "low", "低"},
    {"conf.medium", "medium", "中"},
    {"conf.high", "high", "高"},
    {"conf.dense", "dense model, datasheet figures, calibrated efficiency model", "稠密模型，数据手册参数，已校准的效率模型"},
    {"conf.generic_model", "generic model shape", "通用模型形状"},
    {"conf.low_gpu_data", "GPU datasheet figures of low confidence", "GPU 数据手册参数可信度低"},
    {"conf.secondary_gpu_data", "GPU figures partly from secondary sources", "GPU 参数部分来自二手来源"},
    {"conf.non_nvidia", "efficiency model calibrated on NVIDIA measurements", "效率模型基于 NVIDIA 实测校准"},
    {"conf.library_dependent", "4-bit and fused-kernel speeds vary with library versions",
     "4-bit 与融合算子的速度随库版本而变"},
    {"conf.large_scale", "at this scale network congestion and outlier GPUs are not modelled",
     "这个规模下未建模网络拥塞和异常慢卡"},
    // changes that make a job fit
    {"fit.full_recompute", "full activation recomputation", "完全激活重计算"},
    {"fit.optimizer_offload", "optimizer offloaded to the host (ZeRO-{zero}) with full recomputation",
     "优化器卸载到主机内存（ZeRO-{zero}），并完全激活重计算"},
    {"fit.adamw_8bit", "8-bit AdamW with full recomputation", "8-bit AdamW，并完全激活重计算"},
    {"fit.method", "method {method} (rank {rank}) with full recomputation",
     "改用 {method}（rank {rank}），并完全激活重计算"},
    // fixed costs of a job
    {"fixed.line", "start-up {startup} ({parts}), final checkpoint {checkpoint}",
     "启动 {startup}（{parts}），最终检查点 {checkpoint}"},
    {"fixed.provisioning", "provisioning {duration}", "资源开通 {duration}"},
    {"fixed.image_pull", "image pull {duration}", "拉取镜像 {duration}"},
    {"fixed.process_start", "process start {duration}", "进程启动 {duration}"},
    {"fixed.weights_load", "weights load {duration}", "加载权重 {duration}"},
    {"fixed.nccl_init", "NCCL init {duration}", "NCCL 初始化 {duration}"},
    {"fixed.final_checkpoint", "final checkpoint {duration}", "最终检查点 {duration}"},
    {"fixed.compile", "torch.compile {duration}", "torch.compile 编译 {duration}"},
    // estimate
    {"est.header", "{model}: {method} on {gpus} x {gpu} ({per_node} per node, {nodes} node{plural})",
     "{model}：{method}，{gpus} x {gpu}（每节点 {per_node} 张，共 {nodes} 个节点）"},
    {"est.strategy",
     "strategy: tp={tp} pp={pp} dp={dp} cp={cp} ep={ep} zero={zero} recompute={recompute} seq_parallel={sp} "
     "offload={offload} flash={flash} interleave={interleave}",
     "并行策略：tp={tp} pp={pp} dp={dp} cp={cp} ep={ep} zero={zero} recompute={recompute} seq_parallel={sp} "
     "offload={offload} flash={flash} interleave={interleave}"},
    {"est.batch",
     "batch: micro {micro} x seq {seq} , global {global} sequences ({accum} accumulation steps), {precision} "
     "{optimizer} {framework}",
     "批大小：微批 {micro} x 序列长度 {seq}，全局批 {global} 条序列（梯度累积 {accum} 步），{precision} {optimizer} "
     "{framework}"},
    {"est.params", "parameters: total {total_h} ({total}), trainable {trainable}, active/token {active}",
     "参数量：总计 {total_h}（{total}），可训练 {trainable}，每 token 激活 {active}"},
    {"est.vision", "vision tower (frozen) {human} ({count}): in the checkpoint and on the first stage, not trained",
     "视觉塔（冻结）{human}（{count}）：在检查点中，放在第一个流水线阶段，不参与训练"},
    {"est.memory_heading", "memory per GPU (busiest GPU):", "每卡显存（最忙的一张卡）："},
    {"est.total", "total", "合计"},
    {"est.of_capacity", "of {capacity:.1f} GiB -> {verdict}", "容量 {capacity:.1f} GiB -> {verdict}"},
    {"est.does_not_fit", "DOES NOT FIT ({pct:.0f}% of capacity)", "显存放不下（占容量的 {pct:.0f}%）"},
    {"est.fits_paging", "fits only by paging optimizer states to host RAM (slower steps)",
     "只有把优化器状态分页到主机内存才放得下（单步更慢）"},
    {"est.fits_but", "fits, but {edge}", "放得下，但{edge}"},
    {"est.fits_load_edge", "fits, but loading the weights is at the edge", "放得下，但加载权重时处于显存边缘"},
    {"est.fits", "fits ({pct:.0f}% usable: {usable:.1f} GiB)", "放得下（可用 {pct:.0f}%：{usable:.1f} GiB）"},
    {"est.host_ram_needed", "host RAM needed", "所需主机内存"},
    {"est.per_node", "{amount:>8} per node", "每节点 {amount:>8}"},
    {"est.host_given", " of {limit} given -> {verdict}", "，给定 {limit} -> {verdict}"},
    {"est.host_does_not_fit", "DOES NOT FIT the host", "主机内存放不下"},
    {"est.host_fits", "fits", "放得下"},
    {"est.pageable", "pageable", "可分页"},
    {"est.pageable_line",
     "of the total: paged optimizer states, counted by nvidia-smi while resident, not by "
     "torch.cuda.memory_allocated{spill}",
     "含在合计中：分页的优化器状态，驻留时计入 nvidia-smi，不计入 torch.cuda.memory_allocated{spill}"},
    {"est.pageable_spill", "; {gib:.2f} GiB page to host RAM", "；{gib:.2f} GiB 分页到主机内存"},
    {"est.load_peak", "load-time peak", "加载峰值"},
    {"est.load_peak_line", "loading the weights{binds}", "加载权重时{binds}"},
    {"est.load_peak_binds", " (above the step peak: the fit is judged on it)", "（高于单步峰值：以它判断能否放下）"},
    {"est.host_at_load", "host RAM at load", "加载时主机内存"},
    {"est.host_at_load_line", "rank 0 reads the full state dict before sharding it{verdict}",
     "rank 0 在切分前读入完整的 state dict{verdict}"},
    {"est.host_at_load_over", " -> DOES NOT FIT the host", " -> 主机内存放不下"},
    {"est.options_heading",
     "options on the same GPUs (`trainplan plan` also searches more or other GPUs and TP/PP):",
     "同样 GPU 上的可选做法（`trainplan plan` 还会搜索更多或其他 GPU 以及 TP/PP）："},
    {"est.option_per_gpu", "{gib} per GPU{host}", "每卡 {gib}{host}"},
    {"est.option_host", ", host RAM {amount}", "，主机内存 {amount}"},
    {"est.step_time", "step time {s:.3f} s:", "单步时间 {s:.3f} s："},
    {"est.throughput",
     "throughput: {tps:.0f} tokens/s ({per_gpu:.0f} per GPU), {model_tflops:.1f} model TFLOP/s per GPU, "
     "{hw_tflops:.1f} hardware TFLOP/s per GPU",
     "吞吐：{tps:.0f} tokens/s（每卡 {per_gpu:.0f}），每卡模型算力 {model_tflops:.1f} TFLOP/s，每卡硬件算力 "
     "{hw_tflops:.1f} TFLOP/s"},
    {"est.mfu", "MFU {mfu:.1f}%, HFU {hfu:.1f}%", "算力利用率 MFU {mfu:.1f}%，HFU {hfu:.1f}%"},
    {"est.total_tokens", "total: {tokens:.3g} tokens in {steps:.0f} steps: {duration} ({gpu_hours:.0f} GPU-hours)",
     "总计：{tokens:.3g} tokens，{steps:.0f} 步：{duration}（{gpu_hours:.0f} GPU 小时）"},
    {"est.total_one_step", "total: no --tokens given, so one step only: {duration}",
     "总计：未给出 --tokens，只计一步：{duration}"},
    {"est.training_fixed", "training {training} + fixed {fixed}: {why}", "训练 {training} + 固定开销 {fixed}：{why}"},
    {"est.assumptions", "assumptions:", "假设："},
    {"warning", "warning: {text}", "警告：{text}"},
    {"note", "note: {text}", "注意：{text}"},
    {"est.confidence", "confidence: {text}", "可信度：{text}"},
    // recommend and review (Markdown; the text report is the same without its markup)
    {"kind.cloud", "cloud", "云上租用"},
    {"kind.on-prem", "on-prem", "自建"},
    {"kind.hybrid", "hybrid", "混合"},
    {"rec.dedicated", " (dedicated)", "（专属）"},
    {"rec.option_title", "{kind}{dedicated}: {gpus} x {gpu}", "{kind}{dedicated}：{gpus} x {gpu}"},
    {"rec.title", "# Recommendation: {model} ({method}), {tokens}", "# 推荐方案：{model}（{method}），{tokens}"},
    {"rec.tokens", "{tokens:.3g} tokens", "{tokens:.3g} tokens"},
    {"rec.one_step", "one step", "单步"},
    {"rec.scenario",
     "Model: {params:.2f} B parameters. Scenario: usage {usage}, data sensitivity {sensitivity}, region {region}, "
     "deadline {deadline}, budget {budget}, electricity {symbol}{electricity:.3f}/kWh, PUE {pue:.2f}.",
     "模型：{params:.2f} B 参数。场景：使用方式 {usage}，数据敏感度 {sensitivity}，地区 {region}，截止时间 {deadline}，"
     "预算 {budget}，电价 {symbol}{electricity:.3f}/kWh，PUE {pue:.2f}。"},
    {"rec.no_budget", "none", "无"},
    {"rec.no_option", "**No option:** {why}", "**没有可行方案：** {why}"},
    {"rec.works", "works:", "可行："},
    {"rec.fails", "fails:", "不可行："},
    {"rec.options", "## Options", "## 方案"},
    {"rec.table_head", "| # | option | plan | time | total cost | suits |", "| # | 方案 | 并行计划 | 时间 | 总成本 | 是否合适 |"},
    {"yes", "yes", "是"},
    {"no", "no", "否"},
    {"rec.cost", "- cost: {text}", "- 成本：{text}"},
    {"rec.memory",
     "- memory per GPU {mem:.1f} / {capacity:.1f} GiB, MFU {mfu:.0f}%, goodput {goodput:.1f}%",
     "- 每卡显存 {mem:.1f} / {capacity:.1f} GiB，算力利用率 MFU {mfu:.0f}%，有效训练时间占比 {goodput:.1f}%"},
    {"rec.reliability", "## Reliability (first option)", "## 可靠性（第一个方案）"},
    {"rec.interruptions",
     "- {rate:.3g} unexpected interruptions per GPU-hour (Llama 3 405B: 419 in 54 days on 16,384 H100s): MTBF "
     "{mtbf} on {gpus} GPUs, {expected:.2f} interruptions expected",
     "- 每 GPU 小时 {rate:.3g} 次意外中断（Llama 3 405B：16,384 张 H100 上 54 天 419 次）：{gpus} 张卡的 MTBF 为 "
     "{mtbf}，预计中断 {expected:.2f} 次"},
    {"rec.checkpoint", "- checkpoint {gb:.1f} GB, written in {write:.0f} s; restart {restart:.0f} s",
     "- 检查点 {gb:.1f} GB，写入 {write:.0f} s；断点续训重启 {restart:.0f} s"},
    {"rec.checkpoint_every",
     "- checkpoint every {interval} (Daly; Young: {young}); expected lost time {lost}, goodput {goodput:.2f}%",
     "- 每 {interval} 保存一次检查点（Daly；Young：{young}）；预计损失时间 {lost}，有效训练时间占比 {goodput:.2f}%"},
    {"rec.charts", "## Charts", "## 图表"},
    {"rec.assumptions", "## Assumptions", "## 假设"},
    {"rec.html_title", "trainplan recommendation: {model}", "trainplan 推荐方案：{model}"},
    {"bom.title", "**Bill of materials** ({nodes} x {node_class} node, {gpus} GPUs each; break-even {break_even})",
     "**物料清单**（{nodes} 台 {node_class} 节点，每台 {gpus} 张卡；盈亏平衡 {break_even}）"},
    {"bom.platform", "Platform: {text}.", "平台：{text}。"},
    {"bom.table_head", "| part | choice | why |", "| 部件 | 选型 | 原因 |"},
    {"bom.network", "network", "网络"},
    {"bom.power", "power", "供电"},
    {"bom.cooling", "cooling", "散热"},
    {"bom.price_per_node", "price per node", "每节点价格"},
    {"bom.price_once", "price, once", "一次性价格"},
    {"bom.not_priced", "not priced", "未定价"},
    {"bom.no_citable_price", "no citable price", "没有可引用的公开价格"},
    {"rev.title", "# Review: {build}", "# 配置评审：{build}"},
    {"rev.job", "Job: {model} ({method}).", "任务：{model}（{method}）。"},
    {"rev.job_line", "Job: {model} ({method})", "任务：{model}（{method}）"},
    {"rev.best", "Best plan on this build: {plan}, {duration}", "这套配置上的最佳计划：{plan}，{duration}"},
    {"rev.does_not_run", "Does not run: {why}", "无法运行：{why}"},
    {"rev.table_head", "| area | level | finding | change |", "| 方面 | 级别 | 发现 | 建议修改 |"},
    {"rev.html_title", "trainplan review: {build}", "trainplan 配置评审：{build}"},
    {"rev.text_title", "Review: {build}", "配置评审：{build}"},
    // plan
    {"plan.header", "{model}: {method} of {tokens:.3g} tokens, seq {seq}",
     "{model}：{method}，{tokens:.3g} tokens，序列长度 {seq}"},
    {"plan.none", "NO PLAN: {why}", "没有可行方案：{why}"},
    {"plan.col.gpu", "gpu", "GPU"},
    {"plan.col.gpus", "gpus", "卡数"},
    {"plan.col.framework", "framework", "框架"},
    {"plan.col.strategy", "strategy", "并行策略"},
    {"plan.col.mem", "mem/GPU", "每卡显存"},
    {"plan.col.host", "host RAM", "主机内存"},
    {"plan.col.mfu", "MFU", "MFU"},
    {"plan.col.time", "time", "时间"},
    {"plan.col.fixed", "fixed", "固定开销"},
    {"plan.col.cost", "cost {code}", "成本 {code}"},
    {"plan.no_price", "no price", "无价格"},
    {"plan.edge",
     "! at the edge: above the {pct:.0f}% of GPU memory a plan may fill (--usable-memory); ranked after every plan "
     "that keeps the headroom",
     "! 处于显存边缘：超过方案可占用显存的 {pct:.0f}%（--usable-memory）；排在所有留有余量的方案之后"},
    {"plan.why", "why #1: {why}", "为何选 #1：{why}"},
    {"plan.pareto", "time vs cost (Pareto front, fastest first):", "时间与成本（帕累托前沿，最快的在前）："},
    {"plan.alternatives", "alternatives:", "其他选择："},
    {"plan.searched",
     "searched {enumerated} candidates ({evaluated} evaluated) in {seconds:.3f} s on {threads} threads: {rate:.2f} M "
     "evaluations/s",
     "搜索了 {enumerated} 个候选（评估 {evaluated} 个），用时 {seconds:.3f} s，{threads} 个线程：每秒 {rate:.2f} M 次评估"},
};

}  // namespace

Lang ParseLang(const std::string& value, const std::string& field) {
  std::string n;
  for (char c : value) n += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "en") return Lang::kEn;
  if (n == "zh" || n == "zh-cn") return Lang::kZh;
  throw InputError(field, value, "en, zh or zh-CN");
}

std::string_view Phrase(Lang lang, std::string_view key) {
  const auto* end = std::end(kPhrases);
  const auto* it = std::find_if(std::begin(kPhrases), end, [&](const Entry& e) { return e.key == key; });
  if (it == end) throw InternalError(fmt::format("no phrase under the key '{}'", key));
  return lang == Lang::kZh ? it->zh : it->en;
}

std::vector<std::string_view> PhraseKeys() {
  std::vector<std::string_view> keys;
  for (const Entry& e : kPhrases) keys.push_back(e.key);
  return keys;
}

}  // namespace trainplan
