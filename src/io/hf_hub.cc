#include "io/hf_hub.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <httplib.h>

#include "base/document.h"
#include "base/error.h"
#include "io/hf_config.h"
#include "io/text_io.h"

namespace trainplan {
namespace {

namespace fs = std::filesystem;
constexpr auto npos = std::string_view::npos;
constexpr int kMaxRedirects = 5;

std::atomic<bool> g_offline{false};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string Trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1));
}

/// "~/x" as the shell reads it; huggingface_hub expands its paths the same way.
std::string ExpandUser(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) return Env("HOME") + path.substr(1);
  return path;
}

std::string HfHome() {
  if (std::string home = Env("HF_HOME"); !home.empty()) return ExpandUser(home);
  if (std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty()) return ExpandUser(xdg) + "/huggingface";
  return Env("HOME") + "/.cache/huggingface";
}

/// At most `limit` bytes of a small file; "" when it cannot be read.
std::string ReadSmallFile(const fs::path& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return text;
}

std::string ReadToken() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (std::string token = Trimmed(Env(name)); !token.empty()) return token;
  }
  const std::string path = Env("HF_TOKEN_PATH");
  return Trimmed(ReadSmallFile(path.empty() ? HfHome() + "/token" : ExpandUser(path), 4096));
}

bool HubNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

/// One part of a repo id as the Hub accepts it (huggingface_hub's validate_repo_id): its characters, not
/// starting or ending with '-' or '.', no "--" (the cache spells '/' so) and no "..".
bool ValidRepoPart(std::string_view part) {
  if (part.empty() || part.size() > 96 || !std::all_of(part.begin(), part.end(), HubNameChar)) return false;
  auto edge = [](char c) { return c == '-' || c == '.'; };
  return !edge(part.front()) && !edge(part.back()) && part.find("--") == npos && part.find("..") == npos;
}

/// A branch, tag or commit: components of the Hub's characters separated by '/', none "." or "..", so that
/// refs/<revision> stays inside the cache.
bool ValidRevision(std::string_view revision) {
  if (revision.empty() || revision.size() > 255) return false;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(revision.find('/', start), revision.size());
    const std::string_view part = revision.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || !std::all_of(part.begin(), part.end(), HubNameChar)) return false;
    if (end == revision.size()) return true;
    start = end + 1;
  }
}

std::string PercentEncoded(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

/// Text a server sent, safe to print: printable ASCII, at most 300 characters.
std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 300)) out.push_back(c >= 0x20 && c < 0x7f ? c : ' ');
  return out;
}

// ---- the cache ----

fs::path RepoFolder(const HubSettings& settings, const std::string& repo) {
  std::string folder = "models--";
  for (char c : repo) {
    if (c == '/') {
      folder += "--";
    } else {
      folder += c;
    }
  }
  return fs::path(settings.cache_dir) / folder;
}

std::optional<fs::path> CachedConfig(const fs::path& repo_dir, const std::string& revision) {
  std::error_code ec;
  const fs::path snapshots = repo_dir / "snapshots";
  auto config_in = [&](const std::string& snapshot) -> std::optional<fs::path> {
    fs::path path = snapshots / snapshot / "config.json";
    return fs::is_regular_file(path, ec) ? std::optional(path) : std::nullopt;
  };
  const std::string wanted = revision.empty() ? "main" : revision;
  if (auto snapshot = SnapshotFromRef(ReadSmallFile(repo_dir / "refs" / wanted, 1024))) {
    if (auto path = config_in(*snapshot)) return path;
  }
  if (SnapshotFromRef(wanted) == wanted) {  // a commit given as the revision names its snapshot
    if (auto path = config_in(wanted)) return path;
  }
  if (!revision.empty()) return std::nullopt;
  // No ref for main (a cache copied without its refs): the only snapshot is the one; of several, none is.
  std::optional<std::string> only;
  for (const fs::directory_entry& entry : fs::directory_iterator(snapshots, ec)) {
    if (!entry.is_directory(ec)) continue;
    if (only) return std::nullopt;
    only = entry.path().filename().string();
  }
  return only ? config_in(*only) : std::nullopt;
}

/// Through a temporary file and a rename, so that a concurrent reader never sees half a file.
std::error_code WriteAtomically(const fs::path& path, std::string_view text) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return ec;
  const fs::path temp = path.string() + fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  {
    std::ofstream out(temp, std::ios::binary);
    out << text;
    if (!out.flush()) ec = std::error_code(errno != 0 ? errno : EIO, std::generic_category());
  }
  if (!ec) fs::rename(temp, path, ec);
  std::error_code ignored;
  if (ec) fs::remove(temp, ignored);
  return ec;
}

/// Saves a fetched config as snapshots/<snapshot>/config.json and, when the revision is a name rather than
/// that commit, refs/<revision>; the ref is written last so that it never names a snapshot without its file.
std::error_code SaveToCache(const fs::path& repo_dir, const std::string& revision, const std::string& snapshot,
                            std::string_view text, fs::path& file) {
  file = repo_dir / "snapshots" / snapshot / "config.json";
  if (std::error_code ec = WriteAtomically(file, text)) return ec;
  return snapshot == revision ? std::error_code() : WriteAtomically(repo_dir / "refs" / revision, snapshot);
}

// ---- the network ----

struct HttpReply {
  enum class Failure { kNone, kTimeout, kUnreachable, kTooLarge, kRedirects };
  Failure failure = Failure::kNone;
  std::string detail;  // what went wrong in transport
  int status = 0;
  std::string body;
  std::string commit;         // X-Repo-Commit: the commit the revision resolved to
  std::string error_code;     // X-Error-Code: RepoNotFound, GatedRepo, EntryNotFound, RevisionNotFound
  std::string error_message;  // X-Error-Message
};

/// httplib's transport errors in a user's words.
std::string TransportError(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "could not connect";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "its TLS certificate could not be verified";
    case httplib::Error::SSLLoadingCerts:
      return "the system's CA certificates could not be loaded";
    case httplib::Error::Read:
    case httplib::Error::Write:
      return "the connection broke";
    default:
      return httplib::to_string(e);
  }
}

HttpReply Failed(HttpReply::Failure failure, std::string detail = "") {
  HttpReply reply;
  reply.failure = failure;
  reply.detail = std::move(detail);
  return reply;
}

/// "scheme://host[:port]" and the path of an http(s) URL.
std::pair<std::string, std::string> SplitUrl(const std::string& url) {
  const size_t path = url.find('/', url.find("://") + 3);
  return path == npos ? std::pair{url, std::string("/")} : std::pair{url.substr(0, path), url.substr(path)};
}

bool IsHttpUrl(std::string_view url) { return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0; }

/// GET `url` following up to kMaxRedirects redirects, each connect and read bounded by `timeout_s`, the body
/// by `max_bytes`. The token goes to the first URL's host only, never to a CDN a redirect names.
HttpReply HttpGet(std::string url, const std::string& token, double timeout_s, size_t max_bytes) {
  using Failure = HttpReply::Failure;
  const auto started = std::chrono::steady_clock::now();
  const std::string token_origin = SplitUrl(url).first;
  const auto seconds = static_cast<time_t>(timeout_s);
  const auto micros = static_cast<time_t>((timeout_s - static_cast<double>(seconds)) * 1e6);
  HttpReply reply;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    if (!IsHttpUrl(url)) return Failed(Failure::kUnreachable, "redirected to " + Printable(url));
    const auto [origin, path] = SplitUrl(url);
    httplib::Client client(origin);
    client.set_connection_timeout(seconds, micros);
    client.set_read_timeout(seconds, micros);
    client.set_write_timeout(seconds, micros);
    httplib::Headers headers{{"User-Agent", "trainplan"}};
    if (!token.empty() && origin == token_origin) headers.emplace("Authorization", "Bearer " + token);
    std::string body;
    bool too_large = false;
    const httplib::Result result = client.Get(path, headers, [&](const char* data, size_t size) {
      too_large = body.size() + size > max_bytes;
      if (!too_large) body.append(data, size);
      return !too_large;
    });
    if (too_large) return Failed(Failure::kTooLarge);
    if (!result) {
      const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const httplib::Error e = result.error();
      const bool timed_out = e == httplib::Error::ConnectionTimeout ||
                             ((e == httplib::Error::Read || e == httplib::Error::Connection) && elapsed_s >= 0.9 * timeout_s);
      return Failed(timed_out ? Failure::kTimeout : Failure::kUnreachable, TransportError(e));
    }
    if (reply.commit.empty()) reply.commit = result->get_header_value("X-Repo-Commit");
    reply.status = result->status;
    if (reply.status >= 300 && reply.status < 400 && result->has_header("Location")) {
      const std::string location = result->get_header_value("Location");
      url = location.rfind('/', 0) == 0 ? origin + location : location;
      continue;
    }
    reply.body = std::move(body);
    reply.error_code = result->get_header_value("X-Error-Code");
    reply.error_message = result->get_header_value("X-Error-Message");
    return reply;
  }
  return Failed(Failure::kRedirects);
}

/// What to tell the user when the fetch of `url` did not bring a config.
std::string FetchFailure(const HubSettings& settings, const std::string& url, const HttpReply& r) {
  const std::string otherwise = "or pass a config.json path";
  switch (r.failure) {
    case HttpReply::Failure::kTimeout:
      return fmt::format("no answer from {} within {:g} s (HF_HUB_DOWNLOAD_TIMEOUT); check the network, set HF_ENDPOINT "
                         "to a mirror, {}", settings.endpoint, settings.timeout_s, otherwise);
    case HttpReply::Failure::kUnreachable:
      return fmt::format("cannot reach {} ({}); check the network or HF_ENDPOINT, {}", settings.endpoint, r.detail,
                         otherwise);
    case HttpReply::Failure::kTooLarge:
      return fmt::format("{} sent more than {} MiB, which no config.json is", url, kMaxHubConfigBytes >> 20);
    case HttpReply::Failure::kRedirects:
      return fmt::format("{} redirected more than {} times", url, kMaxRedirects);
    case HttpReply::Failure::kNone:
      break;
  }
  const std::string says = r.error_message.empty() ? "" : fmt::format(" (the Hub says: {})", Printable(r.error_message));
  if (r.status == 401 || r.status == 403) {
    // Without a token the Hub answers 401 for a private or missing repo alike; its error code tells them apart.
    if (r.error_code == "RepoNotFound")
      return fmt::format("no such repository on {} (HTTP {}){}, or it is private: check the id, set HF_TOKEN for a "
                         "private one, {}", settings.endpoint, r.status, says, otherwise);
    return fmt::format("gated or private on {} (HTTP {}){}: {}, {}", settings.endpoint, r.status, says,
                       settings.token.empty()
                           ? "set HF_TOKEN (or log in with `hf auth login`) to a token of an account that has "
                             "accepted the model's terms on its page"
                           : "the token sent (HF_TOKEN or the saved login) has no access; accept the model's terms "
                             "on its page with that account, or use another token",
                       otherwise);
  }
  if (r.status == 404)
    return fmt::format("no such repository or file on {}: {} (HTTP 404){}; check the id and the revision, {}",
                       settings.endpoint, url, says, otherwise);
  if (r.status == 429)
    return fmt::format("{} refuses more requests for now (HTTP 429){}; wait, set HF_TOKEN, {}", settings.endpoint, says,
                       otherwise);
  return fmt::format("{} answered HTTP {}{}; try again later, {}", url, r.status, says, otherwise);
}

HubConfig Fetch(const HubRepoId& id, const HubSettings& settings, const fs::path& repo_dir) {
  const std::string revision = id.revision.empty() ? "main" : id.revision;
  const std::string url =
      fmt::format("{}/{}/resolve/{}/config.json", settings.endpoint, id.repo, PercentEncoded(revision));
  const HttpReply reply = HttpGet(url, settings.token, settings.timeout_s, kMaxHubConfigBytes);
  if (reply.failure != HttpReply::Failure::kNone || reply.status != 200)
    throw InputError("model", id.Spelled(), FetchFailure(settings, url, reply));
  HubConfig hub;
  hub.origin = url;
  try {
    hub.config = ParseDocument(reply.body, url);
  } catch (const InputError& e) {
    throw InputError("model", id.Spelled(), fmt::format("{} is not a config.json: {}", url, e.allowed()));
  }
  // The snapshot is the commit the Hub resolved; a server that does not say keeps it under the revision's name.
  std::string snapshot = SnapshotFromRef(reply.commit).value_or("");
  if (snapshot.empty()) std::replace(snapshot.assign(revision).begin(), snapshot.end(), '/', '_');
  const std::string resolved = reply.commit.empty() ? "revision " + revision : "commit " + Printable(reply.commit);
  fs::path file;
  if (const std::error_code ec = SaveToCache(repo_dir, revision, snapshot, reply.body, file)) {
    hub.source = fmt::format("fetched {} ({}); not cached", url, resolved);
    hub.warning = fmt::format("could not save {} into the Hugging Face cache at {} ({}); the next run fetches it again",
                              url, file.string(), ec.message());
  } else {
    hub.source = fmt::format("fetched {} ({}), cached at {}", url, resolved, file.string());
  }
  return hub;
}

}  // namespace

std::optional<HubRepoId> ParseHubRepoId(std::string_view name) {
  HubRepoId id;
  const size_t at = name.find('@');
  const std::string_view repo = name.substr(0, at);
  if (at != npos) {
    id.revision = std::string(name.substr(at + 1));
    if (!ValidRevision(id.revision)) return std::nullopt;
  }
  const size_t slash = repo.find('/');
  if (slash == npos || !ValidRepoPart(repo.substr(0, slash)) || !ValidRepoPart(repo.substr(slash + 1))) return std::nullopt;
  id.repo = std::string(repo);
  return id;
}

std::optional<std::string> SnapshotFromRef(std::string_view text) {
  std::string snapshot = Trimmed(text);
  if (snapshot.empty() || snapshot.size() > 255 || snapshot == "." || snapshot == ".." ||
      !std::all_of(snapshot.begin(), snapshot.end(), HubNameChar))
    return std::nullopt;
  return snapshot;
}

HubSettings HubSettingsFromEnvironment() {
  HubSettings s;
  s.cache_dir = ExpandUser(Env("HF_HUB_CACHE"));
  if (s.cache_dir.empty()) s.cache_dir = ExpandUser(Env("HUGGINGFACE_HUB_CACHE"));
  if (s.cache_dir.empty()) s.cache_dir = HfHome() + "/hub";
  s.endpoint = Trimmed(Env("HF_ENDPOINT"));
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  if (s.endpoint.empty()) s.endpoint = "https://huggingface.co";
  if (!IsHttpUrl(s.endpoint))
    throw InputError("HF_ENDPOINT", s.endpoint, "an http:// or https:// URL, such as https://hf-mirror.com");
  s.token = ReadToken();
  if (!std::all_of(s.token.begin(), s.token.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    throw InputError("HF_TOKEN", "(not shown)", "a token of printable characters without spaces");
  std::string offline = Trimmed(Env("HF_HUB_OFFLINE"));
  for (char& c : offline) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  s.offline = g_offline || offline == "1" || offline == "ON" || offline == "YES" || offline == "TRUE";
  if (const std::string timeout = Trimmed(Env("HF_HUB_DOWNLOAD_TIMEOUT")); !timeout.empty()) {
    const auto [end, ec] = std::from_chars(timeout.data(), timeout.data() + timeout.size(), s.timeout_s);
    if (ec != std::errc() || end != timeout.data() + timeout.size() || !(s.timeout_s > 0 && s.timeout_s <= 3600))
      throw InputError("HF_HUB_DOWNLOAD_TIMEOUT", timeout, "seconds above 0 and at most 3600 (default 10)");
  }
  return s;
}

void SetHubOffline(bool offline) { g_offline = offline; }

HubConfig LoadHubConfig(const HubRepoId& id, const HubSettings& settings) {
  const fs::path repo_dir = RepoFolder(settings, id.repo);
  if (const std::optional<fs::path> cached = CachedConfig(repo_dir, id.revision)) {
    HubConfig hub;
    hub.origin = cached->string();
    hub.config = ReadJsonFile(hub.origin, "model", "a readable Hugging Face config.json file");
    hub.source = "Hugging Face cache: " + hub.origin;
    return hub;
  }
  if (settings.offline)
    throw InputError("model", id.Spelled(),
                     fmt::format("not in the cache at {}; run without --offline (and with HF_HUB_OFFLINE unset) to "
                                 "fetch it, or pass a config.json path", repo_dir.string()));
  return Fetch(id, settings, repo_dir);
}

ModelSpec ModelFromHub(const HubRepoId& id) {
  const HubConfig hub = LoadHubConfig(id, HubSettingsFromEnvironment());
  ModelSpec spec = ModelFromHfConfig(Field(hub.config, hub.origin + ": "), hub.source);
  spec.name = id.Spelled();
  spec.hf_id = id.repo;
  if (!hub.warning.empty()) spec.warnings.push_back(hub.warning);
  return spec;
}

}  // namespace trainplan
