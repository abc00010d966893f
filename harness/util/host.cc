#include "harness/util/host.h"

#include <unistd.h>

namespace harness {

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace harness
