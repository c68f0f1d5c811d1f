// The fuzz seeds hold every key each reader accepts: a key no seed has is one the fuzzer starts far from
// (recommend.dataset_gb went unfuzzed until a release build sized a 1e24-byte dataset). The keys are read
// from the readers' own CheckKeys lists, so a key added to a reader without a seed fails here.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The keys of every CheckKeys({...}) call in `source`, by the reader function the call sits in (the last
/// "NAME(const" definition before it at the start of a line).
std::map<std::string, std::set<std::string>> CheckedKeys(const std::string& source) {
  std::map<std::string, std::set<std::string>> keys;
  const std::regex call(R"(CheckKeys\(\{([^}]*)\}\))"), key(R"rx("([a-z0-9_]+)")rx"),
      definition(R"(\n[A-Za-z][A-Za-z:<>, ]* ([A-Za-z]+)\((const|std))");
  for (std::sregex_iterator it(source.begin(), source.end(), call), end; it != end; ++it) {
    std::string function = "?";
    const std::string before = source.substr(0, it->position());
    for (std::sregex_iterator d(before.begin(), before.end(), definition); d != std::sregex_iterator(); ++d)
      function = (*d)[1];
    const std::string list = (*it)[1];
    for (std::sregex_iterator k(list.begin(), list.end(), key); k != std::sregex_iterator(); ++k)
      keys[function].insert((*k)[1]);
  }
  return keys;
}

/// The text of the seeds whose file names start with one of `prefixes` ("" for any) in `dir`.
std::string Seeds(const fs::path& dir, const std::vector<std::string>& prefixes) {
  std::string text;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    for (const std::string& p : prefixes)
      if (name.rfind(p, 0) == 0) text += Slurp(entry.path());
  }
  return text;
}

void ExpectEveryKeySeeded(const std::string& reader, const std::set<std::string>& keys, const std::string& seeds) {
  ASSERT_FALSE(keys.empty()) << reader << ": no CheckKeys list found";
  for (const std::string& k : keys)
    EXPECT_NE(seeds.find("\"" + k + "\""), std::string::npos) << reader << " accepts \"" << k << "\" but no seed has it";
}

const fs::path kSrc = fs::path(TRAINPLAN_SOURCE_DIR) / "src";

TEST(FuzzSeeds, ScenarioKeysAreAllSeeded) {
  const std::string seeds = Seeds(kSrc / "io/fuzz_seeds", {"s_"});
  const auto keys = CheckedKeys(Slurp(kSrc / "io/scenario_reader.cc"));
  ASSERT_GE(keys.size(), 4u);
  for (const auto& [function, list] : keys) ExpectEveryKeySeeded("scenario_reader.cc " + function, list, seeds);
}

TEST(FuzzSeeds, PlanAndRecommendRequestKeysAreAllSeeded) {
  const auto keys = CheckedKeys(Slurp(kSrc / "io/requests.cc"));
  ASSERT_TRUE(keys.count("PlanRequestFromJson") && keys.count("RecommendRequestFromJson"));
  ExpectEveryKeySeeded("plan request", keys.at("PlanRequestFromJson"), Seeds(kSrc / "io/fuzz_seeds", {"p_"}));
  ExpectEveryKeySeeded("recommend request", keys.at("RecommendRequestFromJson"),
                       Seeds(kSrc / "io/fuzz_seeds", {"r_"}));
  // The HTTP handler's fuzzer reads the same requests.
  ExpectEveryKeySeeded("/api/plan", keys.at("PlanRequestFromJson"), Seeds(kSrc / "server/fuzz_seeds", {"plan"}));
  ExpectEveryKeySeeded("/api/recommend", keys.at("RecommendRequestFromJson"),
                       Seeds(kSrc / "server/fuzz_seeds", {"recommend"}));
}

TEST(FuzzSeeds, BuildKeysAreAllSeeded) {
  for (const auto& [function, list] : CheckedKeys(Slurp(kSrc / "io/build_reader.cc")))
    ExpectEveryKeySeeded("build_reader.cc " + function, list, Seeds(kSrc / "io/fuzz_seeds", {"b_"}));
}

TEST(FuzzSeeds, EveryReaderHasSeedsAndEverySeedNamesAReader) {
  // The first byte picks the reader (src/io/readers_fuzz.cc): s h b r p l g u c k.
  std::set<char> seen;
  for (const auto& entry : fs::directory_iterator(kSrc / "io/fuzz_seeds")) {
    const std::string text = Slurp(entry.path());
    ASSERT_FALSE(text.empty()) << entry.path();
    EXPECT_EQ(entry.path().filename().string()[0], text[0]) << entry.path() << ": the name's prefix is the reader";
    seen.insert(text[0]);
  }
  for (char c : std::string("shbrplguck")) EXPECT_TRUE(seen.count(c)) << "no seed for reader '" << c << "'";
}

}  // namespace
