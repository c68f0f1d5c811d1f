#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainplan::cli {

/// "--price h100-sxm=2.5,a100-80gb-sxm=1.8" -> {"h100-sxm": 2.5, "a100-80gb-sxm": 1.8}, the object the
/// request documents take (GPU names are checked there). Throws InputError naming `flag` when an item is
/// not GPU=NUMBER.
nlohmann::json PricesFromFlags(const std::vector<std::string>& items, const std::string& flag);

}  // namespace trainplan::cli
