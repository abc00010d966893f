// The store's schema: the numbered migrations (each in one BEGIN IMMEDIATE transaction with
// its user_version bump), the checks a file passes before anything reads or writes it (whose
// file it is, and that its schema is exactly the one its version's migrations create), and
// the migrated copy a reader works on instead of an older file. docs/store.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "harness/util/error.h"

struct sqlite3;

namespace harness::store_schema {

inline constexpr int kVersion = 11;
inline constexpr int32_t kApplicationId = 0x48524e53;  // "HRNS"

// Runs migrations user_version+1 .. target, each in its own transaction.
Status Migrate(sqlite3* db, const std::string& path, int target);

// Opens path for a store: never a folder, device or fifo; a missing file only for a writer
// (it is created). Only a missing or empty file or a harness database whose schema is the one
// its version's migrations create is accepted, checked before anything is written; then the
// connection's pragmas are set and, for a writer, the file migrated to migrate_to.
Result<sqlite3*> OpenChecked(const std::filesystem::path& path, bool read_only, int migrate_to);

// A private folder in the temporary directory holding a migrated copy (copy.db) of the older
// database src is connected to (the backup API copies one snapshot, WAL included, without
// writing the original); the caller removes the folder.
Result<std::filesystem::path> MigratedCopy(sqlite3* src, const std::filesystem::path& path);

// The first row whose parent row is missing, in words ("table runs row 2 has a commit_id that
// names no row of commits (3 such rows)"); empty when every row has its parent.
Result<std::string> OrphanRow(sqlite3* db);

}  // namespace harness::store_schema
