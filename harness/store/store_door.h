// The base of each of the store's doors (RunWriter, ResultReader, BisectRecord, GoldenLog):
// the connection they share, which Store owns.
#pragma once

namespace harness {

namespace store_sql {
struct Connection;
}

class StoreDoor {
 protected:
  explicit StoreDoor(store_sql::Connection& connection) : connection_(connection) {}
  store_sql::Connection& connection_;
};

}  // namespace harness
