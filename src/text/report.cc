#include "text/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "core/estimate.h"
#include "core/units.h"
#include "text/bom_text.h"
#include "text/explain.h"
#include "text/format.h"
#include "text/i18n.h"
#include "text/recommend_text.h"
#include "text/review_text.h"

namespace trainplan {

namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string KindText(OptionKind kind, Lang lang) { return Say(lang, std::string("kind.") + ToString(kind)); }

std::string MemTermText(MemTerm term, Lang lang) { return Say(lang, std::string("mem.") + MemTermName(term)); }

std::string OptionTitle(const PlatformOption& o, Lang lang) {
  return Say(lang, "rec.option_title", fmt::arg("kind", KindText(o.kind, lang)),
             fmt::arg("dedicated", o.dedicated ? Say(lang, "rec.dedicated") : ""), fmt::arg("gpus", o.plan.gpus),
             fmt::arg("gpu", FindGpu(o.plan.gpu_id).name));
}

/// An on-premises option's bill of materials as a Markdown table.
std::string BomMarkdown(const PlatformOption& o, const Currency& cur, Lang lang) {
  std::string md;
  const NodeBom b = WithSentences(o.bom, lang);
  md += "\n";
  md += Say(lang, "bom.title", fmt::arg("nodes", b.nodes), fmt::arg("node_class", NodeClassText(b.node_class, lang)),
            fmt::arg("gpus", b.gpus_per_node), fmt::arg("break_even", BreakEvenText(o.break_even, lang)));
  md += "\n\n" + Say(lang, "bom.platform", fmt::arg("text", PlatformText(b, lang))) + "\n\n";
  for (const auto& w : b.warnings) md += "- " + Say(lang, "warning", fmt::arg("text", w.text)) + "\n";
  if (!b.warnings.empty()) md += "\n";
  md += Say(lang, "bom.table_head") + "\n|---|---|---|\n";
  md += fmt::format("| CPU | {} | {} |\n",
                    Say(lang, "bom.cpu_choice", fmt::arg("sockets", b.cpu.sockets), fmt::arg("cpu", b.cpu.cpu.name),
                        fmt::arg("cores", b.cpu.cpu.cores * b.cpu.sockets), fmt::arg("lanes", b.cpu.lanes_available)),
                    b.cpu.why);
  md += fmt::format("| {} | {:.0f} GB | {} |\n", Say(lang, "bom.ram"), b.ram.total_bytes / kGB, b.ram.why);
  for (const auto& t : b.storage.tiers)
    md += fmt::format("| {} | {} x {} | {} |\n", TierRoleText(b, t, lang), t.count, t.drive.name, t.why);
  md += fmt::format("| {} | {}{} | {} |\n", Say(lang, "bom.network"),
                    b.gpus_per_node > 1 ? b.network.intra_link : Say(lang, "bom.no_gpu_link"),
                    b.network.nics > 0 ? fmt::format(" + {} x {}", b.network.nics, b.network.nic.name) : "",
                    b.network.why);
  md += fmt::format("| {} | {} | {} |\n", Say(lang, "bom.power"),
                    Say(lang, "bom.psu_choice", fmt::arg("psus", b.power.psus), fmt::arg("rating_w", b.power.psu_rating_w),
                        fmt::arg("redundancy", RedundancyText(b.power.redundancy, lang)),
                        fmt::arg("kw", b.power.peak_w / 1000)),
                    b.power.why);
  md += fmt::format("| {} | {} | {} |\n", Say(lang, "bom.cooling"), CoolingKindText(b.cooling.kind, lang),
                    b.cooling.why);
  for (const auto& line : b.prices)
    md += fmt::format("| {} | {} | {} ({}) |\n", Say(lang, "bom.price_per_node"), PartText(line.part, lang), FormatMoney(line.usd, cur), line.source);
  for (const auto& line : b.shared_prices)
    md += fmt::format("| {} | {} | {} ({}) |\n", Say(lang, "bom.price_once"), PartText(line.part, lang), FormatMoney(line.usd, cur), line.source);
  if (!b.unpriced.empty()) {
    md += fmt::format("| {} | {} | {} |\n", Say(lang, "bom.not_priced"), PartsText(b.unpriced, lang, "; "),
                      Say(lang, "bom.no_citable_price"));
  }
  return md;
}

/// Markdown body shared by the Markdown and HTML (as preformatted sections) reports.
std::string MarkdownBody(const Recommendation& r, bool with_charts, Lang lang) {
  std::string md;
  const Currency& cur = DisplayCurrency(r);
  const ParamCounts params = CountParams(r.job.model);
  md += Say(lang, "rec.title", fmt::arg("model", r.job.model.name), fmt::arg("method", ToString(r.job.training.method)),
            fmt::arg("tokens", r.job.training.tokens > 0
                                   ? Say(lang, "rec.tokens", fmt::arg("tokens", r.job.training.tokens))
                                   : Say(lang, "rec.one_step"))) +
        "\n\n";
  md += Say(lang, "rec.scenario", fmt::arg("params", params.total / 1e9), fmt::arg("usage", UsageText(r.policy, lang)),
            fmt::arg("sensitivity", Say(lang, std::string("sensitivity.") + ToString(r.policy.sensitivity))), fmt::arg("region", r.policy.region),
            fmt::arg("deadline", FormatDuration(r.policy.deadline_s, lang)),
            fmt::arg("budget",
                     r.policy.budget_usd > 0 ? FormatMoney(r.policy.budget_usd, cur) : Say(lang, "rec.no_budget")),
            fmt::arg("symbol", cur.symbol), fmt::arg("electricity", FromUsd(r.policy.electricity_usd_per_kwh, cur)),
            fmt::arg("pue", r.policy.pue)) +
        "\n\n";
  if (!r.feasible) {
    md += Say(lang, "rec.no_option", fmt::arg("why", NoOptionText(r, lang))) + "\n\n";
    for (const auto& a : r.alternatives)
      md += fmt::format("- {} {}: {}\n", Say(lang, a.feasible ? "rec.works" : "rec.fails"), AlternativeChangeText(a, lang),
                        AlternativeSummary(a, lang));
    return md;
  }
  md += Say(lang, "rec.options") + "\n\n" + Say(lang, "rec.table_head") + "\n|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < r.options.size(); ++i) {
    const auto& o = r.options[i];
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", i + 1, OptionTitle(o, lang), PlanSummary(o.plan),
                      FormatDuration(o.reliability.wall_s, lang), CostTotalText(o.cost, cur, lang),
                      Say(lang, o.suits ? "yes" : "no"));
  }
  md += "\n";
  for (size_t i = 0; i < r.options.size(); ++i) {
    const auto& o = r.options[i];
    md += fmt::format("### {}. {}\n\n", i + 1, OptionTitle(o, lang));
    for (const auto& w : OptionWhy(o, cur, lang)) md += "- " + w + "\n";
    md += Say(lang, "rec.cost", fmt::arg("text", CostPartsText(o, cur, lang))) + "\n";
    md += Say(lang, "rec.memory", fmt::arg("mem", o.plan.memory.per_gpu_bytes / kGiB),
              fmt::arg("capacity", o.plan.memory.capacity_bytes / kGiB), fmt::arg("mfu", o.plan.time.mfu * 100),
              fmt::arg("goodput", o.reliability.goodput * 100)) +
          "\n";
    if (o.kind == OptionKind::kOnPrem) md += BomMarkdown(o, cur, lang);
    md += "\n";
  }
  const Reliability& rel = r.reliability;
  md += Say(lang, "rec.reliability") + "\n\n";
  md += Say(lang, "rec.interruptions", fmt::arg("rate", rel.interruptions_per_gpu_hour),
            fmt::arg("mtbf", FormatDuration(rel.mtbf_s, lang)), fmt::arg("gpus", rel.gpus),
            fmt::arg("expected", rel.expected_interruptions)) +
        "\n";
  md += Say(lang, "rec.checkpoint", fmt::arg("gb", rel.checkpoint_bytes / kGB),
            fmt::arg("write", rel.checkpoint_write_s), fmt::arg("restart", rel.restart_s)) +
        "\n";
  md += Say(lang, "rec.checkpoint_every", fmt::arg("interval", FormatDuration(rel.checkpoint_interval_s, lang)),
            fmt::arg("young", FormatDuration(rel.young_interval_s, lang)),
            fmt::arg("lost", FormatDuration(rel.expected_lost_s, lang)), fmt::arg("goodput", rel.goodput * 100)) +
        "\n\n";
  if (with_charts) {
    md += Say(lang, "rec.charts") + "\n\n" + MemorySvg(r, lang) + "\n\n" + TimeCostSvg(r, lang) + "\n\n";
  }
  md += Say(lang, "rec.assumptions") + "\n\n";
  for (const auto& a : AssumptionLines(r.assumptions, cur, lang)) md += "- " + a + "\n";
  return md;
}

std::string Text(const Recommendation& r, Lang lang) {
  std::string out = MarkdownBody(r, false, lang);
  // Terminal text: the Markdown without its markup.
  std::string text;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    if (out[i] == '#' && (i == 0 || out[i - 1] == '\n' || out[i - 1] == '#')) {
      while (i + 1 < out.size() && (out[i + 1] == '#' || out[i + 1] == ' ')) ++i;
      continue;
    }
    text += out[i];
  }
  return text;
}

/// Minimal Markdown to HTML for the body above: headings, lists, tables, paragraphs, inline SVG.
std::string MarkdownToHtml(const std::string& md) {
  std::string html;
  size_t pos = 0;
  bool in_list = false, in_table = false;
  auto close = [&] {
    if (in_list) html += "</ul>\n";
    if (in_table) html += "</table>\n";
    in_list = in_table = false;
  };
  auto inline_md = [](const std::string& s) {
    std::string e = Escape(s), out;
    bool bold = false;
    for (size_t i = 0; i < e.size(); ++i) {
      if (e.compare(i, 2, "**") == 0) {
        out += bold ? "</b>" : "<b>";
        bold = !bold;
        ++i;
      } else {
        out += e[i];
      }
    }
    return out;
  };
  while (pos < md.size()) {
    size_t end = md.find('\n', pos);
    if (end == std::string::npos) end = md.size();
    std::string line = md.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("<svg", 0) == 0) {
      close();
      html += line + "\n";
    } else if (line.rfind("#", 0) == 0) {
      close();
      size_t level = line.find_first_not_of('#');
      html += fmt::format("<h{0}>{1}</h{0}>\n", level, inline_md(line.substr(level + 1)));
    } else if (line.rfind("- ", 0) == 0) {
      if (in_table) close();
      if (!in_list) html += "<ul>\n", in_list = true;
      html += "<li>" + inline_md(line.substr(2)) + "</li>\n";
    } else if (line.rfind("|", 0) == 0) {
      if (in_list) close();
      if (line.rfind("|---", 0) == 0) continue;
      const bool header = !in_table;
      if (!in_table) html += "<table>\n", in_table = true;
      html += "<tr>";
      size_t a = 1;
      while (a < line.size()) {
        size_t b = line.find('|', a);
        if (b == std::string::npos) break;
        std::string cell = line.substr(a, b - a);
        cell.erase(0, cell.find_first_not_of(' '));
        cell.erase(cell.find_last_not_of(' ') + 1);
        html += header ? "<th>" + inline_md(cell) + "</th>" : "<td>" + inline_md(cell) + "</td>";
        a = b + 1;
      }
      html += "</tr>\n";
    } else if (line.empty()) {
      close();
    } else {
      close();
      html += "<p>" + inline_md(line) + "</p>\n";
    }
  }
  close();
  return html;
}

std::string HtmlPage(const std::string& title, const std::string& body, Lang lang) {
  return std::string("<!DOCTYPE html>\n<html lang=\"") + (lang == Lang::kZh ? "zh-CN" : "en") + "\"><head><meta charset=\"utf-8\"><title>" + Escape(title) +
         "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;"
         "vertical-align:top}th{background:#f3f3f3}svg{display:block;margin:1em 0}</style></head>\n<body>\n" +
         body + "</body></html>\n";
}

const char* kTermColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                             "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};
const char* KindColor(OptionKind k) {
  return k == OptionKind::kOnPrem ? "#4e79a7" : k == OptionKind::kCloud ? "#f28e2b" : "#59a14f";
}

}  // namespace

std::string PlanSummary(const Plan& p) { return fmt::format("{} {}", ToString(p.framework), StrategyText(p)); }

ReportFormat ParseReportFormat(const std::string& s, const std::string& field) {
  const std::string k = NormalizeName(s);
  if (k == "text") return ReportFormat::kText;
  if (k == "json") return ReportFormat::kJson;
  if (k == "markdown" || k == "md") return ReportFormat::kMarkdown;
  if (k == "html") return ReportFormat::kHtml;
  throw InputError(field, s, "text | json | markdown | html");
}

std::string MemorySvg(const Recommendation& r, Lang lang) {
  const int width = 780, row = 34, left = 190, right = 110, legend_h = 58;
  const int height = legend_h + row * static_cast<int>(r.options.size()) + 10;
  double scale_max = 1;
  for (const auto& o : r.options)
    scale_max = std::max({scale_max, o.plan.memory.per_gpu_bytes, o.plan.memory.capacity_bytes});
  const double px = (width - left - right) / scale_max;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">"
      "<text x=\"0\" y=\"14\" font-size=\"14\">{}</text>",
      width, height, Escape(Say(lang, "chart.memory_title")));
  constexpr int kPerRow = 5;
  for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i) {
    const int x = static_cast<int>(i % kPerRow) * 150, y = 24 + static_cast<int>(i / kPerRow) * 16;
    svg +=
        fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                    x, y, kTermColors[i], x + 14, y + 9, MemTermText(static_cast<MemTerm>(i), lang));
  }
  for (size_t k = 0; k < r.options.size(); ++k) {
    const auto& o = r.options[k];
    const int y = legend_h + static_cast<int>(k) * row;
    svg += fmt::format("<text x=\"0\" y=\"{}\">{}. {} {} x {}</text>", y + 14, k + 1, KindText(o.kind, lang), o.plan.gpus,
                       Escape(o.plan.gpu_id));
    double x = left;
    for (size_t i = 0; i < static_cast<size_t>(MemTerm::kCount); ++i) {
      const double w = o.plan.memory.bytes[i] * px;
      if (w <= 0) continue;
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"20\" fill=\"{}\"><title>{}: {:.2f} GiB</title></rect>",
          x, y, w, kTermColors[i], MemTermText(static_cast<MemTerm>(i), lang), o.plan.memory.bytes[i] / kGiB);
      x += w;
    }
    const double cap = left + o.plan.memory.capacity_bytes * px;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#000\" stroke-width=\"2\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\">{5:.1f} / {6:.0f} GiB</text>",
        cap, y - 3, y + 23, std::max(x, cap) + 6, y + 14, o.plan.memory.per_gpu_bytes / kGiB,
        o.plan.memory.capacity_bytes / kGiB);
  }
  return svg + "</svg>";
}

std::string TimeCostSvg(const Recommendation& r, Lang lang) {
  const Currency& cur = DisplayCurrency(r);
  auto cost = [&](const PlatformOption& o) { return FromUsd(o.cost.total_usd, cur); };  // the axis' currency
  const int width = 780, height = 430, left = 80, bottom = 50, top = 40, right = 30;
  std::vector<const PlatformOption*> points;
  for (const auto& o : r.considered)
    if (o.cost.known && o.cost.total_usd > 0 && o.reliability.wall_s > 0) points.push_back(&o);
  for (const auto& o : r.options)
    if (o.kind == OptionKind::kHybrid && o.cost.known && o.cost.total_usd > 0) points.push_back(&o);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">"
      "<text x=\"0\" y=\"14\" font-size=\"14\">{}</text>",
      width, height, Escape(Say(lang, "chart.time_cost_title")));
  if (points.empty())
    return svg + "<text x=\"20\" y=\"60\">" + Escape(Say(lang, "chart.no_priced_option")) + "</text></svg>";
  double tmin = INFINITY, tmax = 0, cmin = INFINITY, cmax = 0;
  for (const auto* o : points) {
    tmin = std::min(tmin, o->reliability.wall_s / 86400);
    tmax = std::max(tmax, o->reliability.wall_s / 86400);
    cmin = std::min(cmin, cost(*o));
    cmax = std::max(cmax, cost(*o));
  }
  // Whole decades around the data.
  const double lt0 = std::floor(std::log10(tmin)), lt1 = std::max(lt0 + 1, std::ceil(std::log10(tmax)));
  const double lc0 = std::floor(std::log10(cmin)), lc1 = std::max(lc0 + 1, std::ceil(std::log10(cmax)));
  auto X = [&](double days) { return left + (std::log10(days) - lt0) / (lt1 - lt0) * (width - left - right); };
  auto Y = [&](double amount) {
    return height - bottom - (std::log10(amount) - lc0) / (lc1 - lc0) * (height - top - bottom);
  };
  auto money = [&](double amount) {
    return amount >= 1e6   ? fmt::format("{}{:g}M", cur.symbol, amount / 1e6)
           : amount >= 1e3 ? fmt::format("{}{:g}k", cur.symbol, amount / 1e3)
                           : fmt::format("{}{:g}", cur.symbol, amount);
  };
  for (double d = lt0; d <= lt1; ++d)
    svg += fmt::format(
        "<line x1=\"{0:.0f}\" x2=\"{0:.0f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.0f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>",
        X(std::pow(10, d)), top, height - bottom, height - bottom + 16, std::pow(10, d));
  for (double d = lc0; d <= lc1; ++d)
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.0f}\" y2=\"{2:.0f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.0f}\" text-anchor=\"end\">{5}</text>",
        left, width - right, Y(std::pow(10, d)), left - 6, Y(std::pow(10, d)) + 4, money(std::pow(10, d)));
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"14\" y=\"{}\" "
      "transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>",
      (left + width) / 2, height - 12, Escape(Say(lang, "chart.time_axis")), (top + height - bottom) / 2,
      (top + height - bottom) / 2, Escape(Say(lang, "chart.cost_axis")));
  for (const auto* o : points) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.6\"><title>{}: {}, {}"
        "</title></circle>",
        X(o->reliability.wall_s / 86400), Y(cost(*o)), KindColor(o->kind), Escape(OptionTitle(*o, lang)),
        FormatDuration(o->reliability.wall_s, lang), CostTotalText(o->cost, cur, lang));
  }
  for (size_t k = 0; k < r.options.size(); ++k) {
    const auto& o = r.options[k];
    if (!o.cost.known || o.cost.total_usd <= 0) continue;
    const double x = X(o.reliability.wall_s / 86400), y = Y(cost(o));
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"{}\" stroke=\"#000\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">{}. {} x {}</text>",
        x, y, KindColor(o.kind), x + 10, k % 2 == 0 ? y - 6 : y + 16, k + 1, o.plan.gpus,
        Escape(o.plan.gpu_id));  // alternate above and below: neighbours often share a time
  }
  const OptionKind kinds[] = {OptionKind::kOnPrem, OptionKind::kCloud, OptionKind::kHybrid};
  for (int i = 0; i < 3; ++i)
    svg += fmt::format("<circle cx=\"{}\" cy=\"30\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"34\">{}</text>",
                       width - 230 + i * 75, KindColor(kinds[i]), width - 222 + i * 75, KindText(kinds[i], lang));
  return svg + "</svg>";
}

std::string RenderRecommendation(const Recommendation& r, ReportFormat format, Lang lang) {
  switch (format) {
    case ReportFormat::kJson:
      throw InternalError("a JSON recommendation is written by RecommendationToJson (io/writers.h)");
    case ReportFormat::kMarkdown:
      return MarkdownBody(r, true, lang);
    case ReportFormat::kHtml:
      return HtmlPage(Say(lang, "rec.html_title", fmt::arg("model", r.job.model.name)),
                      MarkdownToHtml(MarkdownBody(r, true, lang)), lang);
    case ReportFormat::kText:
      break;
  }
  return Text(r, lang);
}

std::string RenderReview(const BuildReview& r, ReportFormat format, Lang lang, const Currency& cur) {
  if (format == ReportFormat::kJson) throw InternalError("a JSON review is written by ReviewToJson (io/writers.h)");
  const std::string method_name = ToString(r.job.training.method);
  const auto model = fmt::arg("model", r.job.model.name);
  const auto method = fmt::arg("method", method_name);
  const std::string verdict = r.fits ? Say(lang, "rev.best", fmt::arg("plan", PlanSummary(r.plan)),
                                           fmt::arg("duration", FormatDuration(r.plan.time.total_s, lang)))
                                     : Say(lang, "rev.does_not_run", fmt::arg("why", ReviewReasonText(r, cur, lang)));
  std::string md = Say(lang, "rev.title", fmt::arg("build", r.build.name)) + "\n\n" +
                   Say(lang, "rev.job", model, method) + " " + verdict + "\n\n";
  md += Say(lang, "rev.table_head") + "\n|---|---|---|---|\n";
  for (const auto& f : r.findings)
    md += fmt::format("| {} | {} | {} | {} |\n", FindingAreaText(f, lang), FindingLevelText(f, lang),
                      FindingMessage(r, f, cur, lang), FindingFix(r, f, cur, lang));
  if (format == ReportFormat::kMarkdown) return md;
  if (format == ReportFormat::kHtml)
    return HtmlPage(Say(lang, "rev.html_title", fmt::arg("build", r.build.name)), MarkdownToHtml(md), lang);
  std::string text = Say(lang, "rev.text_title", fmt::arg("build", r.build.name)) + "\n" +
                     Say(lang, "rev.job_line", model, method) + "\n" + verdict + "\n\n";
  for (const auto& f : r.findings) {
    text += fmt::format("[{:4}] {:16} {}\n", FindingLevelText(f, lang), FindingAreaText(f, lang),
                        FindingMessage(r, f, cur, lang));
    const std::string fix = FindingFix(r, f, cur, lang);
    if (!fix.empty()) text += fmt::format("{:24}-> {}\n", "", fix);
  }
  return text;
}

}  // namespace trainplan
