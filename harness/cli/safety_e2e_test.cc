// Data safety end to end, through the real binary: a file that is not ours is never
// touched, an output path never overwrites the database, queries never write, a resumed
// run never mixes identities or joins a live run, and input errors store nothing.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// A SQLite file of another application: one table of its own and the given pragmas.
void MakeForeignDb(const fs::path& path, int user_version, int application_id) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql = "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES('mine');"
                          "PRAGMA user_version = " + std::to_string(user_version) +
                          "; PRAGMA application_id = " + std::to_string(application_id) + ";";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// One integer from a read-only query; -1 when the file or table is missing.
int64_t QueryInt(const fs::path& db_path, const std::string& sql) {
  if (!fs::exists(db_path)) return -1;
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

int64_t RunCount(const fs::path& db) { return std::max<int64_t>(0, QueryInt(db, "SELECT COUNT(*) FROM runs")); }

std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// `harness run` over the selftest table in dir/suites, plus extra flags.
ProcessResult RunSelftest(const TempDir& dir, const std::string& db, std::vector<std::string> extra = {},
                          const std::string& commit = "abcdef0") {
  std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--commit", commit,
                                   "--repo", dir.path().string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunHarness(args);
}

// Polls until the query gives at least `want` (or ~15 s pass).
bool WaitFor(const fs::path& db, const std::string& sql, int64_t want) {
  for (int i = 0; i < 600; ++i) {
    if (QueryInt(db, sql) >= want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

// 1. Another application's file, or no SQLite at all: refused, and not one byte changes.
TEST(SafetyE2E, ForeignFilesAreNeverTouched) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  struct Foreign {
    std::string name;
    int user_version, application_id;  // -1: plain text
  };
  const std::vector<Foreign> files = {{"plain.db", 0, 0},
                                      {"versioned.db", 1, 0},
                                      {"other_app.db", 99, 0x12345678},
                                      {"ours_but_newer.db", 99, Store::kApplicationId},
                                      {"text.db", -1, -1}};
  for (const auto& f : files) {
    SCOPED_TRACE(f.name);
    const fs::path path = dir / f.name;
    if (f.user_version < 0) WriteFile(path, "name,value\nnot,sqlite\n");
    else MakeForeignDb(path, f.user_version, f.application_id);
    const std::string before = ReadFile(path);
    ASSERT_FALSE(before.empty());

    auto run = RunSelftest(dir, path.string());
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find(f.name), std::string::npos) << "names the file: " << run.err;
    auto history = RunHarness({"history", "--db", path.string(), "--case", "selftest/test_outcome_0"});
    EXPECT_NE(history.exit_code, 0);
    EXPECT_NE(history.exit_code, 1) << "an error, not a verdict: " << history.err;
    auto report = RunHarness({"report", "--db", path.string(), "--out", (dir / "r.html").string()});
    EXPECT_NE(report.exit_code, 0);
    EXPECT_NE(report.exit_code, 1) << report.err;

    EXPECT_EQ(ReadFile(path), before) << "the file changed";
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      EXPECT_FALSE(fs::exists(path.string() + suffix)) << suffix << " left behind";
    EXPECT_FALSE(fs::exists(dir / "r.html"));
  }
}

// 2. An output path that is the database, however spelled, is refused before anything is written.
TEST(SafetyE2E, OutputPathThatIsTheDatabaseIsRefused) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  const fs::path db = dir / "h.db";
  ASSERT_EQ(RunSelftest(dir, db.string()).exit_code, 0);
  fs::create_symlink(db, dir / "link.db");
  fs::create_hard_link(db, dir / "hard.db");
  const std::string before = ReadFile(db);
  ASSERT_FALSE(before.empty());

  const ProcessOptions in_dir{.cwd = dir.path()};
  for (const std::string& out : {db.string(), std::string("./h.db"), (dir / "link.db").string(),
                                 (dir / "hard.db").string(), (dir / "sub/../h.db").string()}) {
    SCOPED_TRACE(out);
    fs::create_directories(dir / "sub");
    auto junit = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", "h.db", "--commit", "abcdef0",
                             "--junit", out},
                            in_dir);
    EXPECT_EQ(junit.exit_code, 2) << junit.err;
    EXPECT_NE(junit.err.find("results database"), std::string::npos) << junit.err;
    auto report = RunHarness({"report", "--db", "h.db", "--out", out}, in_dir);
    EXPECT_EQ(report.exit_code, 2) << report.err;
    EXPECT_EQ(ReadFile(db), before) << "the database changed";
  }
  // Its own sidecar files are the database too.
  auto wal = RunHarness({"report", "--db", db.string(), "--out", db.string() + "-wal"});
  EXPECT_EQ(wal.exit_code, 2) << wal.err;
  EXPECT_EQ(RunCount(db), 1) << "the database still opens and holds its one run";
  auto history = RunHarness({"history", "--db", db.string(), "--case", "selftest/test_outcome_0"});
  EXPECT_EQ(history.exit_code, 0) << history.err;

  // A successful write leaves the file and no temporary beside it.
  fs::create_directories(dir / "out");
  auto ok = RunSelftest(dir, db.string(), {"--junit", (dir / "out/junit.xml").string()}, "abcdef1");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto report_ok = RunHarness({"report", "--db", db.string(), "--out", (dir / "out/r.html").string()});
  ASSERT_EQ(report_ok.exit_code, 0) << report_ok.err;
  EXPECT_EQ(Listing(dir / "out"), (std::vector<std::string>{"junit.xml", "r.html"}));
  EXPECT_NE(ReadFile(dir / "out/junit.xml").find("<testsuites"), std::string::npos);
}

// What sits in a fifo once its writer is done (fd opened non-blocking beforehand).
std::string Drain(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// `harness report` of db in format, written to out.
ProcessResult ReportTo(const fs::path& db, const fs::path& out, const std::string& format = "html") {
  return RunHarness({"report", "--db", db.string(), "--format", format, "--out", out.string()});
}

void ExpectLinksWrittenThrough(const TempDir& dir, const fs::path& db) {
  // A symlink (relative) to a regular file: the file is replaced, atomically, beside itself.
  WriteFile(dir / "reports/real.html", "old");
  fs::create_symlink("reports/real.html", dir / "link.html");
  auto via_link = ReportTo(db, dir / "link.html");
  EXPECT_EQ(via_link.exit_code, 0) << via_link.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.html")) << "the link was replaced";
  EXPECT_NE(ReadFile(dir / "reports/real.html").find("<html"), std::string::npos);
  EXPECT_EQ(Listing(dir / "reports"), std::vector<std::string>{"real.html"});
  // A dangling symlink: the file it names is created.
  fs::create_directories(dir / "made");
  fs::create_symlink(dir / "made/junit.xml", dir / "dangling.xml");
  auto dangling = RunSelftest(dir, db.string(), {"--junit", (dir / "dangling.xml").string()}, "abcdef1");
  EXPECT_EQ(dangling.exit_code, 0) << dangling.err;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.xml"));
  EXPECT_NE(ReadFile(dir / "made/junit.xml").find("<testsuites"), std::string::npos);

  // A symlink to /dev/null: written into; the link and the device stay what they are.
  fs::create_symlink("/dev/null", dir / "null.xml");
  auto junit_null = RunSelftest(dir, db.string(), {"--junit", (dir / "null.xml").string()}, "abcdef2");
  EXPECT_EQ(junit_null.exit_code, 0) << junit_null.err;
  auto report_null = ReportTo(db, dir / "null.xml");
  EXPECT_EQ(report_null.exit_code, 0) << report_null.err;
  EXPECT_TRUE(fs::is_symlink(dir / "null.xml"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// A fifo: the reader gets the report; the fifo stays a fifo.
void ExpectFifoGetsTheReport(const TempDir& dir, const fs::path& db, const fs::path& fifo) {
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer's open does not wait
  ASSERT_GE(reader, 0);
  auto to_fifo = ReportTo(db, fifo, "text");
  const std::string got = Drain(reader);
  close(reader);
  EXPECT_EQ(to_fifo.exit_code, 0) << to_fifo.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  ASSERT_EQ(ReportTo(db, dir / "r.txt", "text").exit_code, 0);
  EXPECT_EQ(got, ReadFile(dir / "r.txt"));
}

// A socket is nothing an output can be written to: exit 2, left as it is.
void ExpectSocketRefused(const TempDir& dir, const fs::path& db) {
  const fs::path sock = dir / "sock";
  const int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(bind(sfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto to_socket = ReportTo(db, sock);
  EXPECT_EQ(to_socket.exit_code, 2) << to_socket.err;
  EXPECT_NE(to_socket.err.find("socket"), std::string::npos) << to_socket.err;
  EXPECT_TRUE(fs::is_socket(sock));
  close(sfd);
}

// 2b. An output writes into what its path names and never replaces it: a symlink's target
// is replaced (the link stays), a dangling link's target is created, a device (through a
// link to /dev/null) and a fifo are written through, a socket is refused; a results
// database that is a fifo is refused before SQLite opens it.
TEST(SafetyE2E, OutputsWriteIntoWhatThePathNames) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  const fs::path db = dir / "h.db";
  ASSERT_EQ(RunSelftest(dir, db.string()).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(ExpectLinksWrittenThrough(dir, db));
  const fs::path fifo = dir / "pipe";
  ASSERT_NO_FATAL_FAILURE(ExpectFifoGetsTheReport(dir, db, fifo));
  ASSERT_NO_FATAL_FAILURE(ExpectSocketRefused(dir, db));

  // A database path that is a fifo: refused before SQLite opens it (it would wait forever
  // reading it, and write its -wal beside it).
  const ProcessOptions bounded{.timeout_s = 60};
  auto merge_into_fifo = RunHarness({"merge", fifo.string(), db.string()}, bounded);
  EXPECT_EQ(merge_into_fifo.exit_code, 2) << merge_into_fifo.err;
  EXPECT_NE(merge_into_fifo.err.find("not a regular file"), std::string::npos) << merge_into_fifo.err;
  auto run_into_fifo = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", fifo.string(),
                                   "--commit", "abcdef3", "--repo", dir.path().string()},
                                  bounded);
  EXPECT_EQ(run_into_fifo.exit_code, 2) << run_into_fifo.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(fifo.string() + "-wal"));
}

// 3. An empty --db is a usage error and writes nothing anywhere.
TEST(SafetyE2E, EmptyDbPathIsAUsageError) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  fs::create_directories(dir / "work");
  const ProcessOptions in_dir{.cwd = dir / "work"};
  auto run = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", "", "--commit", "abcdef0"}, in_dir);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--db"), std::string::npos) << run.err;
  auto history = RunHarness({"history", "--db", "", "--case", "x"}, in_dir);
  EXPECT_EQ(history.exit_code, 2) << history.err;
  auto report = RunHarness({"report", "--db", "", "--out", "r.html"}, in_dir);
  EXPECT_EQ(report.exit_code, 2) << report.err;
  EXPECT_TRUE(Listing(dir / "work").empty());
  EXPECT_EQ(Listing(dir.path()), (std::vector<std::string>{"suites", "work"}));
}

// 4. history and report read; they never create a database nor change one.
TEST(SafetyE2E, QueriesNeverCreateOrChangeADatabase) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": 3})"));
  const fs::path missing = dir / "missing.db";
  auto history = RunHarness({"history", "--db", missing.string(), "--case", "x"});
  EXPECT_EQ(history.exit_code, 2) << history.err;
  auto report = RunHarness({"report", "--db", missing.string(), "--out", (dir / "r.html").string()});
  EXPECT_EQ(report.exit_code, 2) << report.err;
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_FALSE(fs::exists(dir / "r.html"));

  const fs::path db = dir / "h.db";
  ASSERT_EQ(RunSelftest(dir, db.string()).exit_code, 0);
  EXPECT_FALSE(fs::exists(db.string() + "-wal")) << "the run's last close checkpoints";
  const std::string before = ReadFile(db);
  auto h = RunHarness({"history", "--db", db.string(), "--case", "selftest/test_outcome_0", "--format", "json"});
  EXPECT_EQ(h.exit_code, 0) << h.err;
  auto r = RunHarness({"report", "--db", db.string(), "--out", (dir / "r.html").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(db), before) << "a query changed the database";
  EXPECT_EQ(RunCount(db), 1);
}

// TEST_DEVICE is the default device: only precision sets A apart from no config at all.
constexpr const char* kConfigA = R"({"format_version": 1, "device": "TEST_DEVICE", "precision": "fp8", "faults": []})";
constexpr const char* kConfigB = R"({"format_version": 1, "device": "TEST_DEVICE", "precision": "fp8",
                                     "faults": ["sp-counts-bookkeeping-users"]})";

// 5 and 6c. A killed run resumes only with the same identity, and keeps its finished cases.
TEST(SafetyE2E, ResumeRefusesAnotherIdentityAndKeepsFinishedCases) {
  TempDir dir;
  const auto state = (dir / "state.json").string();
  WriteFile(state, R"({"outcome": "pass"})");
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "samples": 3, "state_file": ")" + state +
                          R"("}, {"outcome": "pass", "samples": 60, "sleep_ms": 25})"));
  WriteFile(dir / "a.json", kConfigA);
  WriteFile(dir / "b.json", kConfigB);
  const fs::path db = dir / "h.db";
  const std::vector<std::string> with_a = {"--stack-config", (dir / "a.json").string()};
  pid_t pid = testing_util::SpawnHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db.string(),
                                          "--commit", "abcdef0", "--stack-config", (dir / "a.json").string()});
  ASSERT_GE(pid, 0);
  const bool streaming = WaitFor(db,
                                 "SELECT COUNT(*) FROM samples s JOIN case_results c ON c.id = s.case_result_id "
                                 "WHERE c.case_id = 'selftest/test_outcome_1'",
                                 3);
  KillAndReap(pid);
  ASSERT_TRUE(streaming) << "the slow case never started";
  int64_t first_case_row = 0;
  {
    auto store = std::move(Store::OpenReadOnly(db)).value();
    auto cases = *store->reader().Cases(1);
    ASSERT_EQ(cases.size(), 2u);
    ASSERT_EQ(cases[0].result.status, CaseStatus::kPass);
    ASSERT_EQ(cases[1].result.status, CaseStatus::kRunning);
    first_case_row = cases[0].id;
  }
  // Were the finished case run again, it would now fail.
  WriteFile(state, R"({"outcome": "fail"})");

  auto other_faults = RunSelftest(dir, db.string(), {"--stack-config", (dir / "b.json").string(), "--resume"});
  EXPECT_EQ(other_faults.exit_code, 2) << other_faults.err;
  EXPECT_NE(other_faults.err.find("stack_config.faults"), std::string::npos) << other_faults.err;
  auto no_config = RunSelftest(dir, db.string(), {"--resume"});
  EXPECT_EQ(no_config.exit_code, 2) << no_config.err;
  EXPECT_NE(no_config.err.find("stack_config.precision"), std::string::npos) << no_config.err;
  auto endpoint = RunSelftest(dir, db.string(),
                              {"--stack-config", (dir / "a.json").string(), "--endpoint", "http://127.0.0.1:1",
                               "--model", "m", "--resume"});
  EXPECT_EQ(endpoint.exit_code, 2) << endpoint.err;
  EXPECT_NE(endpoint.err.find("endpoint"), std::string::npos) << endpoint.err;
  EXPECT_EQ(RunCount(db), 1) << "a refused --resume starts no run";

  auto resumed = RunSelftest(dir, db.string(), {"--stack-config", (dir / "a.json").string(), "--resume"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.err.find("resuming run 1"), std::string::npos) << resumed.err;
  auto store = std::move(Store::OpenReadOnly(db)).value();
  EXPECT_EQ(RunCount(db), 1);
  EXPECT_EQ(store->reader().Run(1)->status, RunStatus::kPass);
  auto cases = *store->reader().Cases(1);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].id, first_case_row);
  EXPECT_EQ(cases[0].result.status, CaseStatus::kPass) << "the finished case was kept, not rerun";
  EXPECT_EQ(store->reader().Samples(cases[0].id)->size(), 3u);
  EXPECT_EQ(cases[1].result.status, CaseStatus::kPass) << "the interrupted case was rerun";
  EXPECT_EQ(store->reader().Samples(cases[1].id)->size(), 60u);
}

// 5. Configs that differ only in words for people hash equally; a real difference does not.
TEST(SafetyE2E, EquivalentConfigsShareTheRunIdentity) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  WriteFile(dir / "version.json", R"({"format_version": 1})");
  WriteFile(dir / "comment.json", R"({"comment": "x", "description": "y"})");
  WriteFile(dir / "precision.json", R"({"format_version": 1, "precision": "fp8"})");
  const fs::path db = dir / "h.db";
  ASSERT_EQ(RunSelftest(dir, db.string()).exit_code, 0);
  for (const char* config : {"version.json", "comment.json", "precision.json"}) {
    auto r = RunSelftest(dir, db.string(), {"--stack-config", (dir / config).string()});
    ASSERT_EQ(r.exit_code, 0) << config << ": " << r.err;
  }
  auto store = std::move(Store::OpenReadOnly(db)).value();
  const std::string plain = store->reader().Run(1)->config_hash;
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(store->reader().Run(2)->config_hash, plain) << "{\"format_version\": 1}";
  EXPECT_EQ(store->reader().Run(3)->config_hash, plain) << "a comment";
  EXPECT_NE(store->reader().Run(4)->config_hash, plain) << "precision changes the answers";
}

// 6a and 6b. --resume with nothing interrupted starts a new run; a finished run is never reopened.
TEST(SafetyE2E, ResumeWithoutAnInterruptedRunStartsANewOne) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": 2}, {"outcome": "pass"})"));
  const fs::path db = dir / "h.db";
  auto first = RunSelftest(dir, db.string(), {"--resume", "--format", "json"});
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("starting a new run"), std::string::npos) << first.err;
  EXPECT_EQ(RunCount(db), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM case_results WHERE run_id = 1 AND status = 'pass'"), 2);

  auto again = RunSelftest(dir, db.string(), {"--resume"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("resuming run"), std::string::npos) << "reopened a finished run: " << again.err;
  ASSERT_EQ(RunCount(db), 2) << "a finished run is not resumed";
  auto store = std::move(Store::OpenReadOnly(db)).value();
  EXPECT_EQ(store->reader().Run(1)->status, RunStatus::kPass);
  EXPECT_FALSE(store->reader().Run(1)->finished_at.empty());
  EXPECT_EQ(store->reader().Run(2)->status, RunStatus::kPass);
  EXPECT_EQ(store->reader().Cases(2)->size(), 2u) << "the new run ran every case";
}

// 7. --resume never joins a run that is still alive; once it dies, it resumes.
TEST(SafetyE2E, ResumeRefusesALiveRun) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": 400, "sleep_ms": 25})"));
  const fs::path db = dir / "h.db";
  // 10 s of cases, ended by the kill below: long enough to be running still when a slow
  // (sanitized) second process starts.
  pid_t pid = testing_util::SpawnHarness(
      {"run", "--suites-dir", (dir / "suites").string(), "--db", db.string(), "--commit", "abcdef0"});
  ASSERT_GE(pid, 0);
  const bool started = WaitFor(db, "SELECT COUNT(*) FROM samples", 2);
  if (!started) KillAndReap(pid);
  ASSERT_TRUE(started) << "the first run never started";
  auto live = RunSelftest(dir, db.string(), {"--resume"});
  EXPECT_EQ(live.exit_code, 2) << live.err;
  EXPECT_NE(live.err.find("still running"), std::string::npos) << live.err;
  EXPECT_EQ(RunCount(db), 1);
  KillAndReap(pid);
  auto after = RunSelftest(dir, db.string(), {"--resume"});
  EXPECT_NE(after.err.find("resuming run 1"), std::string::npos) << after.err;
  EXPECT_EQ(after.exit_code, 0) << after.err;
}

// 8. Input errors stop the run before any case, and store nothing.
TEST(SafetyE2E, InputErrorsStoreNothing) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  WriteFile(dir / "typo.json", R"({"format_version": 1, "faluts": ["x"]})");
  WriteFile(dir / "exec_string.json", R"({"stack": "exec", "exec": {"command": "a string"}})");
  const fs::path db = dir / "h.db";
  const fs::path fresh = dir / "fresh.db";
  ASSERT_EQ(RunSelftest(dir, db.string()).exit_code, 0);
  struct Case {
    std::vector<std::string> flags;
    std::string commit, message;
  };
  const std::vector<Case> cases = {
      {{"--stack-config", (dir / "typo.json").string()}, "abcdef1", "faults"},
      {{"--stack", "exec"}, "abcdef1", "exec"},
      {{"--stack-config", (dir / "exec_string.json").string()}, "abcdef1", "command"},
      {{"--endpoint", "http://127.0.0.1:1", "--model", "m", "--api-key-env", "HARNESS_TEST_SURELY_UNSET_VAR"},
       "abcdef1",
       "HARNESS_TEST_SURELY_UNSET_VAR"},
      {{}, "not-a-sha!", "not-a-sha!"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    for (const fs::path& target : {db, fresh}) {
      auto r = RunSelftest(dir, target.string(), c.flags, c.commit);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    }
    EXPECT_EQ(RunCount(db), 1) << "an input error stored a run";
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM commits"), 1) << "an input error stored a commit";
    EXPECT_FALSE(fs::exists(fresh)) << "an input error created a database";
  }
}

// 9. An unknown command is named, with the known ones.
TEST(SafetyE2E, UnknownCommandIsNamedWithTheKnownOnes) {
  auto r = RunHarness({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'frobnicate'"), std::string::npos) << r.err;
  for (const char* known : {"run", "history", "report", "version"})
    EXPECT_NE(r.err.find(known), std::string::npos) << known << " not listed: " << r.err;
  auto close = RunHarness({"histroy"});
  EXPECT_EQ(close.exit_code, 2);
  EXPECT_NE(close.err.find("did you mean 'history'"), std::string::npos) << close.err;
}

}  // namespace
}  // namespace harness
