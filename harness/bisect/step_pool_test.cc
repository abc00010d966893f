// The slots of `bisect --jobs K`: a step that ends is collected as it ends (the next choice
// starts at once), one still running keeps its slot, and stopping reaches every step.
#include "harness/bisect/step_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace harness::bisect {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Two slots, one step held until the test lets it go and one that ends at once: the wait
// returns the ended one long before its timeout (a wait that ran to the timeout would make
// every step of a --jobs bisect wait for the slowest poll), and the held one keeps its slot.
TEST(StepPool, AStepThatEndsIsCollectedAsItEndsAndAHeldOneKeepsItsSlot) {
  StepPool pool(2);
  EXPECT_EQ(pool.FreeSlot(), 0);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  pool.Start(0, [released] { released.wait(); });
  EXPECT_EQ(pool.FreeSlot(), 1);
  pool.Start(1, [] {});
  EXPECT_EQ(pool.FreeSlot(), -1) << "both slots run";

  constexpr double kLongWait = 30;
  Clock::time_point t0 = Clock::now();
  EXPECT_EQ(pool.WaitForEnded(kLongWait), std::vector<int>{1});
  EXPECT_LT(SecondsSince(t0), kLongWait / 2) << "the wait ends when a step does, not at its timeout";
  EXPECT_EQ(pool.FreeSlot(), 1) << "the ended step's slot is free again";
  EXPECT_TRUE(pool.WaitForEnded(0.01).empty()) << "slot 0 still runs";
  EXPECT_EQ(pool.FreeSlot(), 1);

  release.set_value();
  t0 = Clock::now();
  EXPECT_EQ(pool.WaitForEnded(kLongWait), std::vector<int>{0});
  EXPECT_LT(SecondsSince(t0), kLongWait / 2);
  EXPECT_EQ(pool.FreeSlot(), 0);
  EXPECT_TRUE(pool.WaitForEnded(0.01).empty()) << "nothing runs: nothing ends twice";
}

// Steps that end while nobody waits are all collected by the next wait, each once.
TEST(StepPool, StepsThatEndedMeanwhileAreCollectedTogether) {
  StepPool pool(3);
  std::vector<std::promise<void>> done(3);
  for (int slot = 0; slot < 3; ++slot) pool.Start(slot, [&done, slot] { done[slot].set_value(); });
  for (auto& d : done) d.get_future().wait();
  // Each step's work has returned; its "ended" mark follows under the pool's lock.
  std::vector<int> ended;
  for (int tries = 0; ended.size() < 3 && tries < 100; ++tries)
    for (int slot : pool.WaitForEnded(1)) ended.push_back(slot);
  std::sort(ended.begin(), ended.end());
  EXPECT_EQ(ended, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(pool.FreeSlot(), 0);
}

// A pool asked for no slots has one; stopping sets the flag every step's command watches,
// and the pool's end stops and joins a step still running (a bisect that returns early).
TEST(StepPool, StoppingReachesAStepStillRunningAndThePoolsEndJoinsIt) {
  StepPool none(0);
  EXPECT_EQ(none.FreeSlot(), 0);
  none.Start(0, [] {});
  EXPECT_EQ(none.WaitForEnded(60), std::vector<int>{0});

  std::promise<void> saw_stop;
  std::future<void> stopped = saw_stop.get_future();
  {
    StepPool pool(2);
    const std::atomic<bool>* stop = pool.stop_flag();
    EXPECT_FALSE(*stop);
    pool.Start(1, [stop, &saw_stop] {
      while (!*stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_stop.set_value();
    });
    EXPECT_TRUE(pool.WaitForEnded(0.01).empty());
  }  // ~StepPool: StopAll, then join
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(0)), std::future_status::ready);
}

}  // namespace
}  // namespace harness::bisect
