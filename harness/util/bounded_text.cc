#include "harness/util/bounded_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace harness {

std::string DroppedMarker(uint64_t dropped) { return fmt::format("\n[... {} bytes dropped ...]\n", dropped); }

void BoundedText::Append(std::string_view bytes) {
  total_ += bytes.size();
  const std::size_t to_head = std::min(bytes.size(), head_max_ - head_.size());
  head_.append(bytes.substr(0, to_head));
  bytes.remove_prefix(to_head);
  if (bytes.empty()) return;
  if (tail_max_ == 0) {
    dropped_ += bytes.size();
    return;
  }
  if (bytes.size() > tail_max_) {  // only its end can stay
    dropped_ += (tail_.size() - tail_from_) + (bytes.size() - tail_max_);
    tail_.assign(bytes.substr(bytes.size() - tail_max_));
    tail_from_ = 0;
    return;
  }
  tail_.append(bytes);
  const std::size_t kept = tail_.size() - tail_from_;
  if (kept > tail_max_) {
    dropped_ += kept - tail_max_;
    tail_from_ += kept - tail_max_;
  }
  if (tail_from_ > tail_max_) {
    tail_.erase(0, tail_from_);
    tail_from_ = 0;
  }
}

std::string BoundedText::Text() const {
  std::string text = head_;
  if (dropped_ > 0) text += DroppedMarker(dropped_);
  text.append(tail_, tail_from_, std::string::npos);
  return text;
}

}  // namespace harness
