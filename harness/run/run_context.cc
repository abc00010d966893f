#include "harness/run/run_context.h"

namespace harness {

RunContext& CurrentRun() {
  static RunContext context;
  return context;
}

}  // namespace harness
