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
    // an option's reasons
    {"rec.at_least", "at least ", "至少 "},
    {"rec.why.buy_fewest", "buy the fewest GPUs that meet the deadline: {gpus} in {nodes} node(s), done in {done}",
     "购买满足截止时间的最少 GPU：{gpus}，共 {nodes} 个节点，{done} 完成"},
    {"rec.why.no_purchase_price", "no citable purchase price for {gpu}: give one in recommend.purchase_prices",
     "{gpu} 没有可引用的采购单价：请在 recommend.purchase_prices 中给出"},
    {"rec.why.pays_back",
     "pays back against renting the same runs on {gpu} after {at_least}{months:.1f} months ({rented} a month rented, "
     "{owned} a month to run it); the horizon is {horizon:.0f} months",
     "与云上租用 {gpu} 跑同样的任务相比，{at_least}{months:.1f} 个月回本（租用每月 {rented}，自建每月运行成本 {owned}）；"
     "评估期为 {horizon:.0f} 个月"},
    {"rec.why.never_pays_back", "renting the same runs never costs more per month than owning the GPUs",
     "云上租用跑同样的任务，每月成本始终不高于自建"},
    {"rec.why.no_rental_price",
     "break-even unknown: {gpu} has no rental price to compare with; give one in recommend.prices",
     "盈亏平衡未知：{gpu} 没有可比较的租用单价；请在 recommend.prices 中给出"},
    {"rec.why.buy_once", "a single run: buying costs {at_least}{buy} against {rent} to rent the same run",
     "只运行一次：购买需要 {at_least}{buy}，而云上租用跑同样的任务需要 {rent}"},
    {"rec.why.data_stays_local", "sensitive data stays on premises", "敏感数据留在本地机房"},
    {"rec.platform", "platform: {provider}{instance}", "平台：{provider}{instance}"},
    {"rec.platform_unpriced", " (price unknown: {note}; {source}, {date})", "（单价未知：{note}；{source}，{date}）"},
    {"rec.platform_monthly", " (monthly subscription {rate})", "（包月 {rate}）"},
    {"rec.storage", "; checkpoints and data on {name}", "；检查点和数据存放在 {name}"},
    {"rec.storage_priced", " at {rate} ({gb:.0f} GB a checkpoint: {month} a month; {source}, {date})",
     "，单价 {rate}（每个检查点 {gb:.0f} GB：每月 {month}；{source}，{date}）"},
    {"rec.storage_unpriced", " (price unknown: {note})", "（单价未知：{note}）"},
    {"rec.why.dedicated", "sensitive data: shared public cloud excluded; dedicated/bare-metal hosts only",
     "敏感数据：不用共享公有云，只用专属/裸金属主机"},
    {"rec.why.shared_price", " (the catalog price is for shared instances, a lower bound)",
     "（目录单价是共享实例的价格，只是下限）"},
    {"rec.why.dedicated_offer", ": {provider} offers {offer}", "：{provider} 提供 {offer}"},
    {"rec.why.rent", "rent {gpus} at {rate}, done in {done}", "云上租用 {gpus}，单价 {rate}，{done} 完成"},
    {"rec.why.rent_unpriced",
     "rent {gpus}, done in {done}; price unknown: no citable rental price, give one in recommend.prices (in {code})",
     "云上租用 {gpus}，{done} 完成；单价未知：没有可引用的租用单价，请在 recommend.prices 中给出（以 {code} 计）"},
    {"rec.why.one_off", "a one-off run: {done} of rental, nothing bought to amortize",
     "一次性任务：租用 {done}，无需购买硬件来摊销"},
    {"rec.why.recurring", "{runs:.4g} runs over {months:.0f} months: {how}",
     "{months:.0f} 个月内运行 {runs:.4g} 次：{how}"},
    {"rec.why.reserved",
     "the runs keep the GPUs busy enough that a 1-year reservation ({pct:.0f}% off) costs less than {hours:.0f} hours "
     "on demand",
     "这些任务让 GPU 足够忙，1 年期预留实例（优惠 {pct:.0f}%）比按需租用 {hours:.0f} 小时更便宜"},
    {"rec.why.billed_hours", "billed for the {hours:.0f} hours the runs take", "按任务实际占用的 {hours:.0f} 小时计费"},
    {"rec.why.local_storage", "keep data and checkpoints on a local storage node ({count} x {drive}), rent {gpus} for the run",
     "数据和检查点放在本地存储节点（{count} x {drive}），训练时云上租用 {gpus}"},
    {"rec.why.data_crosses_once", "the dataset crosses to the cloud once per run; checkpoints come back to local storage",
     "每次运行数据集上云一次；检查点回传到本地存储"},
    {"rec.on_date", " on {date}", "（截至 {date}）"},
    {"rec.export.unknown", "{gpu}: no export status recorded for this region{on}: check it before relying on it",
     "{gpu}：该地区没有出口管制状态记录{on}：采用前请先核实"},
    {"rec.export.allowed", "{gpu}: an export-compliant {vendor} part{on}: allowed since {from}, {rule} ({source})",
     "{gpu}：符合出口管制的 {vendor} 产品{on}：自 {from} 起允许销售，{rule}（{source}）"},
    {"rec.export.licence", "{gpu}: sale into this region needs a US export licence{on} (since {from}: {rule}; {source})",
     "{gpu}：销往该地区需要美国出口许可证{on}（自 {from} 起：{rule}；{source}）"},
    {"rec.export.restricted",
     "{gpu}: export-restricted{on} (since {from}: {rule}; {source}): installed cloud capacity only, no purchase option",
     "{gpu}：受出口管制{on}（自 {from} 起：{rule}；{source}）：只能用已部署的云上算力，不能采购"},
    {"rec.why.domestic", "{gpu}: a domestic accelerator, preferred for compliance", "{gpu}：国产算力，合规上优先"},
    {"rec.why.compliance_speed", "compliance costs speed: {ratio:.2f}x the time of {gpus} {gpu} ({duration})",
     "合规的速度代价：耗时是 {gpus} 张 {gpu}（{duration}）的 {ratio:.2f} 倍"},
    {"rec.why.over_budget", "over the budget: {cost} against {budget}", "超出预算：{cost}，预算为 {budget}"},
    // an option's cost
    {"rec.price_unknown", "price unknown", "单价未知"},
    {"rec.not_priced", "; not priced: {names}", "；未定价：{names}"},
    {"rec.cost_at_least", "at least {amount}", "至少 {amount}"},
    {"rec.part.hardware", "hardware {amount}", "硬件 {amount}"},
    {"rec.part.power", "power {amount}", "电费 {amount}"},
    {"rec.part.hosting", "hosting {amount}", "机房托管 {amount}"},
    {"rec.part.rental", "rental {amount}", "租用 {amount}"},
    {"rec.part.local_storage", "local storage {amount}", "本地存储 {amount}"},
    {"rec.part.its_power", "its power {amount}", "其电费 {amount}"},
    {"rec.per_run", " ({amount} a run over {runs:.4g} runs)", "（共 {runs:.4g} 次运行，每次 {amount}）"},
    {"rec.price_source", "; price: {source}", "；单价来源：{source}"},
    // break-even of buying against renting
    {"rec.be.priced", "{months:.1f} months", "{months:.1f} 个月"},
    {"rec.be.lower_bound", "at least {months:.1f} months (parts not priced)", "至少 {months:.1f} 个月（有部件未定价）"},
    {"rec.be.never", "never (renting the same runs is never dearer per month)", "永不回本（云上租用跑同样的任务每月都不更贵）"},
    {"rec.be.one_off", "none (a single run)", "无（只运行一次）"},
    {"rec.be.no_purchase_price", "unknown (no purchase price)", "未知（没有采购单价）"},
    {"rec.be.no_rental_price", "unknown (no rental price to compare with)", "未知（没有可比较的租用单价）"},
    {"rec.be.no_purchase", "none (no purchase option)", "无（不能采购）"},
    // the scenario
    {"rec.usage.once", "once", "一次性"},
    {"rec.usage.runs", "{runs:g} runs a month for {months:.0f} months", "每月 {runs:g} 次，持续 {months:.0f} 个月"},
    {"rec.usage.utilisation", "{pct:.0f}% utilisation for {months:.0f} months",
     "持续使用，利用率 {pct:.0f}%，共 {months:.0f} 个月"},
    {"sensitivity.low", "low", "低"},
    {"sensitivity.high", "high", "高"},
    {"rec.no_option_unpriced",
     "no GPU type that fits has a rental or purchase price: give recommend.prices or recommend.purchase_prices",
     "放得下的 GPU 型号都没有租用或采购单价：请给出 recommend.prices 或 recommend.purchase_prices"},
    // assumptions of a recommendation
    {"rec.assume.deadline",
     "no deadline given: plans must finish within {days:.0f} days, so that buying one GPU for a years-long run is not "
     "what wins on price",
     "未给出截止时间：方案须在 {days:.0f} 天内完成，以免只买一张 GPU 跑上数年的方案因总成本低而胜出"},
    {"rec.assume.electricity", "electricity {symbol}{price:.4f}/kWh ({source}{stand_in})",
     "电价 {symbol}{price:.4f}/kWh（{source}{stand_in}）"},
    {"rec.assume.electricity_stand_in", "; the US figure stands in: give recommend.electricity_usd_per_kwh",
     "；暂用美国电价：请给出 recommend.electricity_usd_per_kwh"},
    {"rec.assume.pue", "PUE {pue:.2f}, the industry average ({source})", "PUE {pue:.2f}，行业平均值（{source}）"},
    {"rec.assume.colocation",
     "servers hosted in colocation at {price} per kW-month ({source}); a workstation costs no hosting",
     "服务器托管在机房，每 kW 每月 {price}（{source}）；工作站不计托管费"},
    {"rec.parts.region", "region {region}{on}: only its listed accelerators, by export status",
     "地区 {region}{on}：只用该地区列出的加速卡，按出口管制状态分组"},
    {"rec.parts.group", "; {label}: {names}", "；{label}：{names}"},
    {"rec.parts.source", " ({source})", "（{source}）"},
    {"rec.parts.domestic", "domestic", "国产算力"},
    {"rec.parts.allowed", "foreign, allowed", "进口，允许"},
    {"rec.parts.licence", "foreign, export licence needed", "进口，需要出口许可证"},
    {"rec.parts.restricted", "foreign, export-restricted (installed cloud capacity only)",
     "进口，受出口管制（只能用已部署的云上算力）"},
    {"rec.assume.ranking_domestic",
     "ranking: domestic parts first, as asked (recommend.prefer_domestic); then priced options by cost per run, then "
     "unpriced ones by time",
     "排序：按要求国产算力优先（recommend.prefer_domestic）；其次有单价的方案按每次运行的成本，再次无单价的方案按时间"},
    {"rec.assume.ranking",
     "ranking: priced options first by cost per run, then unpriced ones by time; a domestic part ranks ahead of a "
     "foreign one only while it is competitive, within {pct:.0f}% of its cost per run (of its time where unpriced), an "
     "assumption; recommend.prefer_domestic ranks domestic parts first",
     "排序：有单价的方案先按每次运行的成本，再是无单价的方案按时间；国产算力只有在有竞争力时才排在进口产品前面，即每次运行成本"
     "在其 {pct:.0f}% 以内（无单价时按时间），这是一项假设；recommend.prefer_domestic 可让国产算力优先"},
    {"rec.assume.currency", "amounts in {code} at {rate:.4f} {code} per USD ({source})",
     "金额以 {code} 计，汇率 {rate:.4f} {code}/USD（{source}）"},
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
