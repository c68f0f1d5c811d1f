#include "server/api.h"

#include <exception>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "catalog/load.h"
#include "core/estimate.h"
#include "core/search.h"
#include "io/requests.h"
#include "io/writers.h"
#include "core/review.h"
#include "io/build_reader.h"
#include "server/answer_cache.h"
#include "text/i18n.h"

namespace trainplan {

namespace {

using nlohmann::json;

constexpr size_t kMaxShownValue = 200;  // an echoed value is cut here: a request may be a megabyte

/// Invalid UTF-8 in a request (echoed in an error, or a model name) is replaced, not an exception.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

ApiResponse Json(int status, const json& j) { return {status, "application/json", Dump(j), {}}; }

ApiResponse WrongMethod(std::string_view method, const char* message, const char* allow) {
  ApiResponse r = ErrorResponse(405, "method_not_allowed", message, "method", std::string(method), allow);
  r.allow = allow;
  return r;
}

ApiResponse NotFound(const char* message, std::string_view path, const char* allowed) {
  return ErrorResponse(404, "not_found", message, "path", std::string(path), allowed);
}

/// The server's ceiling on a search's size: the default when the request names none, a 400 above it.
int CappedGpus(int requested, bool given, const char* field, const ApiLimits& limits) {
  if (!given) return limits.max_gpus;
  if (requested > limits.max_gpus)
    throw InputError(field, std::to_string(requested), fmt::format("at most {} on this server", limits.max_gpus));
  return requested;
}

/// The request's `lang` (en when absent): the language of the answer's sentences, its keys stay English. Taken
/// out of the document so that each reader sees only its own keys.
Lang TakeLang(json& doc) {
  const auto it = doc.is_object() ? doc.find("lang") : doc.end();
  if (it == doc.end()) return Lang::kEn;
  if (!it->is_string()) throw InputError("lang", Dump(*it), std::string(kLangNames));
  const Lang lang = ParseLang(it->get<std::string>(), "lang");
  doc.erase(it);
  return lang;
}

bool Given(const json& doc, const char* section, const char* key) {
  auto it = doc.find(section);
  return it != doc.end() && it->is_object() && it->contains(key);
}

json Plan(const json& doc, const ApiLimits& limits, Lang lang, std::stop_token stop) {
  PlanRequest r = PlanRequestFromJson(doc, /*allow_paths=*/false);
  PlanConstraints& c = r.constraints;
  c.max_gpus = CappedGpus(c.max_gpus, Given(doc, "plan", "max_gpus"), "plan.max_gpus", limits);
  if (c.gpus > limits.max_gpus) CappedGpus(c.gpus, true, "plan.gpus", limits);
  if (c.top > limits.max_top)
    throw InputError("plan.top", std::to_string(c.top), fmt::format("at most {} on this server", limits.max_top));
  c.stop = std::move(stop);
  return PlanResultToJson(r.job, SearchPlans(r.job, c, limits.search_threads), *r.currency, lang);
}

json RecommendJson(const json& doc, const ApiLimits& limits, Lang lang, std::stop_token stop) {
  RecommendRequest r = RecommendRequestFromJson(doc, /*allow_paths=*/false);
  PlatformPolicy& p = r.policy;
  p.max_gpus = CappedGpus(p.max_gpus, Given(doc, "recommend", "max_gpus"), "recommend.max_gpus", limits);
  if (p.gpus > limits.max_gpus) CappedGpus(p.gpus, true, "recommend.gpus", limits);
  return RecommendationToJson(Recommend(r.job, p, limits.search_threads, std::move(stop)), lang);
}

json Review(const json& doc, const ApiLimits& limits, Lang lang, std::stop_token stop) {
  BuildRequest request = BuildFromJson(doc);
  BuildSpec& build = request.build;
  if (build.gpus > limits.max_gpus) CappedGpus(build.gpus, true, "gpus", limits);
  bool framework_fixed = false;
  Scenario job = JobFromDocument(Field(request.job, "job"), /*allow_paths=*/false, framework_fixed);
  return ReviewToJson(ReviewBuild(build, job, framework_fixed, limits.search_threads, std::move(stop)), lang);
}

json EstimateJson(const json& doc, Lang lang) {
  Scenario scenario = ScenarioFromJson(doc, /*allow_paths=*/false);
  return EstimateToJson(scenario, EstimateScenario(scenario), lang);
}

/// The searches' answers (plan, recommend, review) by request. Bounds (assumption): a DeepSeek-V3
/// recommendation is about 40 KB, so 256 answers of that size take 10 MB, well inside the 64 MiB.
AnswerCache& SearchAnswers() {
  static AnswerCache cache(256, 64 << 20);
  return cache;
}

/// The user catalogs in effect (the built-in ones are fixed in the binary): a different set never shares an answer.
size_t CatalogIdentity() {
  std::string all;
  for (const UserCatalog& c : RegisteredUserCatalogs()) all += c.path + '\0' + Dump(c.doc) + '\0';
  return std::hash<std::string>{}(all);
}

/// A search is a pure function of the request in canonical form (keys sorted, no spaces), its language, the
/// server's limits, the catalogs and the day (a recommendation reads export rulings on today's date unless
/// the request names one): the same key, the same answer.
std::string SearchKey(std::string_view name, const json& doc, Lang lang, const ApiLimits& limits) {
  return fmt::format("{} lang={} max_gpus={} max_top={} day={} catalogs={:x} {}", name, static_cast<int>(lang),
                     limits.max_gpus, limits.max_top, TodayUtc(), CatalogIdentity(), Dump(doc));
}

json Search(std::string_view name, const json& doc, const ApiLimits& limits, Lang lang, std::stop_token stop) {
  if (name == "plan") return Plan(doc, limits, lang, std::move(stop));
  if (name == "recommend") return RecommendJson(doc, limits, lang, std::move(stop));
  return Review(doc, limits, lang, std::move(stop));
}

/// A search's answer from the cache, else computed and kept. A stopped search throws SearchCancelled past the
/// store: only complete answers are kept.
ApiResponse CachedSearch(std::string_view name, const json& doc, const ApiLimits& limits, Lang lang,
                         std::stop_token stop) {
  std::string key = SearchKey(name, doc, lang, limits);
  if (std::optional<std::string> body = SearchAnswers().Find(key)) return {200, "application/json", std::move(*body), {}};
  ApiResponse r = Json(200, Search(name, doc, limits, lang, std::move(stop)));
  SearchAnswers().Store(std::move(key), r.body);
  return r;
}

const char* ContentType(std::string_view name) {
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "text/html; charset=utf-8";
}

ApiResponse Route(std::string_view method, std::string_view path, std::string_view body, const ApiLimits& limits,
                  std::stop_token stop) {
  const bool get = method == "GET" || method == "HEAD";
  const bool post = method == "POST";
  if (path == "/healthz") return get ? ApiResponse{200, "application/json", R"({"status":"ok"})", {}}
                                     : WrongMethod(method, "use GET", "GET, HEAD");
  if (path == "/api/models" || path == "/api/gpus") {
    if (!get) return WrongMethod(method, "use GET", "GET, HEAD");
    // The catalogs are built into the binary: the answer never changes while it runs.
    static const std::string models = Dump(ModelCatalogJson());
    static const std::string gpus = Dump(GpuCatalogJson());
    return {200, "application/json", path == "/api/models" ? models : gpus, {}};
  }
  if (path.starts_with("/api/")) {
    const std::string_view name = path.substr(5);
    if (name != "estimate" && name != "plan" && name != "recommend" && name != "review")
      return NotFound("no such endpoint", path,
                      "/api/estimate, /api/plan, /api/recommend, /api/review, /api/models, /api/gpus");
    if (!post) return WrongMethod(method, "use POST with a JSON body", "POST");
    json doc = ParseDocument(body, "body");
    const Lang lang = TakeLang(doc);
    if (name == "estimate") return Json(200, EstimateJson(doc, lang));
    return CachedSearch(name, doc, limits, lang, std::move(stop));
  }
  if (!get) return WrongMethod(method, "use GET", "GET, HEAD");
  const std::string_view asset = path == "/" ? std::string_view("index.html") : path.substr(1);
  const std::string_view data = WebAsset(asset);
  if (data.empty()) return NotFound("not found", path, "/ and /api/...");
  return {200, ContentType(asset), std::string(data), {}};
}

}  // namespace

ApiResponse ErrorResponse(int status, std::string_view code, const std::string& message, const std::string& field,
                          const std::string& value, const std::string& allowed) {
  std::string shown = value.size() > kMaxShownValue ? value.substr(0, kMaxShownValue) + "..." : value;
  return Json(status, {{"error", message}, {"code", code}, {"field", field}, {"value", shown}, {"allowed", allowed}});
}

ApiResponse HandleRequest(std::string_view method, std::string_view path, std::string_view body,
                          const ApiLimits& limits, std::stop_token stop) {
  try {
    return Route(method, path, body, limits, std::move(stop));
  } catch (const InputError& e) {
    return ErrorResponse(400, "invalid_input", e.what(), e.field(), e.value(), e.allowed());
  } catch (const SearchCancelled& e) {
    return ErrorResponse(503, "search_cancelled", e.what());
  } catch (const std::exception& e) {
    return ErrorResponse(500, "internal_error", fmt::format("internal error: {}", e.what()));
  } catch (...) {
    return ErrorResponse(500, "internal_error", "internal error");
  }
}

}  // namespace trainplan
