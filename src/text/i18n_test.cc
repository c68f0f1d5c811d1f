#include "text/i18n.h"

#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "base/error.h"
#include "catalog/prices.h"

namespace trainplan {
namespace {

std::set<std::string> Placeholders(std::string_view tmpl) {
  std::set<std::string> names;
  const std::string s(tmpl);
  const std::regex re(R"(\{([a-z_]+))");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(I18n, ParsesTheLanguagesAndNamesTheAllowedOnes) {
  EXPECT_EQ(ParseLang("en"), Lang::kEn);
  EXPECT_EQ(ParseLang("zh"), Lang::kZh);
  EXPECT_EQ(ParseLang("zh-CN"), Lang::kZh);
  EXPECT_EQ(ParseLang("zh_cn"), Lang::kZh);
  try {
    ParseLang("fr", "--lang");
    FAIL() << "fr was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--lang");
    EXPECT_EQ(e.value(), "fr");
    EXPECT_EQ(e.allowed(), "en, zh or zh-CN");
  }
}

// A Chinese template that dropped or misspelt an argument would print a wrong or missing figure; only the English
// plural ending has no Chinese counterpart.
TEST(I18n, BothLanguagesTakeTheSameArguments) {
  for (std::string_view key : PhraseKeys()) {
    std::set<std::string> en = Placeholders(Phrase(Lang::kEn, key));
    en.erase("plural");
    EXPECT_EQ(en, Placeholders(Phrase(Lang::kZh, key))) << key;
  }
}

TEST(I18n, FormatsNamedArgumentsInEachLanguagesOrder) {
  EXPECT_EQ(Say(Lang::kEn, "est.step_time", fmt::arg("s", 7.5164)), "step time 7.516 s:");
  EXPECT_EQ(Say(Lang::kZh, "est.step_time", fmt::arg("s", 7.5164)), "单步时间 7.516 s：");
  EXPECT_EQ(Say(Lang::kZh, "est.per_node", fmt::arg("amount", "128 GB")), "每节点   128 GB");
  EXPECT_EQ(Say(Lang::kZh, "mem.optimizer_states"), "优化器状态");
  EXPECT_THROW(Phrase(Lang::kZh, "no.such.key"), InternalError);
}

// Catalog prose: the Chinese variant for Chinese readers where the data gives one, the English otherwise.
TEST(I18n, CatalogProseFallsBackToEnglish) {
  const RentalOffer* cn = PlatformOffer("ascend-910b", "cn");
  ASSERT_NE(cn, nullptr);
  EXPECT_EQ(Localized(Lang::kZh, cn->provider, cn->provider_zh), "华为云 ModelArts");
  EXPECT_EQ(Localized(Lang::kEn, cn->provider, cn->provider_zh), "Huawei Cloud ModelArts");
  const RentalOffer* us = DefaultRentalOffer("h100-nvl");  // "RunPod": a name, written one way
  ASSERT_NE(us, nullptr);
  EXPECT_EQ(Localized(Lang::kZh, us->provider, us->provider_zh), us->provider);
  EXPECT_FALSE(us->provider.empty());
}

}  // namespace
}  // namespace trainplan
