// A child's output read into memory, bounded: the first head_bytes and a rolling tail of
// the last tail_bytes are kept, what lies between is counted and dropped. A command that
// writes 200 MB to stdout (or loops printing) then costs at most head + 2 x tail bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harness {

class BoundedText {
 public:
  BoundedText(std::size_t head_bytes, std::size_t tail_bytes) : head_max_(head_bytes), tail_max_(tail_bytes) {}
  void Append(std::string_view bytes);
  // Bytes dropped between the head and the tail so far.
  uint64_t dropped() const { return dropped_; }
  uint64_t total() const { return total_; }
  // The head, then "\n[... N bytes dropped ...]\n" where bytes were dropped, then the tail:
  // wherever the text is shown, it says how much is missing and where.
  std::string Text() const;

 private:
  std::size_t head_max_, tail_max_;
  std::string head_;
  std::string tail_;           // the tail's bytes start at tail_from_
  std::size_t tail_from_ = 0;  // compacted once it passes tail_max_: amortized O(1) per byte
  uint64_t dropped_ = 0, total_ = 0;
};

// The marker Text() writes where bytes were dropped.
std::string DroppedMarker(uint64_t dropped);

}  // namespace harness
