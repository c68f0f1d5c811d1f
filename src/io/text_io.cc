#include "io/text_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/document.h"
#include "base/error.h"

namespace trainplan {

nlohmann::json ReadJsonFile(const std::string& path, const std::string& field, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw InputError(field, path, what);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return ParseDocument(text.str(), field);
  } catch (const InputError& e) {
    throw InputError(field, path, e.allowed());  // the file's name says more than its first bytes
  }
}

void WriteText(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  errno = 0;
  std::ofstream out(path);
  if (!out) throw OutputError(fmt::format("{}: {}", path, errno ? std::strerror(errno) : "cannot be opened"));
  out << text;
  out.close();  // closing flushes: a full disk fails here
  if (!out) throw OutputError(fmt::format("{}: {}", path, errno ? std::strerror(errno) : "cannot be written"));
  std::cerr << "wrote " << path << "\n";
}

}  // namespace trainplan
