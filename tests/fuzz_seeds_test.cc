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
#include <nlohmann/json.hpp>

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

TEST(FuzzSeeds, HfConfigKeysAreAllSeeded) {
  // Every key hf_config.cc reads is the first argument of a ConfigReader call: c.Positive("hidden_size"),
  // c.Positive({"n_layer", "num_hidden_layers"}), attn.BoolOr("alibi", false), c.Fail("layer_types", ...).
  const std::string source = Slurp(kSrc / "io/hf_config.cc");
  const std::regex call(R"rx(\.[A-Z][A-Za-z]*\((\{[^}]*\}|"[a-z_0-9]+"))rx"), key(R"rx("([a-z_0-9]+)")rx");
  std::set<std::string> keys;
  for (std::sregex_iterator it(source.begin(), source.end(), call), end; it != end; ++it) {
    const std::string args = (*it)[1];
    for (std::sregex_iterator k(args.begin(), args.end(), key); k != std::sregex_iterator(); ++k) keys.insert((*k)[1]);
  }
  ASSERT_GE(keys.size(), 80u);
  ExpectEveryKeySeeded("hf_config.cc", keys, Seeds(kSrc / "io/fuzz_seeds", {"h_"}));
}

/// The member names of every object in `value`, but those of a model's config.json (the Hugging Face reader's,
/// seeded by h_*.json) and comments.
void MemberNames(const nlohmann::json& value, std::set<std::string>& names) {
  if (value.is_array())
    for (const auto& item : value) MemberNames(item, names);
  if (!value.is_object()) return;
  for (const auto& [name, member] : value.items()) {
    if (name.rfind('_', 0) == 0) continue;
    names.insert(name);
    if (name != "config") MemberNames(member, names);
  }
}

TEST(FuzzSeeds, UserCatalogKeysAreAllSeeded) {
  // A user catalog may set any key of the built-in files: scripts/catalog-fuzz-seeds.py writes one seed per
  // file with all of them; rerun it when a catalog gains a key.
  const std::string seeds = Seeds(kSrc / "io/fuzz_seeds", {"c_"});
  for (const char* section : {"gpus", "links", "cpus", "parts", "prices", "frameworks", "efficiency", "job_costs",
                              "models"}) {
    std::set<std::string> names;
    MemberNames(nlohmann::json::parse(Slurp(fs::path(TRAINPLAN_SOURCE_DIR) / "data" / (std::string(section) + ".json"))),
                names);
    ASSERT_GE(names.size(), 5u) << section;
    ExpectEveryKeySeeded(std::string("user catalog ") + section, names, seeds);
  }
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
