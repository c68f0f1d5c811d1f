#include "cli/recommend_commands.h"

#include <algorithm>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/errors.h"
#include "cli/flags.h"
#include "base/document.h"
#include "base/error.h"
#include "io/requests.h"
#include "io/text_io.h"
#include "io/writers.h"
#include "catalog/hardware.h"
#include "catalog/prices.h"
#include "core/platform.h"
#include "text/report.h"
#include "core/review.h"
#include "core/search.h"
#include "io/build_reader.h"

namespace trainplan::cli {

namespace {

using nlohmann::json;

struct RecommendState {
  CLI::App* recommend = nullptr;
  CLI::App* review = nullptr;
  JobFlagsHook job;
  std::string deadline, format = "text", output;
  std::optional<std::string> usage, sensitivity, region, as_of;
  std::optional<double> budget, months, electricity, pue, hosting, dataset_gb, runs_per_month;
  std::optional<std::string> currency;
  std::vector<std::string> gpus, prices, purchases;
  std::optional<int> max_gpus, gpus_exact, checkpoints_kept;
  bool as_json = false, review_json = false, n_plus_n = false, prefer_domestic = false;
  std::string build_path, review_format = "text", review_output, review_currency = "USD";
  std::string lang = "en", review_lang = "en";
  int threads = 0;
};

RecommendState& State() {
  static RecommendState state;
  return state;
}

}  // namespace

void RegisterRecommendCommands(CLI::App& app, JobFlagsHook job_flags) {
  RecommendState& s = State();
  s = RecommendState{};  // a fresh app starts from the defaults
  s.job = std::move(job_flags);
  s.recommend = app.add_subcommand("recommend", "buy, rent or hybrid: options with build, cost, power and reliability");
  CLI::App* r = s.recommend;
  s.job.add(r);
  r->add_option("--deadline", s.deadline, "finish within: 15d, 36h (default 30d)");
  r->add_option("--budget", s.budget, "total available, in --currency");
  r->add_option("--currency", s.currency, "USD | CNY | EUR: budget, prices and every amount shown (default USD)");
  r->add_flag("--prefer-domestic", s.prefer_domestic, "restricted region: rank domestic parts first whatever they cost");
  r->add_option("--usage", s.usage,
                "once | continuous (100% utilisation) | runs a month, e.g. 4/month | utilisation, e.g. 60%");
  r->add_option("--runs-per-month", s.runs_per_month, "runs a month (the same as --usage N/month)");
  r->add_option("--months", s.months, "recurring use: months compared (default 36)");
  r->add_option("--data-sensitivity", s.sensitivity, "low | high (high: no shared public cloud)");
  r->add_option("--region", s.region, "us | eu | cn (cn: domestic parts and foreign ones by export status)");
  r->add_option("--as-of", s.as_of, "date the region's export rules are read on, YYYY-MM-DD (default: today)");
  r->add_option("--electricity", s.electricity, "USD per kWh");
  r->add_option("--pue", s.pue, "facility power usage effectiveness");
  r->add_option("--hosting", s.hosting, "USD per kW-month of hosting (default: colocation for servers)");
  r->add_option("--gpu", s.gpus, "GPU types to consider (comma-separated)")->delimiter(',');
  r->add_option("--max-gpus", s.max_gpus, "largest GPU count");
  r->add_option("--gpus", s.gpus_exact, "exact GPU count to compare (default: search)");
  r->add_option("--price", s.prices, "rental price per GPU-hour in --currency, e.g. h100-sxm=2.5")->delimiter(',');
  r->add_option("--purchase", s.purchases, "purchase price per GPU in --currency, e.g. a800-80gb-sxm=18000")->delimiter(',');
  r->add_option("--dataset-gb", s.dataset_gb, "dataset size on disk (default: the tokens as token ids)");
  r->add_option("--checkpoints-kept", s.checkpoints_kept, "full checkpoints kept (default 3)");
  r->add_flag("--psu-n-plus-n", s.n_plus_n, "N+N PSU redundancy (default N+1 for servers)");
  r->add_option("--format", s.format, "text | json | markdown | html");
  r->add_flag("--json", s.as_json, "short for --format json");
  r->add_option("-o,--output", s.output, "write the report to this file");
  AddLangFlag(r, s.lang);
  r->add_option("--threads", s.threads, "search threads (default: all cores)");

  s.review = app.add_subcommand("review", "check a proposed server against a job: fits, bottlenecks, changes");
  s.review->add_option("build", s.build_path, "build JSON (see examples/builds)")->required();
  s.job.add_overrides(s.review);  // the job flags override what the build file says
  s.review->add_option("--format", s.review_format, "text | json | markdown | html");
  s.review->add_flag("--json", s.review_json, "short for --format json");
  s.review->add_option("-o,--output", s.review_output, "write the review to this file");
  s.review->add_option("--currency", s.review_currency, "USD | CNY | EUR: every amount shown (default USD)");
  AddLangFlag(s.review, s.review_lang);
}

bool RunRecommendCommands(int& exit_status) {
  RecommendState& s = State();
  if (s.recommend && s.recommend->parsed()) {
    const ReportFormat format = s.as_json ? ReportFormat::kJson : ParseReportFormat(s.format, "--format");
    const Lang lang = ParseLang(s.lang, "--lang");
    // The flags become the request document the HTTP API takes, read by the same parser.
    json doc = s.job.document();
    json& r = doc["recommend"];
    r = json::object();
    if (!s.deadline.empty()) r["deadline"] = s.deadline;
    if (s.budget) r["budget"] = *s.budget;
    if (s.currency) r["currency"] = *s.currency;
    if (s.prefer_domestic) r["prefer_domestic"] = true;
    if (s.usage) r["usage"] = *s.usage;
    if (s.runs_per_month) r["runs_per_month"] = *s.runs_per_month;
    if (s.months) r["months"] = *s.months;
    if (s.sensitivity) r["data_sensitivity"] = *s.sensitivity;
    if (s.region) r["region"] = *s.region;
    if (s.as_of) r["as_of"] = *s.as_of;
    if (s.electricity) r["electricity_usd_per_kwh"] = *s.electricity;
    if (s.pue) r["pue"] = *s.pue;
    if (s.hosting) r["hosting_usd_per_kw_month"] = *s.hosting;
    if (!s.gpus.empty()) r["gpu"] = s.gpus;
    if (s.max_gpus) r["max_gpus"] = *s.max_gpus;
    if (s.gpus_exact) r["gpus"] = *s.gpus_exact;
    if (!s.prices.empty()) r["prices"] = PricesFromFlags(s.prices, "--price");
    if (!s.purchases.empty()) r["purchase_prices"] = PricesFromFlags(s.purchases, "--purchase");
    if (s.dataset_gb) r["dataset_gb"] = *s.dataset_gb;
    if (s.checkpoints_kept) r["checkpoints_kept"] = *s.checkpoints_kept;
    if (s.n_plus_n) r["psu_n_plus_n"] = true;
    const RecommendRequest request = RecommendRequestFromJson(doc, /*allow_paths=*/true);
    const Scenario& job = request.job;
    const PlatformPolicy& policy = request.policy;
    Recommendation rec = Recommend(job, policy, s.threads);
    WriteText(RecommendationReport(rec, format, lang), s.output);
    exit_status = 0;
    return true;
  }
  if (s.review && s.review->parsed()) {
    const ReportFormat format = s.review_json ? ReportFormat::kJson : ParseReportFormat(s.review_format, "--format");
    const Lang lang = ParseLang(s.review_lang, "--lang");
    const Currency& currency = FindCurrency(s.review_currency, "--currency");
    const BuildRequest request = BuildFromJson(ReadJsonFile(s.build_path, "build"));
    bool framework_fixed = false;
    const json job_doc = s.job.apply(request.job);
    Scenario job = JobFromDocument(Field(job_doc, "job"), /*allow_paths=*/true, framework_fixed);
    BuildReview review = ReviewBuild(request.build, job, framework_fixed);
    WriteText(ReviewReport(review, format, lang, currency), s.review_output);
    // The report is the answer; a build that cannot run the job, or fails a check, says so by its status too.
    const bool fails = !review.fits || std::any_of(review.findings.begin(), review.findings.end(),
                                                   [](const BuildFinding& f) { return f.level == "fail"; });
    exit_status = fails ? kExitMachineCannot : kExitAnswer;
    return true;
  }
  return false;
}

}  // namespace trainplan::cli
