// The base of each of the store's doors (RunWriter, ResultReader, BisectRecord and its
// reading half BisectRecordReader, GoldenLog and GoldenLogReader): the connection they share,
// which the store that hands them out owns (store.h). Only the store's files can name a
// connection (sqlite_db.h), so only they build a door.
#pragma once

namespace harness {

namespace store_sql {
struct Connection;
}

class StoreDoor {
 public:
  explicit StoreDoor(store_sql::Connection& connection) : connection_(connection) {}

 protected:
  store_sql::Connection& connection_;
};

}  // namespace harness
