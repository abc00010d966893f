// The HTML report in a real browser (Debian's chromium, headless; ci/setup.sh installs
// it). The database is built through the Store API with a history no single stand-in run
// gives: several commits, a GSM8K regression with a flaky gate and reruns, an op-table
// failure with a stale-expectation hint, a kernel bound creeping up, a bisect culprit and
// completions holding hostile markup. The report comes from the real `harness report`.
// Checks: every section id in the DOM after the script ran, the hostile strings only as
// text, no Content Security Policy violation in Chromium's log, the filter in the URL
// fragment applied; a screenshot is kept at build/test-artifacts/report.png for a person.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/stats/stats.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;

constexpr const char* kScript = "<script>alert(1)</script>";
constexpr const char* kImg = "\"><img src=x onerror=alert(2)>";

std::string Sha(int i) { return fmt::format("{:07x}{:033x}", 0xc0ffee0 + i, i * 977); }

void Ok(const Status& s) { ASSERT_TRUE(s.ok()) << s.error().message; }

// GSM8K over 400 questions: question q is right unless q < wrong; the completion of each
// wrong answer carries one of the hostile strings.
void Gsm8k(Store& store, int64_t run, int wrong, CaseStatus status, const std::string& message) {
  const std::string id = "gsm8k/test_gsm8k_accuracy_1";
  const int64_t cr = *store.writer().BeginCase(run, "gsm8k", id, "{}");
  constexpr int kN = 400;
  for (int q = 0; q < kN; ++q) {
    const bool ok = q >= wrong;
    Ok(store.writer().WriteSample(
        cr, {std::to_string(q), ok ? SampleOutcome::kCorrect : SampleOutcome::kWrong, "18",
             ok ? "18" : (q % 2 ? kScript : "17"), 0.2, 90,
             ok ? "Janet has 16 eggs... 16 - 3 - 4 = 9, 9 * 2 = 18.\n#### 18"
                : fmt::format("Janet sells {} eggs {}\n#### 17", q % 2 ? kScript : kImg, q % 2 ? kImg : kScript)}));
  }
  const auto ci = WilsonInterval(kN - wrong, kN);
  const double acc = static_cast<double>(kN - wrong) / kN;
  const GateVerdict v = ci.low >= 0.9 ? GateVerdict::kPass : ci.high < 0.9 ? GateVerdict::kFail : GateVerdict::kAtRisk;
  Ok(store.writer().FinishCase(
      cr, {id,
           status,
           12.5,
           message,
           {{"accuracy", acc, kN, ci.low, ci.high}, {"gate", 0.9, 0, {}, {}}, VerdictMetric("gate_verdict", v)},
           {}}));
}

void SequenceParallel(Store& store, int64_t run, bool broken) {
  const std::string id = "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0";
  const int64_t cr = *store.writer().BeginCase(run, "sequence_parallel", id, "{}");
  std::vector<OpRow> ops = {{"tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]", 2, 1e-5},
                            {"tensor_cast.reduce_scatter.default", "[1, 128, 5120]", broken ? 1 : 2, 2e-5},
                            {"tensor_cast.all_gather.default", "[1, 64, 5120]", 2, 2e-5}};
  if (broken) ops.push_back({"tensor_cast.all_reduce.default", "[1, 128, 5120]", 1, 3e-5});
  Ok(store.writer().FinishCase(cr, {id,
                                    broken ? CaseStatus::kFail : CaseStatus::kPass,
                                    0.3,
                                    broken ? "suites/sequence_parallel.cc:88: leftover all_reduce on the residual path "
                                             "<internal_copy_region_v2>\nexpected 0 all_reduce, found 1"
                                           : "",
                                    {{"ops", static_cast<double>(ops.size()), 0, {}, {}}},
                                    ops}));
}

void Gmm(Store& store, int64_t run, bool stale) {
  const std::string id = "gmm/test_qwen3_dynamic_quant_1";
  const int64_t cr = *store.writer().BeginCase(run, "gmm", id, "{}");
  std::vector<OpRow> ops = {{"tensor_cast.dynamic_quant.default", "[8, 2048]", 1, 1e-5},
                            {stale ? "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default"
                                   : "tensor_cast.grouped_matmul_mxfp4_swiglu.default",
                             "[8, 2048], [4, 2048, 1536]", 1, 4e-5}};
  Ok(store.writer().FinishCase(cr, {id,
                                    stale ? CaseStatus::kFail : CaseStatus::kPass,
                                    0.2,
                                    stale ? "golden/ops/gmm/test_qwen3_dynamic_quant_1.json: op table differs" : "",
                                    {},
                                    ops}));
}

void Fp8(Store& store, int64_t run, double bound_use) {
  const std::string id = "fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_0";
  const int64_t cr = *store.writer().BeginCase(run, "fp8_scale_layout", id, "{}");
  Ok(store.writer().FinishCase(cr,
                               {id, CaseStatus::kPass, 0.05, "", {{"gemm_max_bound_use", bound_use, 0, {}, {}}}, {}}));
}

fs::path BuildDatabase(const TempDir& dir) {
  const fs::path path = dir / "history.db";
  auto store = std::move(Store::Open(path)).value();
  // wrong answers of 400 per commit (reruns at commit 5): 0.925, 0.9275, 0.925, 0.92, then the
  // FP8 scale regression: 0.905, 0.8975, 0.91 (AT-RISK, a flaky gate), then 0.9 (REGRESSED).
  const std::vector<std::vector<int>> wrong = {{30}, {29}, {30}, {32}, {38, 41, 36}, {40}};
  for (int i = 0; i < 6; ++i) {
    const std::string subject = i == 4 ? fmt::format("fp8: fuse rms_norm + group quant {}", kScript)
                                       : fmt::format("commit {} of the stack", i + 1);
    const int64_t c = *store->writer().UpsertCommit({Sha(i), {}, i + 1, 1767225600 + 86400 * i, subject});
    for (int w : wrong[i]) {
      const int64_t run = *store->writer().BeginRun({c, "refstack", "3f2a", "{}", "nightly-host", "0.2.0"});
      const bool regressed = i == 5;
      Gsm8k(*store, run, w, regressed ? CaseStatus::kFail : CaseStatus::kPass,
            regressed ? fmt::format("gsm8k REGRESSED vs baseline {} (run 5): losses b = 10, gains c = 0 of 400 paired "
                                    "questions, exact McNemar p = 0.00195\ncompletion said {}",
                                    ShortSha(Sha(3)), kImg)
                      : "AT-RISK at gate 0.90");
      SequenceParallel(*store, run, i >= 4);
      Gmm(*store, run, i >= 3);
      Fp8(*store, run, 0.52 + 0.06 * i);
      Ok(store->writer().FinishRun(run, i >= 3 ? RunStatus::kFail : RunStatus::kPass));
    }
  }
  BisectSessionRow b;
  b.good = Sha(2);
  b.bad = Sha(5);
  b.target = "gsm8k accuracy (gsm8k/test_gsm8k_accuracy_1)";
  b.args_json = R"({"format_version": 1, "target": {"cases": ["gsm8k/test_gsm8k_accuracy_1"]}})";
  const int64_t session = *store->bisect_record().BeginBisect(b);
  for (int step = 1; step <= 2; ++step)
    Ok(store->bisect_record().AddBisectStep(
        session, {step, Sha(2 + step), "store", step + 2, std::nullopt,
                  fmt::format(R"({{"accuracy": [0.92], "note": "{}"}})", "</code><b>x</b>"), R"({"p_bad": 0.97})"}));
  b.status = "culprit";
  b.culprit = Sha(4);
  b.confidence = 0.97;
  b.runs = 0;
  b.result_json = "{}";
  Ok(store->bisect_record().FinishBisect(session, b));
  return path;
}

struct Chromium {
  std::string program;
  ProcessResult Run(std::vector<std::string> args) const {
    std::vector<std::string> argv = {program, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                                     "--v=0", "--user-data-dir=" + (profile.path() / "profile").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunProcess(argv, {.timeout_s = 120});
    return r.ok() ? *r : ProcessResult{};
  }
  TempDir profile;
};

std::string FindChromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

std::size_t Count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(ReportBrowser, EverySectionRendersHostileStringsStayTextAndNothingViolatesTheCsp) {
  Chromium chromium{FindChromium()};
  ASSERT_FALSE(chromium.program.empty()) << "chromium is not installed (ci/setup.sh installs Debian's chromium)";
  TempDir dir;
  const fs::path db = BuildDatabase(dir);
  const fs::path html = dir / "report.html";
  auto r = RunHarness({"report", "--db", db.string(), "--out", html.string(), "--commit-url",
                       "https://git.example/stack/commit/{sha}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string source = ReadFile(html);
  EXPECT_EQ(Count(source, "<script"), 1u) << "only the report's own script";

  auto dom = chromium.Run({"--dump-dom", "file://" + html.string()});
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  for (const char* id : {"summary", "failures", "trends", "flaky", "flips", "bisect"})
    EXPECT_NE(dom.out.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dom.out.find("data-filters=\"ready\""), std::string::npos) << "the inline script ran (its CSP hash matches)";
  // The hostile strings are in the DOM only as escaped text.
  EXPECT_NE(dom.out.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(dom.out.find("\"&gt;&lt;img src=x onerror=alert(2)&gt;"), std::string::npos);
  EXPECT_EQ(dom.out.find("<img"), std::string::npos) << "an element was injected";
  EXPECT_EQ(dom.out.find("<script>alert"), std::string::npos) << "a script was injected";
  EXPECT_EQ(Count(dom.out, "<script"), 1u);
  EXPECT_EQ(dom.out.find("<b>x</b>"), std::string::npos);
  // The report's own content: AT-RISK amber, the stale hint, the culprit marker, commit links.
  EXPECT_NE(dom.out.find("b-risk"), std::string::npos);
  EXPECT_NE(dom.out.find("expectation may be stale"), std::string::npos);
  EXPECT_NE(dom.out.find("class=\"culprit\""), std::string::npos);
  EXPECT_NE(dom.out.find("https://git.example/stack/commit/" + Sha(4)), std::string::npos);
  EXPECT_EQ(dom.err.find("Content Security Policy"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Refused to"), std::string::npos) << dom.err;

  // A filter in the fragment opens the same view: only failing items stay visible.
  auto filtered = chromium.Run({"--dump-dom", "file://" + html.string() + "#status=fail&suite=gsm8k"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  const std::string& f = filtered.out;
  const auto failure = f.find("<article class=\"item fail\" data-suite=\"gsm8k\"");
  ASSERT_NE(failure, std::string::npos) << "the gsm8k failure is shown";
  const std::string tag = f.substr(failure, f.find('>', failure) - failure);
  EXPECT_EQ(tag.find("hidden"), std::string::npos) << "the gsm8k failure itself is shown: " << tag;
  EXPECT_NE(f.find("data-suite=\"sequence_parallel\" data-status=\"fail\" hidden"), std::string::npos)
      << "another suite's failure is hidden";
  EXPECT_NE(f.find("showing "), std::string::npos);
  EXPECT_EQ(filtered.err.find("Content Security Policy"), std::string::npos) << filtered.err;

  // Kept for a person to look at (not committed): build/test-artifacts/report.png.
  const fs::path artifacts = fs::path(testing_util::kHarnessBinary).parent_path().parent_path() / "test-artifacts";
  fs::create_directories(artifacts);
  fs::copy_file(html, artifacts / "report.html", fs::copy_options::overwrite_existing);
  auto shot = chromium.Run({"--screenshot=" + (artifacts / "report.png").string(), "--window-size=1280,3200",
                            "--hide-scrollbars", "file://" + html.string()});
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  EXPECT_TRUE(fs::exists(artifacts / "report.png"));
  EXPECT_EQ(shot.err.find("Content Security Policy"), std::string::npos) << shot.err;
}

}  // namespace
}  // namespace harness
