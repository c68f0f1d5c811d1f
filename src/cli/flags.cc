#include "cli/flags.h"

#include "base/error.h"

namespace trainplan::cli {

nlohmann::json PricesFromFlags(const std::vector<std::string>& items, const std::string& flag) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError(flag, item, "GPU=USD, e.g. h100-sxm=2.5");
    try {
      size_t used = 0;
      const std::string number = item.substr(eq + 1);
      const double usd = std::stod(number, &used);
      if (used != number.size()) throw std::invalid_argument(number);
      out[item.substr(0, eq)] = usd;
    } catch (const std::exception&) {
      throw InputError(flag, item, "a number of USD after '='");
    }
  }
  return out;
}

}  // namespace trainplan::cli
