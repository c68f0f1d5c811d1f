// libFuzzer over the file readers: the first byte picks the reader (s scenario document, h Hugging Face
// config.json, b build document, r recommend request, l a file of sample lengths, g a training log, u a Hugging
// Face repo id and cache ref, c a user catalog file laid over each built-in catalog it names, k a calibration
// runs file, p a plan request, anything else the first three),
// the rest is the file's text, parsed as ReadJsonFile parses it (the sample lengths as the text it is). A reader may refuse its input only with InputError; any other exception, a
// crash, a hang or a sanitizer report is a bug.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <string_view>

#include "base/document.h"
#include "base/error.h"
#include "catalog/load.h"
#include "catalog/user_catalog.h"
#include "io/build_reader.h"
#include "io/calibration_io.h"
#include "io/hf_config.h"
#include "io/hf_hub.h"
#include "io/model_catalog.h"
#include "io/requests.h"
#include "io/run_logs.h"
#include "io/sample_lengths.h"
#include "io/scenario_reader.h"

namespace {

template <typename Read>
void Expect(Read read) {
  try {
    read();
  } catch (const trainplan::InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not an InputError: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (kind == 'g') {  // a training log (io/run_logs.h), read as the text it is
    Expect([&] { trainplan::ReadRunLog(text, "fuzz.log"); });
    return 0;
  }
  if (kind == 'c') {
    Expect([&] {
      const trainplan::UserCatalog user = trainplan::ParseUserCatalog(text, "fuzz.json");
      trainplan::CheckUserCatalog(user);
      if (user.doc.contains("models")) trainplan::CheckModelCatalog({user});
    });
    return 0;
  }
  if (kind == 'k') {  // `trainplan calibrate --runs`: a JSON array or JSONL of runs
    Expect([&] { trainplan::ReadCalibrationRuns(text, "runs.jsonl"); });
    return 0;
  }
  if (kind == 'l') {
    Expect([&] { trainplan::SampleLengthsFromText(text, "--sample-lengths", "fuzz"); });
    return 0;
  }
  if (kind == 'u') {
    Expect([&] { trainplan::ParseHubRepoId(text); });
    Expect([&] { trainplan::SnapshotFromRef(text); });
    return 0;
  }
  Expect([&] {
    const nlohmann::json doc = trainplan::ParseDocument(text, "file");
    const trainplan::Field root(doc, "");
    if (kind == 's' || (kind != 'h' && kind != 'b' && kind != 'p')) Expect([&] { trainplan::ScenarioFromDocument(root, false); });
    if (kind == 'h' || (kind != 's' && kind != 'b' && kind != 'p')) {
      Expect([&] { trainplan::ModelFromHfConfig(trainplan::Field(doc, "config"), "fuzz"); });
    }
    if (kind == 'b' || (kind != 's' && kind != 'h' && kind != 'p')) Expect([&] { trainplan::BuildFromDocument(root); });
    if (kind == 'r') Expect([&] { trainplan::RecommendRequestFromJson(doc, false); });
    if (kind == 'p') Expect([&] { trainplan::PlanRequestFromJson(doc, false); });
  });
  return 0;
}
