#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace trainplan {

/// Parses the JSON file at `path` (depth-limited, base/document.h). An unreadable file is an InputError
/// naming `field`, the path and `what` was expected (e.g. "a readable Hugging Face config.json file");
/// malformed or too deeply nested JSON names `field`, the path and what is wrong.
nlohmann::json ReadJsonFile(const std::string& path, const std::string& field,
                            const std::string& what = "a readable JSON file");

/// An answer that could not be written (a full disk, a closed pipe, a directory without write permission): the
/// machine cannot take the answer, which is neither bad input nor a defect. what() names the file and the reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes `text` to stdout when `path` is empty or "-", else to the file (reporting "wrote PATH" on stderr).
/// A file that cannot be opened or written is an OutputError naming the file and the system's reason; a failed
/// write to stdout is left to the face, which checks stdout once it has written everything.
void WriteText(const std::string& text, const std::string& path);

}  // namespace trainplan
