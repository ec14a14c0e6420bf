// `perfcast advise --html FILE`: the same report as a self-contained HTML page. Expectations come from what the
// page must be for a reader (HTML5, no external files, every figure of the text report, escaped
// text) and from the CLI rules (bad output path: one-line error, exit 2, no file left behind).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/advisor.h"
#include "cli_runner.h"
#include "report/advice_html.h"
#include "report/advice_report.h"

namespace perfcast {
namespace {

Advice resnet50_on_gp102() {
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = "resnet50";
  return advise(r);
}

TEST(AdviceHtml, IsOneSelfContainedPageWithTheReportsContent) {
  const Advice a = resnet50_on_gp102();
  const std::string html = advice_html(a, Lang::kEn);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // Its scripts (the charts, report/chart_page.h) are inline: nothing is loaded from anywhere.
  for (const char* external : {"<script src", "<link", "<img", "https://cdn"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find(advice_verdict(a, Lang::kEn)), std::string::npos) << "the verdict sentence";
  for (const auto& s : a.strategies) EXPECT_NE(html.find(s.id), std::string::npos) << s.id;
}

TEST(AdviceHtml, EscapesTextAndFollowsTheLanguage) {
  const Advice a = resnet50_on_gp102();
  const std::string en = advice_html(a, Lang::kEn);
  // Not-applicable reasons quote the precision ('amp-bf16'): quotes must arrive escaped, never raw in markup.
  EXPECT_NE(en.find("&#39;amp-bf16&#39;"), std::string::npos);
  const std::string zh = advice_html(a, Lang::kZh);
  EXPECT_NE(zh.find("<html lang=\"zh\">"), std::string::npos);
  EXPECT_NE(zh.find("不适用"), std::string::npos) << "not-applicable reasons in Chinese";
}

class AdviceHtmlCli : public test::ScratchDirTest {
 protected:
  AdviceHtmlCli() : ScratchDirTest("perfcast-advice-html") {}
};

TEST_F(AdviceHtmlCli, WritesTheFileAndStillPrintsTheText) {
  const test::CliResult r = run("advise --model resnet50 --html report.html");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Verdict"), std::string::npos);
  EXPECT_NE(test::slurp(dir_ / "report.html").find("<!DOCTYPE html>"), std::string::npos);
}

TEST_F(AdviceHtmlCli, UnwritablePathIsAOneLineErrorAndLeavesNothing) {
  const test::CliResult r = run("advise --model resnet50 --html no-such-dir/report.html");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("report.html"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "no-such-dir"));
}

}  // namespace
}  // namespace perfcast
