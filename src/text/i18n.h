#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace trainplan {

/// The language of text, Markdown and HTML reports. JSON is always English.
enum class Lang { kEn, kZh };

/// The language names ParseLang accepts, as error messages list them.
inline constexpr std::string_view kLangNames = "en, zh or zh-CN";

/// "en", "zh", "zh-CN" (any case, '_' or '-') as a Lang; anything else throws InputError naming `field`.
Lang ParseLang(const std::string& value, const std::string& field = "lang");

/// The fmt template stored under `key` in `lang`. Each entry holds both languages, so a key found is a
/// key translated; an unknown key is our defect (InternalError).
std::string_view Phrase(Lang lang, std::string_view key);

/// The template under `key`, or `fallback` where the table has none: for names that catalogs (user ones
/// included) may add, such as billing rules.
std::string_view PhraseOr(Lang lang, std::string_view key, std::string_view fallback);

/// Phrase(lang, key) formatted with `args`; templates use named arguments (fmt::arg) so a language may
/// put them in its own order.
template <typename... Args>
std::string Say(Lang lang, std::string_view key, Args&&... args) {
  return fmt::format(fmt::runtime(Phrase(lang, key)), std::forward<Args>(args)...);
}

/// A catalog text in `lang`: its Chinese variant (a data file's "<key>_zh", catalog/load.h ZhVariant) where one
/// is written, else the English.
inline const std::string& Localized(Lang lang, const std::string& en, const std::string& zh) {
  return lang == Lang::kZh && !zh.empty() ? zh : en;
}

/// Every key of the table, for the test that each template formats in both languages.
std::vector<std::string_view> PhraseKeys();

}  // namespace trainplan
