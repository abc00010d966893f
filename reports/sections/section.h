// What every section's header declares its entry points with (docs/architecture.md, "The
// report's sections"): a section's .h holds its part of the model and Load<Section>,
// <Section>Html, <Section>Text, <Section>Json (and <Section>Markdown where the summary shows
// it), defined in its .cc, _render.cc and _markdown.cc.
#pragma once

#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness::reports {

struct ReportModel;   // reports/report_model.h
struct ReportLoad;    // reports/report_load.h: what a loader reads and hands the next
struct HtmlPage;      // reports/html_section.h
struct MarkdownPage;  // reports/markdown_section.h

}  // namespace harness::reports
