// `--lang zh`: the text, Markdown and HTML reports in Chinese with exactly the figures of the English ones; JSON
// stays English.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run_cli.h"

namespace {

using trainplan::test_support::CliRun;
using trainplan::test_support::RunCli;

std::string Output(const std::string& args) {
  CliRun run = RunCli(args);
  EXPECT_EQ(run.status, 0) << args << "\n" << run.out;
  return run.out;
}

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
                      "吞吐：69758 tokens/s", "算力利用率 MFU 45.4%", "显存放不下（占容量的 197%）"});
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
                      "其他选择：", "  + 允许 CPU 卸载: 每卡显存 21.4 GiB；最便宜：8 x rtx-4090，deepspeed（",
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
                      "单价未知；未定价：", "- 电价 $", "- 地区 cn（截至 ", "；国产算力：Huawei Ascend 910B", "- 排序：",
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
                      "次运行，每次 $", "盈亏平衡 11.9 个月", "个月内运行 "});
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

}  // namespace
