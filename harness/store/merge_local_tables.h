// The tables `harness merge` never copies (Store::MergeFrom, store_merge.cc), each with why:
// it belongs to the database it was written in. Every other table of the schema is copied;
// store_merge_test.cc holds each to it, so a table a migration adds needs a merge step or a
// line here.
#pragma once

#include <span>
#include <string_view>

namespace harness {

struct MergeLocalTable {
  std::string_view name;
  std::string_view reason;
};

std::span<const MergeLocalTable> MergeLocalTables();

}  // namespace harness
