#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace trainplan::cli {

/// "--price h100-sxm=2.5,a100-80gb-sxm=1.8" -> {"h100-sxm": 2.5, "a100-80gb-sxm": 1.8}, the object the
/// request documents take (GPU names are checked there). Throws InputError naming `flag` when an item is
/// not GPU=NUMBER.
nlohmann::json PricesFromFlags(const std::vector<std::string>& items, const std::string& flag);

/// "--sample-lengths 380,2048" (MEAN,MAX in tokens) or a file of lengths (io/sample_lengths.h) as the training
/// keys it sets: sample_mean_tokens with sample_max_tokens, or the sample_lengths histogram. Throws InputError
/// naming `flag`, the value and the forms allowed.
nlohmann::json SampleLengthsFromFlag(const std::string& value, const std::string& flag);

/// `--lang en|zh` on a command with a text report; the value is checked (ParseLang) when the command runs.
void AddLangFlag(CLI::App* cmd, std::string& lang);

}  // namespace trainplan::cli
