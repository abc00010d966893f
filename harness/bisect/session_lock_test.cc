#include "harness/bisect/session_lock.h"

#include <gtest/gtest.h>

#include "harness/store/bisect_evidence.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness::bisect {
namespace {

namespace fs = std::filesystem;
using testing_util::TempDir;
using testing_util::WriteFile;

std::string StatusOf(Store& store, int64_t id) {
  auto s = store.BisectSession(id);
  return s.ok() ? s->status : "";
}

// Three sessions marked running: one whose lock this process holds, one whose lock file
// nobody holds (its process died, leaving a worktree it made), one with no lock at all.
// Only the live one stays running; the dead one's worktree is removed.
TEST(SessionLock, ADeadSessionIsCleanedUpAndALiveOneLeftAlone) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  auto store = std::move(Store::Open(db)).value();
  const auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  const fs::path repo = fs::canonical(dir / "repo");
  const BisectSessionRow row{.good = "a", .bad = "b", .target = "t",
                             .args_json = ToJson(BisectSessionHeader{.good = "a", .bad = "b", .repo = repo.string()})
                                              .dump()};

  auto live = SessionLock::Create(db);
  ASSERT_TRUE(live.ok()) << live.error().message;
  auto live_id = (*live)->Begin(*store, row);
  ASSERT_TRUE(live_id.ok());
  EXPECT_TRUE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock")));

  const int64_t dead_id = *store->BeginBisect(row);
  auto folder = MakeWorktreeFolder();
  ASSERT_TRUE(folder.ok());
  const fs::path worktree = *folder / "0123456789ab";
  ASSERT_TRUE(AddWorktree(repo, worktree, shas[0]).ok());
  WriteFile(dir / ("h.db.bisect-" + std::to_string(dead_id) + ".lock"),
            Json{{"pid", 1}, {"repo", repo.string()}, {"worktree", worktree.string()}}.dump() + "\n   ");
  const int64_t lockless_id = *store->BeginBisect(row);

  auto notes = RecoverDeadSessions(db, *store);
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_EQ(StatusOf(*store, *live_id), "running");
  EXPECT_EQ(StatusOf(*store, dead_id), "error");
  EXPECT_NE(store->BisectSession(dead_id)->result_json.find("\"interrupted\":true"), std::string::npos);
  EXPECT_EQ(StatusOf(*store, lockless_id), "error");
  EXPECT_FALSE(fs::exists(worktree.parent_path())) << "the worktree's folder is removed";
  EXPECT_FALSE(fs::exists(dir / ("h.db.bisect-" + std::to_string(dead_id) + ".lock")));
  EXPECT_TRUE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock")));
  const std::string all = [&] {
    std::string s;
    for (const auto& n : *notes) s += n + "\n";
    return s;
  }();
  EXPECT_NE(all.find("bisect session " + std::to_string(dead_id) + ": removed its worktree"), std::string::npos) << all;
  EXPECT_NE(all.find("bisect session " + std::to_string(lockless_id) + ": no process holds it"), std::string::npos)
      << all;

  live->reset();
  EXPECT_FALSE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock"))) << "unlinked when done";
}

// A hand-edited or torn lock file is read without trust: wrong types are no crash, and a
// worktree the harness did not make is left alone, with a warning.
TEST(SessionLock, AMalformedLockFileIsNoCrash) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  auto store = std::move(Store::Open(db)).value();
  const fs::path keep = dir / "precious" / "wt";
  WriteFile(keep / "file", "x");
  WriteFile(keep.parent_path() / "sibling", "x");
  WriteFile(dir / "h.db.bisect-pending-1-abcdef.lock",
            Json{{"pid", "x"}, {"command", {{"pid", "y"}}}, {"worktree", keep.string()}}.dump());
  WriteFile(dir / "h.db.bisect-7.lock", "{not json");
  auto notes = RecoverDeadSessions(db, *store);
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_TRUE(fs::exists(keep / "file")) << "a folder bisect did not make is not removed";
  EXPECT_TRUE(fs::exists(keep.parent_path() / "sibling"));
  ASSERT_EQ(notes->size(), 1u) << "the torn lock names nothing to undo";
  EXPECT_NE(notes->front().find("warning: a bisect that had not begun its session: its lock is not trusted"),
            std::string::npos)
      << notes->front();
  EXPECT_NE(notes->front().find("not under the harness's worktree root"), std::string::npos) << notes->front();
  EXPECT_FALSE(fs::exists(dir / "h.db.bisect-7.lock"));
}

}  // namespace
}  // namespace harness::bisect
