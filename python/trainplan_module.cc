// The Python face: `import trainplan`. Each function takes the request document the HTTP API takes (a dict),
// reads it with the same readers, and returns the API's answer as a dict; bad input raises
// trainplan.InputError with the field, value and allowed of the API's 400 answer.
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"
#include "core/estimate.h"
#include "core/platform.h"
#include "core/review.h"
#include "core/search.h"
#include "io/build_reader.h"
#include "io/calibration_io.h"
#include "io/requests.h"
#include "io/scenario_reader.h"
#include "io/user_catalog_files.h"
#include "io/writers.h"

namespace py = pybind11;

namespace trainplan {
namespace {

using nlohmann::json;

// The exception classes, created once when the module is imported and alive as long as the interpreter.
PyObject* input_error_class = nullptr;
PyObject* internal_error_class = nullptr;

/// A dict as JSON text through Python's json module, so that the document is read by the same
/// depth-limited parser as an HTTP body (NaN and Infinity are refused there, naming `doc`). NumPy scalars
/// and arrays go in as their tolist().
std::string DocumentText(py::handle doc) {
  py::cpp_function plain([](py::handle value) -> py::object {
    if (py::hasattr(value, "tolist")) return value.attr("tolist")();
    throw py::type_error("trainplan: a request holds dicts, lists, strings, numbers, booleans and None, not " +
                         py::str(py::type::of(value)).cast<std::string>());
  });
  return py::module_::import("json").attr("dumps")(doc, py::arg("default") = plain).cast<std::string>();
}

/// JSON text of an answer (invalid UTF-8 in a name replaced, as the API does) and the dict it is in Python.
std::string AnswerText(const json& answer) { return answer.dump(-1, ' ', false, json::error_handler_t::replace); }
py::object FromText(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

std::once_flag user_catalogs_loaded;

/// Lays the user's catalogs (docs/catalogs.md: their directory, then `paths`) over the built-in ones, once per
/// process and before the first catalog is read, as the CLI does before any command.
void LoadCatalogsOnce(const std::vector<std::string>& paths) {
  bool loaded_now = false;
  std::call_once(user_catalogs_loaded, [&] {
    LoadUserCatalogs(UserCatalogPaths(paths), "paths");
    loaded_now = true;
  });
  if (!loaded_now && !paths.empty()) {
    throw InputError("paths", paths.front(),
                     "catalogs are read once, before the first call: call use_catalogs() before any other function");
  }
}

/// Reads the document, computes and writes the answer with the interpreter released, so other Python
/// threads run during a search.
py::object Answer(json (*answer)(const json&), py::handle doc) {
  LoadCatalogsOnce({});
  const std::string text = DocumentText(doc);
  std::string out;
  {
    py::gil_scoped_release release;
    out = AnswerText(answer(ParseDocument(text, "doc")));
  }
  return FromText(out);
}

// A local caller, like the CLI: file paths are read (a model's config_path) and the search uses every core.
constexpr bool kAllowPaths = true;

json EstimateAnswer(const json& doc) {
  const Scenario scenario = ScenarioFromJson(doc, kAllowPaths);
  return EstimateToJson(scenario, EstimateScenario(scenario));
}

json PlanAnswer(const json& doc) {
  const PlanRequest r = PlanRequestFromJson(doc, kAllowPaths);
  return PlanResultToJson(r.job, SearchPlans(r.job, r.constraints), *r.currency);
}

json RecommendAnswer(const json& doc) {
  const RecommendRequest r = RecommendRequestFromJson(doc, kAllowPaths);
  return RecommendationToJson(Recommend(r.job, r.policy));
}

json CalibrateAnswer(const json& doc) { return CalibrateDocument(doc, TodayUtc()); }

json ReviewAnswer(const json& doc) {
  const BuildRequest request = BuildFromJson(doc);
  bool framework_fixed = false;
  const Scenario job = JobFromDocument(Field(request.job, "job"), kAllowPaths, framework_fixed);
  return ReviewToJson(ReviewBuild(request.build, job, framework_fixed));
}

/// A catalog answer, which takes no request.
py::object Catalog(json (*answer)()) {
  LoadCatalogsOnce({});
  std::string out;
  {
    py::gil_scoped_release release;
    out = AnswerText(answer());
  }
  return FromText(out);
}

/// Raises `cls(message)` with the attributes the API's 400 answer names.
void RaiseInputError(const InputError& e) {
  py::object error = py::reinterpret_borrow<py::object>(input_error_class)(e.what());
  error.attr("field") = e.field();
  error.attr("value") = e.value();
  error.attr("allowed") = e.allowed();
  error.attr("code") = "invalid_input";
  PyErr_SetObject(input_error_class, error.ptr());
}

PyObject* NewErrorClass(const char* name, const char* doc, PyObject* base) {
  PyObject* cls = PyErr_NewExceptionWithDoc(name, doc, base, nullptr);
  if (cls == nullptr) throw py::error_already_set();
  return cls;
}

constexpr const char* kInputErrorDoc =
    "The request is wrong: `field` is its document path (e.g. 'training.method'), `value` what was given and "
    "`allowed` what is accepted; `code` is 'invalid_input'; str(error) is the message. The API answers these as 400 "
    "{code: 'invalid_input', error, field, value, allowed}.";

}  // namespace
}  // namespace trainplan

PYBIND11_MODULE(trainplan, m) {
  using namespace trainplan;
  m.doc() =
      "trainplan: memory, time and cost of training or fine-tuning an LLM. Each function takes the request "
      "document of the HTTP API (docs/web.md, docs/scenario.md) as a dict and returns its JSON answer as a dict.";
  m.attr("__version__") = TRAINPLAN_VERSION;

  input_error_class = NewErrorClass("trainplan.InputError", kInputErrorDoc, PyExc_ValueError);
  // Class defaults, so an InputError raised by Python code also has the four attributes.
  for (const char* name : {"field", "value", "allowed", "code"})
    PyObject_SetAttrString(input_error_class, name, py::str("").ptr());
  internal_error_class = NewErrorClass("trainplan.InternalError",
                                       "A defect of trainplan itself (e.g. a broken built-in catalog), never of "
                                       "the request; the API answers these as 500.",
                                       PyExc_RuntimeError);
  m.attr("InputError") = py::reinterpret_borrow<py::object>(input_error_class);
  m.attr("InternalError") = py::reinterpret_borrow<py::object>(internal_error_class);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      RaiseInputError(e);
    } catch (const InternalError& e) {
      PyErr_SetString(internal_error_class, e.what());
    }
  });

  m.def("estimate", [](py::handle doc) { return Answer(EstimateAnswer, doc); }, py::arg("doc"),
        "Memory per GPU and training time of one job: a scenario document {model, training, hardware, "
        "strategy}, as POST /api/estimate takes.");
  m.def("plan", [](py::handle doc) { return Answer(PlanAnswer, doc); }, py::arg("doc"),
        "The best GPU types, counts and strategies: a scenario document with a 'plan' object (gpu, gpus, "
        "max_gpus, deadline, budget, currency, objective, top, ...), as POST /api/plan takes.");
  m.def("recommend", [](py::handle doc) { return Answer(RecommendAnswer, doc); }, py::arg("doc"),
        "Buy, rent or hybrid with the bill of materials, cost and reliability: a scenario document with a "
        "'recommend' object, as POST /api/recommend takes.");
  m.def("review", [](py::handle doc) { return Answer(ReviewAnswer, doc); }, py::arg("doc"),
        "Checks a proposed server against a job: a build document (examples/builds), as POST /api/review takes.");
  m.def("calibrate", [](py::handle doc) { return Answer(CalibrateAnswer, doc); }, py::arg("doc"),
        "Fits compute, communication and allocator-overhead factors to measured runs, as `trainplan calibrate "
        "--runs` does: {'runs': [{'scenario': {...}, 'measured': {'step_time_s': ..., 'peak_reserved_gib': ...}}], "
        "'by': 'generation'}; the answer's 'file' is the calibration file to save into ~/.config/trainplan/ "
        "(docs/calibration.md).");
  m.def("use_catalogs", [](const std::vector<std::string>& paths) { LoadCatalogsOnce(paths); },
        py::arg("paths") = std::vector<std::string>{},
        "Lays user catalog files over the built-in catalogs, after those of ~/.config/trainplan (docs/catalogs.md), "
        "as `--catalog FILE` does; call it before any other function. Without it the first call reads the "
        "directory alone.");
  m.def("models", [] { return Catalog(ModelCatalogJson); }, "The built-in model catalog, as GET /api/models.");
  m.def("gpus", [] { return Catalog(GpuCatalogJson); }, "The GPU catalog, as GET /api/gpus.");
}
