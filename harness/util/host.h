// The name of the machine a run or an import happened on, as stored with it.
#pragma once

#include <string>

namespace harness {

// gethostname(2), or "unknown" when the system will not say.
std::string Hostname();

}  // namespace harness
