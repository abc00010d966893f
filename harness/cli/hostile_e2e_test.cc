// Hostile inputs through the real binary: shell metacharacters in commit names, suite
// parameters and bisect command templates reach programs only as argv; invalid UTF-8 in a
// stack's output is stored and shown escaped with every JSON/XML output well-formed;
// symlink loops in the suites or golden folder are clear errors, not hangs; a full disk
// (RLIMIT_FSIZE) is a clear exit-3 error that leaves no half-written case or output; a
// megabyte commit subject is cut in every report format.
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"

namespace harness {
namespace {

using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// Files directly in dir (the harness's working directory) whose name contains `part`.
int FilesNamed(const std::filesystem::path& dir, const std::string& part) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    n += e.path().filename().string().find(part) != std::string::npos;
  return n;
}

bool WellFormedXml(const std::filesystem::path& file) {
  auto r = RunProcess({"python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", file.string()});
  return r.ok() && r->exit_code == 0;
}

bool ValidUtf8File(const std::filesystem::path& file) {
  auto r = RunProcess({"python3", "-c", "import sys; open(sys.argv[1], 'rb').read().decode('utf-8')", file.string()});
  return r.ok() && r->exit_code == 0;
}

const char* const kPayload = "; touch pwned1 && $(touch pwned2) `touch pwned3` | touch pwned4 > pwned5";

// A commit subject is the committer's text: 1 MB of it, markup included, is cut (its first
// line, kMaxSubjectBytes = 200 bytes) and escaped in every format the report writes.
TEST(HostileE2E, AMegabyteCommitSubjectIsCutInTheReport) {
  TempDir dir;
  const auto db = dir / "h.db";
  const std::string head = "<script>alert(1)</script> \"subject\" & ";
  std::string subject = head;
  while (subject.size() < (1u << 20)) subject += "\xC3\xA9 long subject ";  // two-byte characters too
  {
    auto store = std::move(Store::Open(db)).value();
    const int64_t commit = *store->writer().UpsertCommit({std::string(40, 'a'), {}, 1, std::nullopt, subject});
    NewRun r;
    r.commit_id = commit;
    r.stack = "refstack";
    r.config_hash = "h";
    r.config_json = "{}";
    r.host = "ci";
    r.harness_version = "test";
    const int64_t run = *store->writer().BeginRun(r);
    const int64_t c = *store->writer().BeginCase(run, "selftest", "selftest/test_0", "{}");
    ASSERT_TRUE(store->writer().FinishCase(c, {"selftest/test_0", CaseStatus::kFail, 0.1, "broke", {}, {}}).ok());
    ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kFail).ok());
  }
  auto html = RunHarness({"report", "--db", db.string(), "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir / "r.html");
  EXPECT_LT(page.size(), 200u * 1024) << "the subject is in the page whole";
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos) << "the subject is not escaped";
  EXPECT_NE(page.find(" [...]"), std::string::npos) << "the cut is not marked";
  const std::string long_run = [] {
    std::string s;
    for (int i = 0; i < 20; ++i) s += "\xC3\xA9 long subject ";
    return s;
  }();
  EXPECT_EQ(page.find(long_run), std::string::npos) << "more than 200 bytes of the subject are shown";
  for (const char* format : {"text", "json", "markdown"}) {
    auto r = RunHarness({"report", "--db", db.string(), "--format", format});
    ASSERT_EQ(r.exit_code, 0) << format << r.err;
    EXPECT_LT(r.out.size(), 100u * 1024) << format;
    EXPECT_EQ(r.out.find(long_run), std::string::npos) << format;
  }
}

TEST(HostileE2E, ShellMetacharactersInACommitNameAndParamsAreOnlyText) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 2);
  // Git allows ; $ ( ) & | ` in a branch name; the harness hands it to git as one argv word.
  const std::string branch = "x;touch${IFS}pwned6&&$(touch${IFS}pwned7)|`touch${IFS}pwned8`";
  auto b = RunProcess({"git", "-C", (dir / "repo").string(), "branch", branch, shas[0]});
  ASSERT_TRUE(b.ok() && b->exit_code == 0) << (b.ok() ? b->err : "");
  std::string row = R"({"outcome": "pass", "samples": 1, "note": ")" + std::string(kPayload) + R"("})";
  WriteFile(dir / "suites/selftest.json", testing_util::SelftestTable(row));
  const std::string db = (dir / "h.db").string();
  ProcessOptions in_dir{.cwd = dir.path()};
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--suite", "selftest", "--db", db, "--repo",
                       (dir / "repo").string(), "--commit", branch, "--format", "json"},
                      in_dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = std::move(Store::OpenReadOnly(db)).value();
  EXPECT_EQ(store->reader().Run(0)->sha, shas[0]) << "the branch resolved through git, as text";
  EXPECT_NE(store->reader().CaseParams(1)->begin()->second.find("$(touch pwned2)"), std::string::npos);
  EXPECT_NE(r.out.find("`touch pwned3`"), std::string::npos) << "the note is in the summary as written";
  auto bad = RunHarness({"run", "--db", db, "--commit", "$(touch pwned9)"}, in_dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(FilesNamed(dir.path(), "pwned"), 0) << "a shell ran somewhere";
}

TEST(HostileE2E, BisectCommandTemplatesAreArgvWithPlaceholdersFilledIn) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4);
  const std::string db = (dir / "h.db").string();
  // The command records its argv[2] into {db}.argv-{sha}; every metacharacter must arrive as text.
  const std::string payload = std::string("{sha}") + kPayload;
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "selftest/test_outcome_0", "--repo",
                       (dir / "repo").string(), "--db", db, "--max-runs", "4", "--", "python3", "-c",
                       "import sys; open(sys.argv[1], 'w').write(sys.argv[2]); sys.exit(1)", "{db}.argv-{sha}",
                       payload},
                      {.cwd = dir.path()});
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  int recorded = 0;
  for (const auto& sha : shas) {
    const auto file = dir / ("h.db.argv-" + sha);
    if (!std::filesystem::exists(file)) continue;
    ++recorded;
    EXPECT_EQ(ReadFile(file), sha + kPayload);
  }
  EXPECT_GE(recorded, 1) << "the command never ran: " << r.err << r.out;
  EXPECT_EQ(FilesNamed(dir.path(), "pwned"), 0) << "a shell ran somewhere";
}

TEST(HostileE2E, InvalidUtf8FromAStackIsStoredAndShownEscaped) {
  TempDir dir;
  // An exec stack that writes invalid UTF-8 (a lone continuation byte, an overlong '/',
  // a truncated sequence, a NUL-free control byte) to stderr and fails: a case error whose
  // message carries those bytes.
  WriteFile(dir / "stack.json", R"json({"format_version": 1, "stack": "exec", "exec": {"command": ["python3", "-c",
    "import sys; sys.stderr.buffer.write(b'bad \\x80 \\xc0\\xaf \\xe2\\x82 \\x1b[31m <x>&'); sys.exit(4)"]}})json");
  const std::string db = (dir / "h.db").string();
  auto r = RunHarness({"run", "--db", db, "--commit", "abc1234", "--stack-config", (dir / "stack.json").string(),
                       "--suite", "sequence_parallel", "--format", "json", "--junit", (dir / "junit.xml").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto summary = ParseJson(r.out, "stdout");
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_NE(summary->dump().find("bad"), std::string::npos);
  EXPECT_TRUE(WellFormedXml(dir / "junit.xml")) << ReadFile(dir / "junit.xml");
  // Stored as the stack wrote it.
  auto store = std::move(Store::OpenReadOnly(db)).value();
  auto cases = *store->reader().Cases(1);
  ASSERT_FALSE(cases.empty());
  EXPECT_NE(cases[0].result.message.find("\x80"), std::string::npos) << "stored as written";
  // Every reader's output is well-formed.
  auto report = RunHarness({"report", "--db", db, "--out", (dir / "r.html").string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(ValidUtf8File(dir / "r.html"));
  EXPECT_EQ(ReadFile(dir / "r.html").find("<x>"), std::string::npos) << "escaped";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"history", "--db", db, "--case", cases[0].result.case_id, "--format", "json"},
           {"compare", "--db", db, "abc1234", "abc1234", "--format", "json"}}) {
    auto q = RunHarness(args);
    EXPECT_LT(q.exit_code, 2) << args[0] << ": " << q.err;
    EXPECT_TRUE(ParseJson(q.out, args[0]).ok()) << args[0] << ": " << q.out;
  }
  // Text meant for a terminal shows the escape sequence instead of sending it, and is UTF-8.
  auto text_run = RunHarness({"run", "--db", db, "--commit", "abc1234", "--stack-config",
                              (dir / "stack.json").string(), "--suite", "sequence_parallel"});
  EXPECT_EQ(text_run.exit_code, 3) << text_run.err;
  auto text_report = RunHarness({"report", "--db", db, "--format", "text"});
  EXPECT_EQ(text_report.exit_code, 0) << text_report.err;
  EXPECT_NE(text_report.out.find("\\x1b[31m"), std::string::npos) << text_report.out;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"run", text_run.out},
           {"report", text_report.out},
           {"history", RunHarness({"history", "--db", db, "--case", cases[0].result.case_id}).out},
           {"compare", RunHarness({"compare", "--db", db, "abc1234", "abc1234"}).out}}) {
    EXPECT_FALSE(text.empty()) << name;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << name << " sent a raw escape: " << text;
    WriteFile(dir / "out.txt", text);
    EXPECT_TRUE(ValidUtf8File(dir / "out.txt")) << name;
  }
}

TEST(HostileE2E, SymlinkLoopsAreClearErrorsNotHangs) {
  TempDir dir;
  std::filesystem::create_directory_symlink(dir / "b", dir / "a");
  std::filesystem::create_directory_symlink(dir / "a", dir / "b");
  auto loop = RunHarness({"run", "--list", "--suites-dir", (dir / "a").string()}, {.timeout_s = 30});
  EXPECT_FALSE(loop.timed_out);
  EXPECT_EQ(loop.exit_code, 2) << loop.err;
  EXPECT_NE(loop.err.find((dir / "a").string()), std::string::npos) << loop.err;

  // A table that is a symlink to itself among good ones.
  std::filesystem::create_directories(dir / "suites");
  std::filesystem::copy_file(SuitesDir() / "gmm.json", dir / "suites/gmm.json");
  std::filesystem::create_symlink(dir / "suites/self.json", dir / "suites/self.json");
  auto self = RunHarness({"run", "--list", "--suites-dir", (dir / "suites").string()}, {.timeout_s = 30});
  EXPECT_FALSE(self.timed_out);
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_NE(self.err.find("self.json"), std::string::npos) << self.err;

  // A root whose golden/ folder is a loop: the compile suites cannot read an expectation.
  const auto root = dir / "root";
  std::filesystem::create_directories(root);
  std::filesystem::create_directory_symlink(SuitesDir(), root / "suites");
  std::filesystem::create_directory_symlink(root / "golden2", root / "golden");
  std::filesystem::create_directory_symlink(root / "golden", root / "golden2");
  auto golden = RunHarness({"run", "--db", (dir / "h.db").string(), "--commit", "abc1234", "--suite", "gmm"},
                           {.env = {{"HARNESS_ROOT", root.string()}}, .timeout_s = 60});
  EXPECT_FALSE(golden.timed_out);
  EXPECT_EQ(golden.signal, 0);
  EXPECT_GE(golden.exit_code, 1) << "a loop is no expectation";
  EXPECT_NE((golden.err + golden.out).find("golden"), std::string::npos) << golden.err << golden.out;
}

// Runs the binary with files capped at `max_bytes` (SIGXFSZ ignored, so a write past the
// cap fails with EFBIG as it would with ENOSPC on a full disk). Returns the exit status.
int RunWithFileSizeLimit(const std::vector<std::string>& args, rlim_t max_bytes, const std::filesystem::path& err) {
  std::vector<std::string> argv_strings = {testing_util::kHarnessBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid == 0) {
    setenv("HARNESS_ROOT", testing_util::kSourceRoot, 1);
    signal(SIGXFSZ, SIG_IGN);
    if (!freopen("/dev/null", "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    rlimit lim{max_bytes, max_bytes};
    setrlimit(RLIMIT_FSIZE, &lim);
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(HostileE2E, AFullDiskIsAClearErrorAndNothingIsHalfWritten) {
  TempDir dir;
  // Cases with many op rows and samples: the database outgrows the cap part way through.
  std::string rows;
  for (int i = 0; i < 40; ++i)
    rows += fmt::format("{}{{\"outcome\": \"pass\", \"samples\": 50, \"ops\": 200}}", i ? "," : "");
  WriteFile(dir / "suites/selftest.json", testing_util::SelftestTable(rows));
  const auto db = dir / "h.db";
  const int code = RunWithFileSizeLimit({"run", "--suites-dir", (dir / "suites").string(), "--suite", "selftest",
                                         "--db", db.string(), "--commit", "abc1234", "--junit",
                                         (dir / "junit.xml").string()},
                                        256 * 1024, dir / "err.txt");
  const std::string err = ReadFile(dir / "err.txt");
  EXPECT_EQ(code, 3) << err;
  EXPECT_NE(err.find("harness: error: database"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "junit.xml") &&
               !WellFormedXml(dir / "junit.xml")) << "an output is whole or absent";

  // The database is sound, and every finished case is whole: its op rows and metric are there.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(h);
  auto store = std::move(Store::OpenReadOnly(db)).value();
  auto cases = *store->reader().Cases(1);
  int finished = 0;
  for (const auto& c : cases) {
    if (c.result.status != CaseStatus::kPass) continue;
    ++finished;
    EXPECT_EQ(store->reader().Ops(c.id)->size(), 200u) << c.result.case_id;
    EXPECT_EQ(store->reader().Metrics(c.id)->size(), 1u) << c.result.case_id;
    EXPECT_EQ(store->reader().Samples(c.id)->size(), 50u) << c.result.case_id;
  }
  EXPECT_LT(finished, 40) << "the cap was never reached";
}

// 150,000 nested arrays overflowed the stack wherever the parsed JSON was copied. Every
// JSON reader goes through one depth bound: a stack config, a suite table and a golden file
// are input errors naming file:line:column, an exec stack's answer is that case's error.
TEST(HostileE2E, DeeplyNestedJsonAnywhereIsAnErrorNamingItsPlaceNotACrash) {
  TempDir dir;
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  // In `prefix + deep`, with one object open in the prefix, the 256th '[' is level 257.
  auto place = [](const std::string& prefix) {
    return fmt::format(":1:{}: arrays and objects nested deeper than 256 levels", prefix.size() + 256);
  };
  const std::string db = (dir / "h.db").string();

  const std::string config_prefix = R"({"format_version": 1, "stack": "refstack", "device": )";
  WriteFile(dir / "stack.json", config_prefix + deep + "}");
  auto config = RunHarness({"run", "--db", db, "--commit", "abc1234", "--stack-config", (dir / "stack.json").string()});
  EXPECT_EQ(config.signal, 0);
  EXPECT_EQ(config.exit_code, 2) << config.err;
  EXPECT_NE(config.err.find((dir / "stack.json").string() + place(config_prefix)), std::string::npos) << config.err;

  const std::string table_prefix = R"({"format_version": 2, "suite": "selftest", "params": )";
  WriteFile(dir / "suites/selftest.json", table_prefix + deep + "}");
  auto table = RunHarness({"run", "--list", "--suites-dir", (dir / "suites").string()});
  EXPECT_EQ(table.signal, 0);
  EXPECT_EQ(table.exit_code, 2) << table.err;
  EXPECT_NE(table.err.find((dir / "suites/selftest.json").string() + place(table_prefix)), std::string::npos)
      << table.err;

  const std::string answer_prefix = R"({"format_version": 1, "ops": )";
  WriteFile(dir / "answer.json", answer_prefix + deep + "}");
  WriteFile(dir / "exec.json", R"({"format_version": 1, "stack": "exec",
    "exec": {"command": ["sh", "-c", "cat >/dev/null; cat ')" +
                                   (dir / "answer.json").string() + R"('"]}})");
  auto answer = RunHarness({"run", "--db", db, "--commit", "abc1234", "--stack-config", (dir / "exec.json").string(),
                            "--suite", "sequence_parallel", "--filter", "sequence_parallel/*_1"});
  EXPECT_EQ(answer.signal, 0);
  EXPECT_EQ(answer.exit_code, 3) << answer.err;
  {
    auto store = std::move(Store::OpenReadOnly(db)).value();
    auto cases = *store->reader().Cases(1);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].result.status, CaseStatus::kError);
    EXPECT_NE(cases[0].result.message.find("sh (stdout)" + place(answer_prefix)), std::string::npos)
        << cases[0].result.message;
  }

  const auto root = dir / "root";
  testing_util::CopyDataRoot(root);
  const auto golden = root / "golden/ops/sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1.json";
  ASSERT_TRUE(std::filesystem::exists(golden));
  const std::string golden_prefix = R"({"format_version": 2, "ops": )";
  WriteFile(golden, golden_prefix + deep + "}");
  auto expectation = RunHarness({"run", "--db", db, "--commit", "abc1234", "--suite", "sequence_parallel", "--filter",
                                 "sequence_parallel/*_1", "--format", "json"},
                                {.env = {{"HARNESS_ROOT", root.string()}}});
  EXPECT_EQ(expectation.signal, 0);
  EXPECT_NE(expectation.exit_code, 0) << expectation.err;
  // Named relative to the data root, as every source location in a case's message is.
  EXPECT_NE((expectation.out + expectation.err)
                .find("golden/ops/sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1.json" + place(golden_prefix)),
            std::string::npos)
      << expectation.out << expectation.err;
}

}  // namespace
}  // namespace harness
