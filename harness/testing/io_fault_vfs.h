// An I/O fault on demand, for tests of what the code does when SQLite cannot read a file
// (a failing disk, a file cut short under it): the default VFS, wrapped, made the default
// for the life of an IoFaultVfs, so every connection the code under test opens goes
// through it. On a file whose path contains `path_part`, the reads and the lock requests
// (xLock, and xShmLock's locks in WAL mode: every statement's read transaction takes one,
// even when its pages are cached) are counted; once the budget is spent, each further one
// fails (SQLITE_IOERR_READ, _LOCK, _SHMLOCK) until Off(). Other files, and unlocks, pass
// through untouched. Memory-mapped reads (xFetch) are refused, so every page comes through
// xRead, and SQLite's soft heap limit is 1 byte for the life of an IoFaultVfs, so a page cache
// keeps no more than its few minimum pages: a read the cache would have answered (every page
// of a small store is cached by the check Store::Open makes) goes to the file, and can fail.
//
// A test sweeps the budget from 0 up, one full run of the code per budget, until the run
// succeeds: each operation the code makes on the file fails, at each point it makes it, and
// (FailOnceAfter) fails alone, the file readable again at the next one.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace harness::testing_util {

class IoFaultVfs {
 public:
  explicit IoFaultVfs(std::string path_part) : path_part_(std::move(path_part)) {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;
    vfs_.zName = "harness_io_fault";
    vfs_.pAppData = this;
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
    vfs_.xOpen = &Open;
    sqlite3_vfs_register(&vfs_, 1);
    heap_limit_ = sqlite3_soft_heap_limit64(1);
  }
  ~IoFaultVfs() {
    sqlite3_soft_heap_limit64(heap_limit_);
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(real_, 1);
  }
  IoFaultVfs(const IoFaultVfs&) = delete;
  IoFaultVfs& operator=(const IoFaultVfs&) = delete;

  // From now on, `operations` more reads and locks of the matching files succeed and every
  // later one fails.
  void FailAfter(int64_t operations) { budget_ = operations, once_ = false, allowed_ = 0, refused_ = 0; }
  // The same, but only the one operation after them fails and every later one succeeds: a
  // transient fault, which shows a caller that went on past a failed read (the next read
  // succeeds, so only the use of what was not read can tell).
  void FailOnceAfter(int64_t operations) { FailAfter(operations), once_ = true; }
  void Off() { budget_ = -1; }
  // Operations on the matching files allowed and refused since the last FailAfter.
  int64_t allowed() const { return allowed_; }
  int64_t refused() const { return refused_; }

 private:
  // Laid out by SQLite in szOsFile bytes: this header, then the real VFS's file.
  struct File {
    sqlite3_file base;
    sqlite3_file* real;
    IoFaultVfs* owner;
    bool counted;
  };

  static sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

  static int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
    auto* self = static_cast<IoFaultVfs*>(vfs->pAppData);
    auto* f = reinterpret_cast<File*>(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    f->owner = self;
    f->counted = name != nullptr && std::strstr(name, self->path_part_.c_str()) != nullptr;
    const int rc = self->real_->xOpen(self->real_, name, f->real, flags, out_flags);
    // A failed open leaves pMethods null, so SQLite never calls xClose on it.
    f->base.pMethods = f->real->pMethods != nullptr ? &Methods() : nullptr;
    return rc;
  }

  // Spends one operation of the budget on a matching file; false: refuse it.
  static bool Allowed(sqlite3_file* file) {
    auto* f = reinterpret_cast<File*>(file);
    if (!f->counted || f->owner->budget_ < 0) return true;
    if (f->owner->budget_ == 0) {
      ++f->owner->refused_;
      if (f->owner->once_) f->owner->budget_ = -1;
      return false;
    }
    --f->owner->budget_;
    ++f->owner->allowed_;
    return true;
  }

  static int Read(sqlite3_file* f, void* buffer, int amount, sqlite3_int64 offset) {
    if (!Allowed(f)) return SQLITE_IOERR_READ;
    return Real(f)->pMethods->xRead(Real(f), buffer, amount, offset);
  }
  static int Lock(sqlite3_file* f, int lock) {
    if (!Allowed(f)) return SQLITE_IOERR_LOCK;
    return Real(f)->pMethods->xLock(Real(f), lock);
  }
  static int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
    if ((flags & SQLITE_SHM_LOCK) != 0 && !Allowed(f)) return SQLITE_IOERR_SHMLOCK;
    return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
  }

  static int Fetch(sqlite3_file*, sqlite3_int64, int, void** out) {
    *out = nullptr;  // no mapping: SQLite reads the page with xRead
    return SQLITE_OK;
  }
  static int Unfetch(sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; }

  static const sqlite3_io_methods& Methods() {
    static const sqlite3_io_methods methods = {
        3,
        [](sqlite3_file* f) {
          const int rc = Real(f)->pMethods->xClose(Real(f));
          f->pMethods = nullptr;
          return rc;
        },
        &Read,
        [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) { return Real(f)->pMethods->xWrite(Real(f), b, n, o); },
        [](sqlite3_file* f, sqlite3_int64 size) { return Real(f)->pMethods->xTruncate(Real(f), size); },
        [](sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); },
        [](sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); },
        &Lock,
        [](sqlite3_file* f, int lock) { return Real(f)->pMethods->xUnlock(Real(f), lock); },
        [](sqlite3_file* f, int* out) { return Real(f)->pMethods->xCheckReservedLock(Real(f), out); },
        [](sqlite3_file* f, int op, void* arg) { return Real(f)->pMethods->xFileControl(Real(f), op, arg); },
        [](sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); },
        [](sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); },
        [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
          return Real(f)->pMethods->xShmMap(Real(f), page, size, extend, out);
        },
        &ShmLock,
        [](sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); },
        [](sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); },
        &Fetch,
        &Unfetch,
    };
    return methods;
  }

  std::string path_part_;
  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  sqlite3_int64 heap_limit_ = 0;  // the soft heap limit before this one, restored at the end
  int64_t budget_ = -1;   // -1: no fault
  bool once_ = false;     // FailOnceAfter: the fault ends after one refusal
  int64_t allowed_ = 0;
  int64_t refused_ = 0;
};

}  // namespace harness::testing_util
