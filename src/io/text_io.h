#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace trainplan {

/// Parses the JSON file at `path` (depth-limited, base/document.h). An unreadable file is an InputError
/// naming `field`, the path and `what` was expected (e.g. "a readable Hugging Face config.json file");
/// malformed or too deeply nested JSON names `field`, the path and what is wrong.
nlohmann::json ReadJsonFile(const std::string& path, const std::string& field,
                            const std::string& what = "a readable JSON file");

/// Writes `text` to stdout when `path` is empty or "-", else to the file (reporting "wrote PATH" on stderr).
/// A file that cannot be written is an InputError naming "output" (the CLI spells it -o).
void WriteText(const std::string& text, const std::string& path);

}  // namespace trainplan
