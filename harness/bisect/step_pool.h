// The threads of `harness bisect --jobs K`: up to K step commands at once, each in a slot
// (0..K-1) of its own. The session's thread starts each step's work (the command in its
// worktree: nothing that touches the store or the search) and collects each as it ends, so
// a step that ends early starts the next choice at once. Stopping sets a flag every running
// step's command watches (its process group gets SIGTERM, then SIGKILL after the grace).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace harness::bisect {

class StepPool {
 public:
  explicit StepPool(int slots);
  ~StepPool();  // stops and joins what still runs
  StepPool(const StepPool&) = delete;
  StepPool& operator=(const StepPool&) = delete;

  // A slot with nothing running, or -1.
  int FreeSlot() const;
  // Runs work on a thread of its own in that (free) slot.
  void Start(int slot, std::function<void()> work);
  // The slots whose work has ended (their threads joined), waiting up to timeout_s for one.
  std::vector<int> WaitForEnded(double timeout_s);
  // Asks every running command to stop (StepPool::stop_flag).
  void StopAll() { stop_ = true; }
  const std::atomic<bool>* stop_flag() const { return &stop_; }

 private:
  struct Slot {
    std::thread thread;
    bool running = false;
    bool ended = false;
  };
  std::vector<Slot> slots_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::atomic<bool> stop_{false};
};

}  // namespace harness::bisect
