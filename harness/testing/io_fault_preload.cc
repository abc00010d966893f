// IoFaultVfs for a whole process, for end-to-end tests of the harness binary, which has no
// test hook: built as a shared library that a test puts in LD_PRELOAD. At load it reads
//   HARNESS_IO_FAULT_FILE    the path (or a part of it) of the database to fail
//   HARNESS_IO_FAULT_AFTER   how many reads and locks of it succeed before each fails
//   HARNESS_IO_FAULT_REPORT  a file it writes at exit: "allowed A refused R" (operations
//                            that succeeded, and that failed)
// and removes them and LD_PRELOAD from the environment, so the processes the binary starts
// (git, a bisect's steps) run without it: the fault is the one process's, at one point of
// its work.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "harness/testing/io_fault_vfs.h"

namespace {

struct ProcessFault {
  std::unique_ptr<harness::testing_util::IoFaultVfs> vfs;
  std::string report;
  ~ProcessFault() {
    if (vfs && !report.empty()) std::ofstream(report) << "allowed " << vfs->allowed() << " refused " << vfs->refused() << "\n";
  }
};

ProcessFault& Fault() {
  static ProcessFault fault;
  return fault;
}

std::string TakeEnv(const char* name) {
  const char* value = std::getenv(name);
  std::string out = value ? value : "";
  unsetenv(name);
  return out;
}

__attribute__((constructor)) void InstallFault() {
  const std::string file = TakeEnv("HARNESS_IO_FAULT_FILE");
  const std::string after = TakeEnv("HARNESS_IO_FAULT_AFTER");
  const std::string report = TakeEnv("HARNESS_IO_FAULT_REPORT");
  unsetenv("LD_PRELOAD");
  if (file.empty() || after.empty()) return;
  ProcessFault& fault = Fault();
  fault.vfs = std::make_unique<harness::testing_util::IoFaultVfs>(file);
  fault.vfs->FailAfter(std::stoll(after));
  fault.report = report;
}

}  // namespace
