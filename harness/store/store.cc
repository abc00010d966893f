#include "harness/store/store.h"

#include "harness/store/schema.h"
#include "harness/store/sqlite_db.h"

namespace harness {

ReadOnlyStore::ReadOnlyStore(std::unique_ptr<store_sql::Connection> connection)
    : connection_(std::move(connection)),
      reader_(*connection_),
      bisect_reader_(*connection_),
      golden_reader_(*connection_) {}

ReadOnlyStore::~ReadOnlyStore() = default;

sqlite3* ReadOnlyStore::db() const { return connection_->db; }

const std::filesystem::path& ReadOnlyStore::path() const { return connection_->path; }

Store::Store(std::unique_ptr<store_sql::Connection> connection)
    : ReadOnlyStore(std::move(connection)),
      writer_(*connection_),
      bisect_record_(*connection_),
      golden_log_(*connection_) {}

Store::~Store() = default;

Result<std::unique_ptr<store_sql::Connection>> Store::Connect(const std::filesystem::path& path, bool read_only) {
  auto db = store_schema::OpenChecked(path, read_only, kSchemaVersion);
  if (!db) return db.error();
  auto connection = std::make_unique<store_sql::Connection>(*db, path);
  // A writer's OpenChecked migrated the file to kSchemaVersion; a reader's left it as it was.
  if (!read_only) return connection;
  auto version = store_sql::PragmaInt(*db, "PRAGMA user_version");
  if (!version) return version.error();
  if (*version < kSchemaVersion) {
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
  return connection;
}

Result<std::unique_ptr<Store>> Store::Open(const std::filesystem::path& path) {
  auto connection = Connect(path, false);
  if (!connection) return connection.error();
  return std::unique_ptr<Store>(new Store(std::move(connection).value()));
}

Result<std::unique_ptr<ReadOnlyStore>> Store::OpenReadOnly(const std::filesystem::path& path) {
  auto connection = Connect(path, true);
  if (!connection) return connection.error();
  return std::unique_ptr<ReadOnlyStore>(new ReadOnlyStore(std::move(connection).value()));
}

Status Store::CreateAtVersionForTest(const std::filesystem::path& path, int version) {
  auto db = store_schema::OpenChecked(path, false, version);
  if (!db) return db.error();
  sqlite3_close(*db);
  return OkStatus();
}

Result<int> ReadOnlyStore::SchemaVersion() { return store_sql::PragmaInt(db(), "PRAGMA user_version"); }

Result<std::vector<int64_t>> Store::RunningRunIds() {
  return store_sql::QueryAll<int64_t>(db(), "SELECT id FROM runs WHERE status = 'running' ORDER BY id",
                                      "read running runs", store_sql::IntColumn);
}

}  // namespace harness
