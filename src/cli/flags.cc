#include "cli/flags.h"

#include <filesystem>
#include <optional>

#include <CLI/CLI.hpp>

#include "base/error.h"
#include "io/sample_lengths.h"

namespace trainplan::cli {

nlohmann::json PricesFromFlags(const std::vector<std::string>& items, const std::string& flag) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(flag, item, "GPU=price, e.g. h100-sxm=2.5");
    try {
      size_t used = 0;
      const std::string number = item.substr(eq + 1);
      const double usd = std::stod(number, &used);
      if (used != number.size()) throw std::invalid_argument(number);
      out[item.substr(0, eq)] = usd;
    } catch (const std::exception&) {
      throw InputError(flag, item, "a price (a number) after '='");
    }
  }
  return out;
}

namespace {

/// The whole of `text` as a number, if it is one.
std::optional<double> WholeNumber(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json SampleLengthsFromFlag(const std::string& value, const std::string& flag) {
  if (const auto comma = value.find(','); comma != std::string::npos) {
    const auto mean = WholeNumber(value.substr(0, comma)), max = WholeNumber(value.substr(comma + 1));
    if (mean && max) {
      if (!(*mean >= 1 && *mean <= *max))
        throw InputError(flag, value, "MEAN,MAX in tokens with 1 <= MEAN <= MAX, e.g. 380,2048");
      return {{"sample_mean_tokens", *mean}, {"sample_max_tokens", *max}};
    }
  }
  if (!std::filesystem::is_regular_file(value))
    throw InputError(flag, value,
                     "MEAN,MAX in tokens (e.g. 380,2048), or an existing file of sample lengths: one length per "
                     "line, `length count` per line, JSON Lines or a JSON array of lengths or of records with "
                     "input_ids, length or num_tokens");
  nlohmann::json bins = nlohmann::json::array();
  for (const auto& [tokens, fraction] : SampleLengthsFromFile(value, flag)) bins.push_back({tokens, fraction});
  return {{"sample_lengths", bins}};
}

void AddLangFlag(CLI::App* cmd, std::string& lang) {
  cmd->add_option("--lang", lang, "language of the text, Markdown and HTML report: en | zh (zh-CN); --json stays English");
}

}  // namespace trainplan::cli
