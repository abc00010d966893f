// The inputs of tools/fleet_bench/fleet_bench.py (harness/store/fleet_db.h), each written
// only when missing, with the seconds each took:
//   fleet_inputs --db FILE --junit FILE --shards DIR
// FILE: the fleet database (365 GSM8K nightlies with samples, 90 nightlies of 10,000
// ingested pytest cases); --junit: one 10,000-case nightly as pytest --junitxml writes it;
// --shards: 30 shard databases of one 10,000-case nightly.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>

#include "harness/store/fleet_db.h"

namespace {

namespace fs = std::filesystem;
using harness::bench::kFleetNightlies;

template <class Fn>
void Timed(const char* what, const fs::path& path, Fn&& fn) {
  if (fs::exists(path)) {
    std::printf("%s: %s (kept)\n", what, path.c_str());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  fn();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("%s: %s (generated in %.1f s)\n", what, path.c_str(), took.count());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The inputs of the fleet-scale benchmark (tools/fleet_bench/fleet_bench.py)");
  std::string db, junit, shards;
  app.add_option("--db", db, "The fleet database")->required();
  app.add_option("--junit", junit, "One 10,000-case JUnit XML file")->required();
  app.add_option("--shards", shards, "Folder of the 30 shard databases of one 10,000-case nightly")->required();
  CLI11_PARSE(app, argc, argv);
  Timed("fleet database", db, [&] {
    const fs::path part = db + ".part";
    fs::remove(part);
    harness::bench::GenerateFleetDatabase(part);
    fs::rename(part, db);
  });
  Timed("junit file", junit, [&] {
    std::ofstream(junit + ".part", std::ios::binary) << harness::bench::FleetJunitXml(kFleetNightlies - 1);
    fs::rename(junit + ".part", junit);
  });
  Timed("shard databases", shards, [&] {
    fs::remove_all(shards + ".part");
    harness::bench::GenerateFleetShards(shards + ".part", kFleetNightlies - 1);
    fs::rename(shards + ".part", shards);
  });
  // What the script names on the command lines it times.
  std::printf("old_sha = %s\nnew_sha = %s\nhistory_case = %s\n", harness::bench::FleetSha(kFleetNightlies - 2).c_str(),
              harness::bench::FleetSha(kFleetNightlies - 1).c_str(),
              harness::bench::FleetCaseId(harness::bench::kFleetCases / 2).c_str());
  return 0;
}
