// JUnit ingest of one case id repeated N times (a runner that loops one test, pytest's
// teardown errors, mocha's repeated titles): ParseJunitXml reads the report and merges the
// repeats into one case. Prints the time at each N and the time per repeat, so linearity is
// visible: the per-repeat time must stay flat as N doubles.
//   build/harness/ingest/ingest_bench [N...]   (default 50000 100000 200000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/ingest/junit_xml.h"

namespace {

using Clock = std::chrono::steady_clock;

// N <testcase>s of one id, each failing with its own message and output, with a property
// every repeat has and one of its own (pytest's record_property in a loop): the metrics of
// the merged case grow with N, which a scan per repeat made quadratic.
std::string RepeatedCaseReport(long n) {
  std::string xml = "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"repeat\" tests=\"" + std::to_string(n) + "\">\n";
  for (long i = 0; i < n; ++i)
    xml += fmt::format(
        "<testcase classname=\"tests.test_loop\" name=\"test_same\" time=\"0.01\"><failure message=\"assert {0} == 0\">"
        "Traceback line {0}</failure><system-out>iteration {0}</system-out><properties><property name=\"tokens\" "
        "value=\"{0}\"/><property name=\"step_{0}_ms\" value=\"{0}\"/></properties></testcase>\n",
        i);
  xml += "</testsuite></testsuites>\n";
  return xml;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtol(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {50000, 100000, 200000};
  std::printf("%10s %12s %10s %16s\n", "repeats", "file bytes", "seconds", "us per repeat");
  for (long n : sizes) {
    if (n <= 0) {
      std::fprintf(stderr, "ingest_bench: repeat counts are positive whole numbers\n");
      return 2;
    }
    const std::string xml = RepeatedCaseReport(n);
    const auto start = Clock::now();
    auto cases = harness::ParseJunitXml(xml, "bench.xml", "");
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!cases || cases->size() != 1) {
      std::fprintf(stderr, "ingest_bench: expected one merged case: %s\n",
                   cases ? fmt::format("{} cases", cases->size()).c_str() : cases.error().message.c_str());
      return 1;
    }
    std::printf("%10ld %12zu %10.3f %16.3f\n", n, xml.size(), seconds, seconds * 1e6 / static_cast<double>(n));
  }
  return 0;
}
