#include "harness/bisect/step_pool.h"

#include <chrono>

namespace harness::bisect {

StepPool::StepPool(int slots) : slots_(static_cast<std::size_t>(slots < 1 ? 1 : slots)) {}

StepPool::~StepPool() {
  StopAll();
  for (auto& s : slots_)
    if (s.thread.joinable()) s.thread.join();
}

int StepPool::FreeSlot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (!slots_[i].running) return static_cast<int>(i);
  return -1;
}

void StepPool::Start(int slot, std::function<void()> work) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s.running = true;
    s.ended = false;
  }
  s.thread = std::thread([this, &s, work = std::move(work)] {
    work();
    std::lock_guard<std::mutex> lock(mutex_);
    s.ended = true;
    ended_.notify_all();
  });
}

std::vector<int> StepPool::WaitForEnded(double timeout_s) {
  std::vector<int> out;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto any_ended = [&] {
      for (const auto& s : slots_)
        if (s.running && s.ended) return true;
      return false;
    };
    ended_.wait_for(lock, std::chrono::duration<double>(timeout_s), any_ended);
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].running && slots_[i].ended) out.push_back(static_cast<int>(i));
  }
  for (int i : out) {
    Slot& s = slots_[static_cast<std::size_t>(i)];
    s.thread.join();
    std::lock_guard<std::mutex> lock(mutex_);
    s.running = false;
    s.ended = false;
  }
  return out;
}

}  // namespace harness::bisect
