// `--lang zh`: the text, Markdown and HTML reports in Chinese with exactly the figures of the English ones; JSON
// stays English.
#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/frameworks.h"
#include "catalog/hardware.h"
#include "catalog/parts.h"
#include "catalog/prices.h"
#include "core/platform.h"
#include "server/api.h"
#include "support/run_cli.h"

namespace {

/// UTF-8 for U+4E00..U+9FFF starts with a byte 0xE4..0xE9.
bool HasChinese(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 0xE4 && b <= 0xE9;
  });
}

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

/// What `trainplan args` prints; `status` is the exit status it must give (3: a review whose checks fail).
std::string Output(const std::string& args, int status = 0) {
  CliRun run = RunCli(args);
  EXPECT_EQ(run.status, status) << args << "\n" << run.out;
  return run.out;
}

/// examples/builds/guide-a.json fails its NVLink check: its review exits 3.
constexpr int kReviewFails = 3;

/// Every number in `text`, sorted: a translation may reorder the figures of a sentence but not change one.
std::vector<std::string> Numbers(const std::string& text) {
  static const std::regex kNumber(R"(\d+(?:\.\d+)?(?:e[+-]?\d+)?)");
  std::vector<std::string> numbers;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kNumber); it != std::sregex_iterator(); ++it)
    numbers.push_back(it->str());
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

/// The text without its last line (a search's wall time, which differs between runs).
std::string WithoutLastLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(0, text.rfind('\n'));
}

void ExpectSameNumbers(const std::string& en, const std::string& zh) {
  EXPECT_FALSE(Numbers(en).empty());
  EXPECT_EQ(Numbers(en), Numbers(zh)) << en << "\n----\n" << zh;
}

void ExpectContains(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& part : parts) EXPECT_NE(text.find(part), std::string::npos) << part << " not in\n" << text;
}

TEST(Lang, EstimateInChineseHasTheEnglishFigures) {
  const std::string job = "estimate --model llama-3.1-8b --method full --gpu h100-sxm --gpus 8 --tokens 1e9";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(en, {"memory per GPU (busiest GPU):", "  optimizer_states      59.83 GiB", "(16 accumulation steps)"});
  ExpectContains(zh, {"每卡显存（最忙的一张卡）：", "  优化器状态            59.83 GiB", "梯度累积 16 步",
                      "吞吐：69758 tokens/s", "算力利用率 MFU 45.4%", "显存放不下（占容量的 196%）"});
  EXPECT_EQ(zh.find("memory per GPU"), std::string::npos) << zh;
  EXPECT_EQ(Output(job + " --lang zh-CN"), zh);
}

TEST(Lang, EstimateWithOffloadAndHostRam) {
  const std::string job = "estimate --model qwen2.5-14b --method lora --gpu a800-80gb-sxm --gpus 1 --offload optimizer "
                          "--host-ram 64";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(zh, {"所需主机内存", "加载峰值", "假设："});
}

TEST(Lang, PlanInChinese) {
  const std::string job = "plan --model llama-3.1-8b --method lora --tokens 1e8 --gpu h100-sxm,a800-80gb-sxm --top 3 "
                          "--threads 2";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(WithoutLastLine(en), WithoutLastLine(zh));
  ExpectContains(zh, {"每卡显存", "并行策略", "为何选 #1：", "个线程"});
  // Why #1 ranks first, in Chinese down to its objective.
  ExpectContains(zh, {"为何选 #1：最便宜：1 x h100-sxm，hf（tp1 pp1 dp1", "，算力利用率 MFU ", "（固定开销：启动 ", "；显存占用 ",
                      "；最大开销为访存受限（占单步 ", "；按总成本排序（默认）：截止时间内总成本最低的方案"});
  for (const std::string english : {"cheapest:", "of memory used", "largest overhead", "ranked by"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, NoPlanAndAlternativesInChinese) {
  const std::string job = "plan --model llama-3.1-70b --method full --tokens 1e8 --gpu rtx-4090 --gpus 8 --no-offload "
                          "--threads 2";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(WithoutLastLine(en), WithoutLastLine(zh));
  ExpectContains(en, {"NO PLAN: does not fit: needs at least 158.0 GiB per GPU on 24.0 GiB"});
  ExpectContains(zh, {"没有可行方案：显存放不下：找到的最佳策略（完全激活重计算、微批 1、完全切分；未允许卸载）每卡至少需要 158.0 GiB "
                      "显存，容量只有 24.0 GiB",
                      "其他选择：", "  + 允许 CPU 卸载: 每卡显存 20.4 GiB；最便宜：8 x rtx-4090，deepspeed（",
                      "  + 目录中的任意 GPU: ", "  - 改用 lora: 显存放不下："});
  for (const std::string english : {"does not fit", "GiB per GPU", "cheapest:", "allow CPU offload", "method lora"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, RecommendTextMarkdownAndHtmlInChinese) {
  const std::string job = "recommend --model qwen2.5-7b --method lora --tokens 1e8 --region cn --threads 2";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(zh, {"推荐方案：qwen2.5-7b", "总成本", "可靠性（第一个方案）", "断点续训"});
  // The option bullets, the scenario and the assumptions, not only the headings.
  ExpectContains(zh, {"使用方式 一次性，数据敏感度 低", "- 云上租用 1 x NVIDIA A800 SXM4 80GB，单价 $", "- 平台：",
                      "- 一次性任务：租用 ", "：受出口管制（截至 ", "- 合规的速度代价：耗时是 1 张 NVIDIA H100 SXM5 80GB",
                      "- 成本：租用 $", "；单价来源：", "- 购买满足截止时间的最少 GPU：", "- 只运行一次：购买需要 至少 $",
                      "- 电价 $", "- 地区 cn（截至 ", "；国产算力：Huawei Ascend 910B", "- 排序：",
                      "- 数据和检查点放在本地存储节点（"});
  for (const std::string english : {"platform: ", "rent 1 x", "compliance costs speed", "price unknown", "once,",
                                    "a one-off run", "region cn", "ranking:", "electricity "})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
  ExpectContains(en, {"usage once, data sensitivity low", "- rent 1 x NVIDIA A800 SXM4 80GB at $", "- ranking: "});
  const std::string md = Output(job + " --format markdown --lang zh");
  ExpectContains(md, {"## 方案\n", "| # | 方案 | 并行计划 | 时间 | 总成本 | 是否合适 |"});
  const std::string html = Output(job + " --format html --lang zh");
  ExpectContains(html, {"<html lang=\"zh-CN\">", "<h2>方案</h2>"});
}

TEST(Lang, OnPremBillOfMaterialsInChinese) {
  const std::string job = "recommend --model llama-3-70b --method full --tokens 1e10 --usage continuous --months 36 "
                          "--threads 2";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(zh, {"自建：", "物料清单（", "| 部件 | 选型 | 原因 |", "| 供电 | ", "使用方式 持续使用，利用率 100%，共 36 个月",
                      "- 购买满足截止时间的最少 GPU：8 x ", "个月回本（租用每月 $", "- 成本：硬件 $", "，电费 $", "，机房托管 $",
                      "次运行，每次 $", "盈亏平衡 12.1 个月", "个月内运行 "});
  for (const std::string english : {"pays back", "hardware $", "months", "runs over"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, ReviewInChinese) {
  // guide-b: its review warns but fails no check, so it exits 0 (guide-a fails one: exit 3).
  const std::string job = "review " + std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-b.json";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(zh, {"配置评审：", "任务："});
}

TEST(Lang, ReviewFindingsAndFixesInChinese) {
  const std::string job = "review " + std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json";
  const std::string en = Output(job, kReviewFails), zh = Output(job + " --lang zh", kReviewFails);
  ExpectContains(en, {"the build claims NVLink, but the NVIDIA GeForce RTX 4090 has none",
                      "-> plan for PCIe peer-to-peer, or choose a GPU with NVLink",
                      "36 lanes wanted (GPUs x16, NVMe, NICs), 1 x AMD Ryzen 9 7950X gives 24", "38.6 h"});
  ExpectContains(zh, {"配置单写了 NVLink，但 NVIDIA GeForce RTX 4090 没有 NVLink", "-> 按 PCIe 点对点规划，或换用带 NVLink 的 GPU",
                      "需要 36 条 PCIe 通道（GPU 各 x16、NVMe、网卡），1 x AMD Ryzen 9 7950X 只提供 24 条",
                      "已装内存 128 GB（显存总量 52 GB 的 2.5 倍）", "CPU 16 核，需要 10 核", "放得下：每卡显存 20.9 GiB / 24.0 GiB；最快：",
                      "电源 1 x 1600 W = 1600 W", "38.6 小时", "单价 $0.60/卡时，RunPod 按需实例（比价网站汇总），2026-03，计费方式 "});
  for (const std::string english : {"the build claims", "lanes wanted", "installed", "cores for", "checkpoint takes",
                                    "fits:", "fastest:", "38.6 h", "/GPU-h", "billed"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, AssumptionsDurationsAndWarningsInChinese) {
  const std::string job = "estimate --model llama-3.1-8b --method full --gpu h100-sxm --gpus 8 --tokens 1e9";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectContains(en, {"total: 1e+09 tokens in 1907 steps: 4.1 h (33 GPU-hours)",
                      "  - host time: 1.50 ms of dispatch per layer pass; batches built in the training process",
                      "  - fixed costs per job (data/job_costs.json): provisioning 5 min, a 23.2 GB image",
                      "  - global batch 128 sequences (524,288 tokens), the default for fine-tuning (Stanford Alpaca's 128)",
                      "warning: does not fit: needs 156.8 GiB per GPU on 80.0 GiB"});
  ExpectContains(zh, {"总计：1e+09 tokens，1907 步：4.1 小时", "  - 框架配置：DeepSpeed ZeRO（",
                      "  - 损失函数 standard：在完整 logits 上算标准交叉熵（引擎默认）", "  - 不做激活重计算",
                      "  - 主机侧时间：每层每次前向/反向调度 1.50 ms；批数据在训练进程内构建",
                      "  - 每个任务的固定开销（data/job_costs.json）：资源开通 5 分钟，23.2 GB 镜像", "进程启动 60.00 秒（假设）",
                      "  - 全局批大小 128 条序列（524,288 tokens），微调的默认值（Stanford Alpaca 的 128）；可用 --global-batch 设置",
                      "警告：显存放不下：每卡需要 156.8 GiB，显存只有 80.0 GiB"});
  for (const std::string english : {"host time", "fixed costs", "global batch", "framework profile", "loss standard",
                                    "does not fit", "4.1 h", " min", "no activation"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, SequenceAndMemoryFeatureAssumptionsInChinese) {
  const std::string job = "estimate --model qwen2.5-7b --method qlora --gpu rtx-4090 --gpus 1 --training-objective dpo "
                          "--sample-mean-tokens 600 --sample-max-tokens 2048 --seq-len 2048 --liger --compile --dora "
                          "--optimizer paged_adamw_8bit --activation-offloading";
  const std::string en = Output(job), zh = Output(job + " --lang zh");
  ExpectSameNumbers(en, zh);
  ExpectContains(zh, {"训练目标 dpo：每对样本的 chosen 和 rejected 回答一起过策略模型", "冻结的参考模型每个训练步做 1 次前向",
                      "样本平均 600、最长 2,048 tokens", "其中 35% 是填充", "Liger 算子（融合 norm、rotary、SwiGLU：x0.7）",
                      "torch.compile（融合逐元素算子：x0.3；编译一次 60 s）", "NF4 双重量化（每个权重 4.127 bit）",
                      "分页优化器：状态放得进显存，分页不耗时", "DoRA 每步增加 ", "（需反量化 4-bit 权重）", "完全激活重计算：每层只保留输入"});
  for (const std::string english : {"objective dpo:", "samples of mean", "paged optimizer", "DoRA adds", "Liger kernels"})
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
}

TEST(Lang, ReviewCurrency) {
  const std::string job = "review " + std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json";
  const nlohmann::json usd = nlohmann::json::parse(Output(job + " --json", kReviewFails));
  const nlohmann::json cny = nlohmann::json::parse(Output(job + " --json --currency CNY", kReviewFails));
  EXPECT_FALSE(usd.contains("currency"));
  ASSERT_TRUE(cny.contains("currency"));
  EXPECT_EQ(cny["currency"]["code"], "CNY");
  const double rate = cny["currency"]["per_usd"];
  EXPECT_DOUBLE_EQ(rate, 6.9858);  // data/prices.json exchange_rates, 2026-01-27
  EXPECT_EQ(cny["needed"]["currency"], "CNY");
  EXPECT_EQ(cny["needed"]["node_usd"], usd["needed"]["node_usd"]);
  EXPECT_NEAR(cny["needed"]["node"].get<double>(), rate * usd["needed"]["node_usd"].get<double>(), 1e-6);
  // The plan's cost in the text: $46 at $0.60/GPU-h becomes ¥321 at ¥4.19/GPU-h.
  ExpectContains(Output(job, kReviewFails), {"$46 at $0.60/GPU-h"});
  ExpectContains(Output(job + " --currency CNY", kReviewFails), {"¥323 at ¥4.19/GPU-h"});
  const CliRun bad = RunCli(job + " --currency GBP");
  EXPECT_EQ(bad.status, 2) << bad.out;
  ExpectContains(bad.out, {"--currency", "GBP"});
}

/// An API answer's sentences in the request's language; the keys and numbers the same as in English.
TEST(Lang, ApiAnswersInTheRequestLanguage) {
  using nlohmann::json;
  const json doc = {{"model", "llama-3.1-8b"},
                    {"training", {{"method", "full"}, {"tokens", 1e9}}},
                    {"hardware", {{"gpu", "h100-sxm"}, {"gpus", 8}}}};
  json zh_doc = doc;
  zh_doc["lang"] = "zh";
  const trainplan::ApiResponse en = trainplan::HandleRequest("POST", "/api/estimate", doc.dump());
  const trainplan::ApiResponse zh = trainplan::HandleRequest("POST", "/api/estimate", zh_doc.dump());
  ASSERT_EQ(en.status, 200) << en.body;
  ASSERT_EQ(zh.status, 200) << zh.body;
  json e = json::parse(en.body), z = json::parse(zh.body);
  EXPECT_EQ(e["time"]["total_s"], z["time"]["total_s"]);
  EXPECT_EQ(e["memory"]["options"][0]["change"], "full activation recomputation");
  EXPECT_EQ(z["memory"]["options"][0]["change"], "完全激活重计算");
  e["memory"].erase("options");
  z["memory"].erase("options");
  EXPECT_EQ(e["memory"], z["memory"]);
  EXPECT_EQ(z["strategy"]["global_batch_note"],
            "全局批大小 128 条序列（524,288 tokens），微调的默认值（Stanford Alpaca 的 128）；可用 --global-batch 设置");
  EXPECT_EQ(z["time"]["duration"], "4.1 小时");
  EXPECT_EQ(e["time"]["duration"], "4.1 h");
  EXPECT_EQ(z["warnings"][0], "显存放不下：每卡需要 156.8 GiB，显存只有 80.0 GiB");
  EXPECT_EQ(e["warnings"][0], "does not fit: needs 156.8 GiB per GPU on 80.0 GiB");
  // Without `lang` the answer is the English one, as before.
  json en_doc = doc;
  en_doc["lang"] = "en";
  EXPECT_EQ(trainplan::HandleRequest("POST", "/api/estimate", en_doc.dump()).body, en.body);

  for (const char* path : {"/api/estimate", "/api/plan", "/api/recommend", "/api/review"}) {
    json bad = doc;
    bad["lang"] = "fr";
    const trainplan::ApiResponse r = trainplan::HandleRequest("POST", path, bad.dump());
    EXPECT_EQ(r.status, 400) << path << " " << r.body;
    const json err = json::parse(r.body);
    EXPECT_EQ(err["field"], "lang") << r.body;
    EXPECT_EQ(err["value"], "fr") << r.body;
    EXPECT_EQ(err["allowed"], "en, zh or zh-CN") << r.body;
    bad["lang"] = 7;  // not a string: the same allowed names
    const json not_text = json::parse(trainplan::HandleRequest("POST", path, bad.dump()).body);
    EXPECT_EQ(not_text["field"], "lang") << not_text;
    EXPECT_EQ(not_text["allowed"], "en, zh or zh-CN") << not_text;
  }
}

TEST(Lang, ApiRecommendAndReviewSentencesInChinese) {
  using nlohmann::json;
  const json rec = {{"lang", "zh-CN"},
                    {"model", "qwen2.5-7b"},
                    {"training", {{"method", "lora"}, {"tokens", 1e8}}},
                    {"recommend", {{"region", "cn"}, {"currency", "CNY"}}}};
  const trainplan::ApiResponse r = trainplan::HandleRequest("POST", "/api/recommend", rec.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_NE(j["options"][0]["plan"]["why"].get<std::string>().find("算力利用率 MFU"), std::string::npos)
      << j["options"][0]["plan"]["why"];
  EXPECT_NE(j["scenario"]["usage_text"].get<std::string>().find("一次性"), std::string::npos) << j["scenario"]["usage_text"];
  EXPECT_EQ(j["currency"]["code"], "CNY");  // keys and codes stay English
  // Every derivation line of every bill of materials is in Chinese too.
  int why_lines = 0;
  const std::function<void(const json&)> expect_chinese_why = [&](const json& node) {
    if (!node.is_structured()) return;
    for (auto it = node.begin(); it != node.end(); ++it) {
      // A sentence, not a bare figure such as "1 x16".
      static const std::regex kSentence(R"([A-Za-z]{4,}.*[A-Za-z]{4,})");
      if (node.is_object() && it.key() == "why" && it->is_string() &&
          (HasChinese(it->get<std::string>()) || std::regex_search(it->get<std::string>(), kSentence))) {
        ++why_lines;
        EXPECT_TRUE(HasChinese(it->get<std::string>())) << it->get<std::string>();
      }
      expect_chinese_why(*it);
    }
  };
  for (const json& option : j["options"])
    if (option.contains("bom")) expect_chinese_why(option["bom"]);
  EXPECT_GT(why_lines, 0);

  std::ifstream file(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-a.json");
  json build = json::parse(file);
  build["lang"] = "zh";
  const trainplan::ApiResponse v = trainplan::HandleRequest("POST", "/api/review", build.dump());
  ASSERT_EQ(v.status, 200) << v.body;
  const json review = json::parse(v.body);
  EXPECT_EQ(review["findings"][0]["area"], "nvlink");
  EXPECT_EQ(review["findings"][0]["message"], "配置单写了 NVLink，但 NVIDIA GeForce RTX 4090 没有 NVLink");
  EXPECT_EQ(review["findings"][0]["fix"], "按 PCIe 点对点规划，或换用带 NVLink 的 GPU");
}

TEST(Lang, UnknownLanguageExits2NamingTheAllowedOnes) {
  for (const std::string command : {"estimate --model llama-3.1-8b --gpu h100-sxm --gpus 8", "plan --model llama-3.1-8b",
                                    "recommend --model llama-3.1-8b"}) {
    const CliRun run = RunCli(command + " --lang fr");
    EXPECT_EQ(run.status, 2) << run.out;
    ExpectContains(run.out, {"--lang", "'fr'", "en, zh or zh-CN"});
  }
}

TEST(Lang, JsonStaysEnglish) {
  const std::string job = "estimate --model llama-3.1-8b --method full --gpu h100-sxm --gpus 8 --tokens 1e9 --json";
  EXPECT_EQ(Output(job + " --lang zh"), Output(job));
  const std::string review = "review " + std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/guide-b.json --json";
  EXPECT_EQ(Output(review + " --lang zh"), Output(review));
}

/// Catalog prose a Chinese report may quote has a Chinese variant (`_zh`): offers' instances, price notes and
/// dedicated offers, storage price notes, stack notes, export rulings and the region note. Only names (of
/// providers and storage services) may stay as written.
TEST(Lang, CatalogProseHasChineseVariants) {
  using namespace trainplan;
  auto expect_zh = [](const std::string& en, const std::string& zh) {
    if (!en.empty()) {
      EXPECT_FALSE(zh.empty()) << en;
    }
  };
  for (const auto& g : RentalPriceCatalog()) {
    for (const auto& o : g.offers) {
      expect_zh(o.instance, o.instance_zh);
      expect_zh(o.price_note, o.price_note_zh);
      expect_zh(o.dedicated, o.dedicated_zh);
    }
  }
  for (const auto& s : StorageCatalog()) expect_zh(s.price_note, s.price_note_zh);
  for (const auto& s : StackCatalog())
    for (const auto& f : s.features) expect_zh(f.note, f.note_zh);
  const Region& cn = RegionOf("cn");
  expect_zh(cn.note, cn.note_zh);
  for (const auto& part : cn.parts)
    for (const auto& ruling : part.history) expect_zh(ruling.rule, ruling.rule_zh);
}

/// What a Chinese report quotes from the catalogs as written: names (GPUs, links, CPUs, drives, stacks, storage
/// services, providers, platforms) and citations (every `source`).
std::vector<std::string> CatalogTexts() {
  using namespace trainplan;
  std::vector<std::string> out;
  auto add = [&](const std::string& text) {
    if (!text.empty()) out.push_back(text);
  };
  // A name with a Chinese form must show it in a Chinese report: only names written one way are skipped.
  auto add_name = [&](const std::string& text, const std::string& zh) {
    if (zh.empty()) add(text);
  };
  for (const auto& g : GpuCatalog()) {
    add(g.name);
    for (const auto& source : g.sources) add(source);
  }
  for (const auto& board : Parts().boards) add(board.name);
  add(Parts().power.workstation_platform_source);
  for (const auto& s : StackCatalog()) {
    add(s.name);
    for (const auto& f : s.features) add(f.source);
  }
  for (const auto& l : LinkCatalog()) add(l.name), add(l.source);
  for (const auto& c : CpuCatalog()) add(c.name), add(c.source);
  for (const auto& g : Parts().purchase.gpus) add(g.source);
  for (const auto& sys : Parts().purchase.systems) add(sys.source);
  for (const auto& d : DriveCatalog()) add(d.name), add(d.source);
  for (const auto& [key, citation] : Parts().sources) add(key), add(citation);
  for (const Framework f : kAllFrameworks) add(GetFrameworkProfile(f).name), add(GetFrameworkProfile(f).source);
  for (const auto& g : RentalPriceCatalog())
    for (const auto& o : g.offers) {
      add_name(o.provider, o.provider_zh), add(o.source_text);
    }
  for (const auto& s : StorageCatalog())
    add_name(s.name, s.name_zh), add(s.source_text);
  add(ExchangeRateTable().source_text);
  add(ExchangeRateTable().rule);
  const Region& cn = RegionOf("cn");
  add(cn.source);
  for (const auto& part : cn.parts)
    for (const auto& ruling : part.history) add(ruling.source);
  // The longest first, so a name inside a citation does not cut the citation in two.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return out;
}

/// The English sentences left in a Chinese report: runs of four or more ASCII words (a number, an "x" between
/// counts and parts, or any Chinese character ends a run), once markup, URLs, flags, file paths, identifiers
/// (snake_case, dotted keys) and the catalog's own texts are taken out.
std::vector<std::string> EnglishRuns(std::string text) {
  static const std::vector<std::string> kCatalog = CatalogTexts();
  // HTML escapes the catalog's texts (a citation's "&" is "&amp;"): compare them as written.
  for (const auto& [entity, character] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, entity.size(), character);
  for (const auto& quoted : kCatalog) {
    std::string rest;
    size_t from = 0;
    for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, from)) {
      rest.append(text, from, at - from).append(" ");
      from = at + quoted.size();
    }
    text = rest.append(text, from, std::string::npos);
  }
  static const std::regex kMarkup(R"(<style>[^<]*</style>|<[^>]*>|https?://\S+|--[a-z-]+|\S*[._/]\S*[a-z]\S*)");
  text = std::regex_replace(text, kMarkup, " ");
  static const std::regex kRun(R"([A-Za-z][A-Za-z'-]*(?:[ ,;:()/-]+[A-Za-z][A-Za-z'-]*){3,})");
  std::vector<std::string> runs;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kRun); it != std::sregex_iterator(); ++it) {
    std::string run = it->str();
    int words = 0;
    static const std::regex kWord(R"([A-Za-z][A-Za-z'-]*)");
    for (auto w = std::sregex_iterator(run.begin(), run.end(), kWord); w != std::sregex_iterator(); ++w)
      words += w->str() != "x";
    if (words >= 4) runs.push_back(run);
  }
  return runs;
}

TEST(Lang, EnglishRunsFindsSentencesAndSkipsNamesAndIds) {
  EXPECT_EQ(EnglishRuns("| 散热 | 风冷 | 1.3 kW under a desk or in a room: air |"),
            std::vector<std::string>{"kW under a desk or in a room: air"});
  EXPECT_EQ(EnglishRuns("散热 | air: one node without NVLink: collectives cross PCIe"),
            std::vector<std::string>{"air: one node without NVLink: collectives cross PCIe"});
  EXPECT_TRUE(EnglishRuns("8 x NVIDIA H100 SXM5 80GB，hf tp1 pp1 dp8 zero2 mb1 recompute:none，data/job_costs.json "
                          "recommend.prices --global-batch https://example.com/a/b 1 x AMD Ryzen 9 7950X")
                  .empty());
}

/// The jobs the issue names, in Chinese, in every report format: no English sentence may remain.
TEST(Lang, ChineseReportsHaveNoEnglishSentence) {
  const std::string builds = std::string(TRAINPLAN_SOURCE_DIR) + "/examples/builds/";
  const std::string cn = "recommend --model qwen2.5-14b --method lora --tokens 5e8 --usage continuous --months 12 "
                         "--data-sensitivity high --region cn --lang zh --currency CNY --threads 2";
  const std::vector<std::pair<std::string, int>> jobs = {
      {cn, 0},
      {cn + " --format markdown", 0},
      {cn + " --format html", 0},
      {cn + " --budget 300000", 0},
      {"recommend --model llama-3-70b --method full --tokens 1e10 --usage continuous --months 36 --threads 2 --lang zh "
       "--format html",
       0},
      {"recommend --model llama-3-8b --method qlora --tokens 1e8 --gpu rtx-4090 --threads 2 --lang zh", 0},
      {"estimate --model qwen2.5-14b --method lora --gpu a800-80gb-sxm --gpus 1 --lang zh", 0},
      {"estimate --model llama-3.1-70b --method full --gpu h100-sxm --gpus 16 --tokens 1e9 --lang zh",
       0},
      {"plan --model llama-3-70b --method full --tokens 3e9 --deadline 15d --threads 2 --lang zh", 0},
      {"plan --model qwen2.5-14b --method full --gpu rtx-4090 --gpus 2 --host-ram 128 --threads 2 --lang zh", 0},
      {"plan --model qwen2.5-14b --method lora --tokens 5e8 --gpu a800-80gb-sxm,ascend-910b --currency CNY --threads 2 "
       "--lang zh",
       0},
      {"review " + builds + "guide-a.json --lang zh", kReviewFails},
      {"review " + builds + "guide-a.json --lang zh --format html", kReviewFails},
      {"review " + builds + "guide-b.json --lang zh --format markdown", 0},
      {"review " + builds + "guide-c.json --lang zh", 0},
  };
  for (const auto& [job, status] : jobs) {
    const std::string zh = Output(job, status);
    EXPECT_EQ(EnglishRuns(zh), std::vector<std::string>{}) << job;
  }
}

}  // namespace
