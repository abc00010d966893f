#include "harness/store/store.h"

#include "harness/store/schema.h"
#include "harness/store/sqlite_db.h"

namespace harness {

StoreConnection::StoreConnection(std::unique_ptr<store_sql::Connection> connection)
    : shared_connection_(std::move(connection)) {}

StoreConnection::~StoreConnection() = default;

Store::Store(std::unique_ptr<store_sql::Connection> connection)
    : StoreConnection(std::move(connection)),
      RunWriter(*shared_connection_),
      ResultReader(*shared_connection_),
      BisectRecord(*shared_connection_),
      GoldenLog(*shared_connection_) {}

Store::~Store() = default;

sqlite3* Store::db() const { return shared_connection_->db; }

Result<std::unique_ptr<Store>> Store::OpenWith(const std::filesystem::path& path, bool read_only) {
  auto db = store_schema::OpenChecked(path, read_only, kSchemaVersion);
  if (!db) return db.error();
  auto connection = std::make_unique<store_sql::Connection>(*db, path);
  if (read_only && store_sql::PragmaInt(*db, "PRAGMA user_version") < kSchemaVersion) {
    // An older schema: the queries read a migrated copy, and the user's file is not written.
    auto dir = store_schema::MigratedCopy(*db, path);
    if (!dir) return dir.error();
    connection.reset();
    auto copy = store_schema::OpenChecked(*dir / "copy.db", true, kSchemaVersion);
    if (!copy) {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
      return copy.error();
    }
    connection = std::make_unique<store_sql::Connection>(*copy, path);
    connection->copy_dir = *dir;
  }
  return std::unique_ptr<Store>(new Store(std::move(connection)));
}

Result<std::unique_ptr<Store>> Store::Open(const std::filesystem::path& path) { return OpenWith(path, false); }
Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::filesystem::path& path) { return OpenWith(path, true); }

Status Store::CreateAtVersionForTest(const std::filesystem::path& path, int version) {
  auto db = store_schema::OpenChecked(path, false, version);
  if (!db) return db.error();
  sqlite3_close(*db);
  return OkStatus();
}

int Store::SchemaVersion() { return store_sql::PragmaInt(db(), "PRAGMA user_version"); }

Result<std::vector<int64_t>> Store::RunningRunIds() {
  return store_sql::QueryAll<int64_t>(db(), "SELECT id FROM runs WHERE status = 'running' ORDER BY id",
                                      "read running runs", store_sql::IntColumn);
}

}  // namespace harness
