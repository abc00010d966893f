// The self-contained HTML report of a run: inline CSS, no script or network access
// (a Content Security Policy forbids it); every string from a model, an endpoint or a
// user file is escaped.
#pragma once

#include <string>

#include "harness/util/error.h"
#include "harness/store/store.h"

namespace harness::reports {

// Escapes text for HTML element content and attribute values.
std::string HtmlEscape(const std::string& s);
Result<std::string> HtmlReport(Store& store, int64_t run_id);

}  // namespace harness::reports
