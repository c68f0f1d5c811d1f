// libFuzzer over the snapshot reader `trainplan diff` uses: the input is a snapshot file's text, parsed as
// ReadJsonFile parses it, read by SnapshotFromJson and diffed against itself. The reader may refuse its input
// only with InputError; any other exception, a crash, a hang or a sanitizer report is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "base/document.h"
#include "base/error.h"
#include "machine/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const trainplan::Snapshot snapshot = trainplan::SnapshotFromJson(trainplan::ParseDocument(text, "a"), "a");
    (void)trainplan::DiffSnapshots(snapshot, snapshot);
  } catch (const trainplan::InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not an InputError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
