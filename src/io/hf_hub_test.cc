#include "io/hf_hub.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "base/error.h"
#include "core/model.h"
#include "io/model_catalog.h"
#include "support/run_cli.h"

namespace trainplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kLlama32_1bParams = 1235814400;  // data/models.json official_params of llama-3.2-1b
constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kToken = "hf_fixtureToken123";

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/tests/fixtures/hub/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

/// A fake Hub on a free loopback port: serves the fixtures under /{org}/{name}/resolve/{revision}/config.json,
/// answering per repo as the Hub does (gated, missing, slow, broken, oversized, moved).
class FakeHub {
 public:
  FakeHub() {
    server_.Get(R"(/org/([^/]+)/resolve/([^/]+)/config\.json)",
                [this](const httplib::Request& req, httplib::Response& res) { Serve(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeHub() { Stop(); }

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string Endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string LastAuthorization() {
    std::lock_guard lock(mutex_);
    return last_authorization_;
  }
  std::string LastPath() {
    std::lock_guard lock(mutex_);
    return last_path_;
  }

 private:
  void Serve(const httplib::Request& req, httplib::Response& res) {
    const std::string repo = req.matches[1];
    const std::string authorization = req.get_header_value("Authorization");
    {
      std::lock_guard lock(mutex_);
      last_authorization_ = authorization;
      last_path_ = req.path;
    }
    if (repo == "gated" && authorization != std::string("Bearer ") + kToken) {
      res.status = 401;
      res.set_header("X-Error-Code", "GatedRepo");
      res.set_header("X-Error-Message", "Access to model org/gated is restricted. You must have access to it.");
      return;
    }
    if (repo == "missing") {
      res.status = 404;
      res.set_header("X-Error-Code", "RepoNotFound");
      return;
    }
    if (repo == "slow") {  // answers after 3 s, or when the test ends
      std::unique_lock lock(mutex_);
      released_cv_.wait_for(lock, std::chrono::seconds(3), [this] { return released_; });
    }
    if (repo == "moved") {
      res.status = 307;
      res.set_header("Location", "/org/tiny-llama/resolve/main/config.json");
      return;
    }
    res.set_header("X-Repo-Commit", kCommit);
    if (repo == "broken") return res.set_content(Fixture("truncated.json"), "application/json");
    if (repo == "huge") return res.set_content(std::string(kMaxHubConfigBytes + 1, ' '), "application/json");
    res.set_content(Fixture("llama-3.2-1b.json"), "application/json");
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::string last_authorization_, last_path_;
};

/// Every variable huggingface_hub reads, pointed at a fresh temporary directory (never the real home or
/// network: the default endpoint refuses connections) and restored afterwards.
class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trainplan-hub-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      saved_.emplace(name, value == nullptr ? std::nullopt : std::optional<std::string>(value));
      unsetenv(name);
    }
    Set("HF_HUB_CACHE", (dir_ / "hub").string());
    Set("HF_HOME", (dir_ / "home").string());
    Set("HF_ENDPOINT", "http://127.0.0.1:1");
    Set("HF_HUB_DOWNLOAD_TIMEOUT", "2");
  }
  void TearDown() override {
    SetHubOffline(false);
    for (const auto& [name, value] : saved_) value ? Set(name.c_str(), *value) : (void)unsetenv(name.c_str());
    fs::remove_all(dir_);
  }
  static void Set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }
  fs::path RepoDir(const std::string& repo_folder) const { return dir_ / "hub" / repo_folder; }

  fs::path dir_;

 private:
  static constexpr const char* kVariables[] = {
      "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_ENDPOINT", "HF_TOKEN",
      "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "HF_HUB_DOWNLOAD_TIMEOUT"};
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(HubRepoId, ReadsOrgNameAndRevisionAndRefusesWhatTheHubRefuses) {
  const auto id = ParseHubRepoId("meta-llama/Llama-3.1-8B@refs/pr/12");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->repo, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(id->revision, "refs/pr/12");
  EXPECT_EQ(ParseHubRepoId("Qwen/Qwen2.5-0.5B")->revision, "");
  for (const char* bad : {"llama-3-8b", "a/b/c", "./x", "../org/x", "/abs/x", "org/", "/name", "org/na--me", "org/a..b",
                          "org/-x", "org/x.", "org/x@", "org/x@../../etc", "org/x@a//b", "org/na me", "org/x@main/."})
    EXPECT_FALSE(ParseHubRepoId(bad).has_value()) << bad;
}

TEST(HubRepoId, ARefNamesOneSnapshotInsideTheCache) {
  EXPECT_EQ(SnapshotFromRef(std::string(kCommit) + "\n"), kCommit);
  for (const char* bad : {"", "\n", "..", ".", "../../etc", "a/b", "abc def", "x\x01"})
    EXPECT_FALSE(SnapshotFromRef(bad).has_value()) << bad;
}

TEST_F(HubTest, FetchesOnceThenReadsTheCacheOffline) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint() + "/");  // a trailing slash is dropped
  const ModelSpec fetched = FindModel("org/tiny-llama");
  EXPECT_EQ(CountParams(fetched).total, kLlama32_1bParams);
  EXPECT_EQ(fetched.name, "org/tiny-llama");
  EXPECT_EQ(fetched.hf_id, "org/tiny-llama");
  const fs::path cached = RepoDir("models--org--tiny-llama") / "snapshots" / kCommit / "config.json";
  EXPECT_EQ(fetched.source, fmt::format("fetched {}/org/tiny-llama/resolve/main/config.json (commit {}), cached at {}",
                                        hub.Endpoint(), kCommit, cached.string()));
  EXPECT_EQ(hub.LastAuthorization(), "");  // no token configured, none sent
  EXPECT_EQ(Fixture("llama-3.2-1b.json"), [&] {
    std::ifstream in(cached);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }());
  std::ifstream ref(RepoDir("models--org--tiny-llama") / "refs" / "main");
  std::string ref_text((std::istreambuf_iterator<char>(ref)), {});
  EXPECT_EQ(ref_text, kCommit);

  hub.Stop();
  Set("HF_HUB_OFFLINE", "1");
  const ModelSpec from_cache = FindModel("org/tiny-llama");
  EXPECT_EQ(CountParams(from_cache).total, kLlama32_1bParams);
  EXPECT_EQ(from_cache.source, "Hugging Face cache: " + cached.string());
  unsetenv("HF_HUB_OFFLINE");
  SetHubOffline(true);  // --offline
  EXPECT_EQ(FindModel("org/tiny-llama").source, "Hugging Face cache: " + cached.string());
}

TEST_F(HubTest, GatedRepoNeedsTheTokenAndGetsItFromTheEnvironmentOrTheSavedLogin) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint());
  const std::string error = ErrorOf([] { FindModel("org/gated"); });
  EXPECT_NE(error.find("invalid model: 'org/gated'; gated or private on " + hub.Endpoint() + " (HTTP 401)"),
            std::string::npos) << error;
  EXPECT_NE(error.find("set HF_TOKEN"), std::string::npos) << error;
  EXPECT_NE(error.find("the Hub says: Access to model org/gated is restricted"), std::string::npos) << error;

  Set("HF_TOKEN", "hf_wrong");
  EXPECT_NE(ErrorOf([] { FindModel("org/gated"); }).find("the token sent (HF_TOKEN or the saved login) has no access"),
            std::string::npos);
  unsetenv("HF_TOKEN");

  WriteFile(dir_ / "home" / "token", std::string(kToken) + "\n");  // what `hf auth login` saves
  EXPECT_EQ(CountParams(FindModel("org/gated")).total, kLlama32_1bParams);
  EXPECT_EQ(hub.LastAuthorization(), std::string("Bearer ") + kToken);
  fs::remove_all(dir_ / "hub");
  Set("HF_TOKEN", kToken);
  fs::remove(dir_ / "home" / "token");
  EXPECT_EQ(CountParams(FindModel("org/gated@v1.0")).total, kLlama32_1bParams);
  EXPECT_EQ(hub.LastPath(), "/org/gated/resolve/v1.0/config.json");
}

TEST_F(HubTest, MissingRepoSaysSoNamingTheEndpoint) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint());
  const std::string error = ErrorOf([] { FindModel("org/missing@refs/pr/3"); });
  EXPECT_NE(error.find(fmt::format("invalid model: 'org/missing@refs/pr/3'; no such repository or file on {}: "
                                   "{}/org/missing/resolve/refs%2Fpr%2F3/config.json (HTTP 404)",
                                   hub.Endpoint(), hub.Endpoint())),
            std::string::npos) << error;
}

TEST_F(HubTest, SlowServerTimesOutQuickly) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint());
  Set("HF_HUB_DOWNLOAD_TIMEOUT", "0.2");
  const auto started = std::chrono::steady_clock::now();
  const std::string error = ErrorOf([] { FindModel("org/slow"); });
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(error.find("no answer from " + hub.Endpoint() + " within 0.2 s (HF_HUB_DOWNLOAD_TIMEOUT)"),
            std::string::npos) << error;
  EXPECT_LT(elapsed_s, 1.5);
  EXPECT_GE(elapsed_s, 0.15);
}

TEST_F(HubTest, MalformedAndOversizedBodiesAreRefusedAndNotCached) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint());
  const std::string broken = ErrorOf([] { FindModel("org/broken"); });
  EXPECT_NE(broken.find(fmt::format("invalid model: 'org/broken'; {}/org/broken/resolve/main/config.json is not a "
                                    "config.json: ",
                                    hub.Endpoint())),
            std::string::npos) << broken;
  EXPECT_FALSE(fs::exists(RepoDir("models--org--broken")));
  const std::string huge = ErrorOf([] { FindModel("org/huge"); });
  EXPECT_NE(huge.find("sent more than 4 MiB"), std::string::npos) << huge;
  EXPECT_FALSE(fs::exists(RepoDir("models--org--huge")));
}

TEST_F(HubTest, FollowsARedirectOnTheSameHost) {
  FakeHub hub;
  Set("HF_ENDPOINT", hub.Endpoint());
  Set("HF_TOKEN", kToken);
  EXPECT_EQ(CountParams(FindModel("org/moved")).total, kLlama32_1bParams);
  EXPECT_EQ(hub.LastPath(), "/org/tiny-llama/resolve/main/config.json");
  EXPECT_EQ(hub.LastAuthorization(), std::string("Bearer ") + kToken);  // same host: the token follows
}

TEST_F(HubTest, CacheIsReadWithoutNetworkByRefThenCommitThenOnlySnapshot) {
  // The endpoint refuses connections: any attempt to fetch would fail the test with "cannot reach".
  const fs::path repo = RepoDir("models--org--pair");
  const std::string older = "1111111111111111111111111111111111111111";
  WriteFile(repo / "snapshots" / kCommit / "config.json", Fixture("qwen2.5-0.5b.json"));
  WriteFile(repo / "snapshots" / older / "config.json", Fixture("llama-3.2-1b.json"));
  WriteFile(repo / "refs" / "main", kCommit);
  WriteFile(repo / "refs" / "v1", older + "\n");
  const int64_t qwen_params = CountParams(FindModel("qwen2.5-0.5b")).total;
  EXPECT_EQ(CountParams(FindModel("org/pair")).total, qwen_params);
  EXPECT_EQ(CountParams(FindModel("org/pair@v1")).total, kLlama32_1bParams);
  EXPECT_EQ(CountParams(FindModel("org/pair@" + older)).total, kLlama32_1bParams);
  EXPECT_EQ(FindModel("org/pair").model_type, "qwen2");

  // Copied without refs: the only snapshot is main; of two, neither is, and there is nothing to fetch from.
  const fs::path lone = RepoDir("models--org--lone");
  WriteFile(lone / "snapshots" / older / "config.json", Fixture("llama-3.2-1b.json"));
  EXPECT_EQ(CountParams(FindModel("org/lone")).total, kLlama32_1bParams);
  fs::remove(repo / "refs" / "main");
  EXPECT_NE(ErrorOf([] { FindModel("org/pair"); }).find("cannot reach http://127.0.0.1:1 (could not connect)"), std::string::npos);

  // A damaged ref is not followed out of the cache.
  WriteFile(repo / "refs" / "main", "../../../../etc");
  EXPECT_NE(ErrorOf([] { FindModel("org/pair"); }).find("cannot reach"), std::string::npos);
}

TEST_F(HubTest, OfflineAndNotCachedSaysWhereItLooked) {
  Set("HF_HUB_OFFLINE", "true");
  const std::string error = ErrorOf([] { FindModel("org/absent"); });
  EXPECT_NE(error.find("invalid model: 'org/absent'; not in the cache at " + RepoDir("models--org--absent").string() +
                       "; run without --offline (and with HF_HUB_OFFLINE unset) to fetch it, or pass a config.json path"),
            std::string::npos) << error;
}

TEST_F(HubTest, SettingsComeFromTheEnvironmentAsHuggingfaceHubReadsThem) {
  unsetenv("HF_HUB_CACHE");
  unsetenv("HF_ENDPOINT");
  HubSettings s = HubSettingsFromEnvironment();
  EXPECT_EQ(s.cache_dir, (dir_ / "home" / "hub").string());
  EXPECT_EQ(s.endpoint, "https://huggingface.co");
  EXPECT_EQ(s.timeout_s, 2);
  EXPECT_EQ(s.token, "");
  unsetenv("HF_HOME");
  Set("XDG_CACHE_HOME", (dir_ / "xdg").string());
  EXPECT_EQ(HubSettingsFromEnvironment().cache_dir, (dir_ / "xdg" / "huggingface" / "hub").string());
  Set("HF_TOKEN_PATH", (dir_ / "tok").string());
  WriteFile(dir_ / "tok", "  hf_abc \n");
  EXPECT_EQ(HubSettingsFromEnvironment().token, "hf_abc");
  Set("HF_HUB_DOWNLOAD_TIMEOUT", "soon");
  EXPECT_EQ(ErrorOf([] { HubSettingsFromEnvironment(); }),
            "invalid HF_HUB_DOWNLOAD_TIMEOUT: 'soon'; seconds above 0 and at most 3600 (default 10)");
  unsetenv("HF_HUB_DOWNLOAD_TIMEOUT");
  Set("HF_ENDPOINT", "ftp://mirror");
  EXPECT_EQ(ErrorOf([] { HubSettingsFromEnvironment(); }),
            "invalid HF_ENDPOINT: 'ftp://mirror'; an http:// or https:// URL, such as https://hf-mirror.com");
}

TEST_F(HubTest, APathThatDoesNotExistIsFileNotFoundNotUnknownModel) {
  for (const char* path : {"./nope/config.json", "missing.json", "/no/such/dir/config.json", "runs/out/ckpt"})
    EXPECT_EQ(ErrorOf([&] { FindModel(path); }), fmt::format("invalid model: '{}'; file not found: {}", path, path));
  fs::create_directories(dir_ / "checkpoint-500");
  const std::string dir = (dir_ / "checkpoint-500").string();
  EXPECT_EQ(ErrorOf([&] { LocalModelConfig(dir); }),
            fmt::format("invalid model: '{}'; file not found: {}/config.json", dir, dir));
  WriteFile(dir_ / "checkpoint-500" / "config.json", Fixture("llama-3.2-1b.json"));
  EXPECT_EQ(LocalModelConfig(dir), dir + "/config.json");
  EXPECT_EQ(LocalModelConfig((dir_ / "checkpoint-500" / "config.json").string()), dir + "/config.json");
  EXPECT_EQ(LocalModelConfig("llama-3-8b"), std::nullopt);
  fs::create_directories(dir_ / "llama-3-8b");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  EXPECT_EQ(LocalModelConfig("llama-3-8b"), std::nullopt);  // an output directory named like a catalog model
  fs::current_path(cwd);
}

TEST_F(HubTest, UnknownModelSuggestsNamesAndSaysHowToGiveAConfig) {
  const std::string error = ErrorOf([] { FindModel("lama-3-8b"); });
  EXPECT_NE(error.find("invalid model: 'lama-3-8b'; unknown model; did you mean: llama-3-8b"), std::string::npos)
      << error;
  EXPECT_NE(error.find("or a config.json path (--model ./config.json, or {\"config_path\": \"./config.json\"} in a "
                       "scenario)"),
            std::string::npos) << error;
}

TEST_F(HubTest, CommandLineReadsTheCacheOfflineAndNamesTheSource) {
  const fs::path config = RepoDir("models--org--pair") / "snapshots" / kCommit / "config.json";
  WriteFile(config, Fixture("qwen2.5-0.5b.json"));
  WriteFile(RepoDir("models--org--pair") / "refs" / "main", kCommit);
  const auto run = test_support::RunCli("estimate --model org/pair --gpu h100-sxm --gpus 1 --json --offline");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("\"source\": \"Hugging Face cache: " + config.string() + "\""), std::string::npos) << run.out;
  const auto absent = test_support::RunCli("--offline model org/absent");
  EXPECT_EQ(absent.status, 2) << absent.out;
  EXPECT_NE(absent.out.find("not in the cache at " + RepoDir("models--org--absent").string()), std::string::npos)
      << absent.out;
  const auto missing = test_support::RunCli("model ./no/such/config.json");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("file not found: ./no/such/config.json"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace trainplan
