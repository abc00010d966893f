#include "harness/ingest/junit_xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cctype>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/ingest/ingest.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

bool Is(const xmlNode* n, const char* name) {
  return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

std::optional<std::string> Attr(const xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (!v) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

std::string Text(const xmlNode* n) {
  xmlChar* v = xmlNodeGetContent(n);
  if (!v) return {};
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

// A message element's text: the message attribute, then the element's text unless it only
// repeats the attribute (GoogleTest writes both the same).
std::string MessageOf(const xmlNode* n) {
  std::string msg = Attr(n, "message").value_or("");
  std::string body = Text(n);
  if (!body.empty() && body != msg) msg += msg.empty() ? body : "\n" + body;
  return msg;
}

// The status a testcase's status/result attributes say: tst and ctest write status="disabled",
// GoogleTest status="notrun" result="suppressed" (disabled) or result="skipped", ctest
// status="notrun"; tst "failed"/"errored". Other words (run, passed, completed) say nothing.
CaseStatus StatusOfAttributes(const xmlNode* n) {
  CaseStatus s = CaseStatus::kPass;
  for (const char* attr : {"status", "result"}) {
    auto v = Attr(n, attr);
    if (!v) continue;
    std::string w = *v;
    for (auto& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (w == "disabled" || w == "notrun" || w == "not run" || w == "suppressed" || w == "skipped" || w == "skip" ||
        w == "ignored")
      s = WorseStatus(s, CaseStatus::kSkip);
    else if (w == "fail" || w == "failed" || w == "failure")
      s = WorseStatus(s, CaseStatus::kFail);
    else if (w == "error" || w == "errored")
      s = WorseStatus(s, CaseStatus::kError);
  }
  return s;
}

// How a report names its suites and cases (docs/ingest.md, "Case ids").
enum class Producer { kGeneric, kGoogleTest };

// A suite is the part of a case id before its first '/': a <testsuite name> holding one
// (GoogleTest's "Inst/Param", a path) has it spelled '.'. ctest writes its build name,
// "(empty)" when none is set.
std::string SuiteOfName(std::string name) {
  if (name == "(empty)") return "ctest";
  for (auto& ch : name)
    if (ch == '/') ch = '.';
  return name;
}

// The case part of an id: classname.name, or the name alone when there is no classname or
// the name already holds it (ctest and jest write the two equal; mocha writes the full
// title as name and the test's own title, its end, as classname).
std::string CaseNameOf(const std::string& classname, const std::string& name) {
  if (classname.empty() || classname == name) return name;
  if (name.size() > classname.size() && name.compare(name.size() - classname.size(), classname.size(), classname) == 0 &&
      name[name.size() - classname.size() - 1] == ' ')
    return name;
  return classname + "." + name;
}

struct Reader {
  const std::string& origin;
  const std::string& suite_override;
  Producer producer;
  std::vector<FinishedCase> cases;

  Error At(const xmlNode* n, const std::string& what) const {
    return UsageError(fmt::format("{}:{}: {}", origin, xmlGetLineNo(n), what));
  }

  Status Case(const xmlNode* n, const std::string& suite) {
    auto name = Attr(n, "name");
    if (!name || name->empty()) return At(n, "<testcase> has no name attribute");
    const std::string classname = Attr(n, "classname").value_or("");
    FinishedCase c;
    c.suite = suite;
    // GoogleTest: Suite.Test as its JSON report and --gtest_filter spell it, parameter
    // suffixes included (Inst/Param.Test/0).
    c.result.case_id = suite + "/" +
                       (producer == Producer::kGoogleTest ? classname + "." + *name : CaseNameOf(classname, *name));
    c.result.status = StatusOfAttributes(n);
    if (auto t = Attr(n, "time")) {
      auto seconds = ParseNumber(*t);
      if (!seconds || *seconds < 0) return At(n, fmt::format("<testcase> time=\"{}\" is not a number of seconds", *t));
      c.result.duration_s = *seconds;
    }
    std::vector<std::string> messages;
    std::string output;  // <system-out>, then <system-err>
    for (const xmlNode* k = n->children; k; k = k->next) {
      // error outranks failure outranks skipped, whatever their order in the file; every
      // element's message is kept, in file order.
      const bool error = Is(k, "error"), failure = Is(k, "failure"), skipped = Is(k, "skipped");
      if (error || failure || skipped) {
        c.result.status =
            WorseStatus(c.result.status, error ? CaseStatus::kError : failure ? CaseStatus::kFail : CaseStatus::kSkip);
        if (std::string m = MessageOf(k); !m.empty()) messages.push_back(std::move(m));
      } else if (Is(k, "system-out") || Is(k, "system-err")) {
        std::string text = Text(k);
        if (!text.empty()) output += (output.empty() || output.back() == '\n' ? "" : "\n") + text;
      } else if (Is(k, "properties")) {
        for (const xmlNode* p = k->children; p; p = p->next) {
          if (!Is(p, "property")) continue;
          auto pname = Attr(p, "name");
          if (!pname || pname->empty()) return At(p, "<property> has no name attribute");
          // Only numbers become metrics; text properties (a URL, a ticket) are not measurements.
          if (auto v = ParseNumber(Attr(p, "value").value_or(Text(p)))) c.result.metrics.push_back({*pname, *v});
        }
      }
    }
    c.result.message = fmt::format("{}", fmt::join(messages, "\n"));
    // A failure with no text of its own (ctest writes <failure message=""/> and the test's
    // output beside it): the captured output is its reason, cut like a stored completion.
    const bool broke = c.result.status == CaseStatus::kFail || c.result.status == CaseStatus::kError;
    if (broke && c.result.message.empty() && !output.empty())
      c.result.message = std::string(Utf8Prefix(output, kMaxStoredCompletionBytes));
    cases.push_back(std::move(c));
    return OkStatus();
  }

  Status Suite(const xmlNode* n, const std::string& outer) {
    std::string suite = outer;
    if (suite_override.empty() && producer == Producer::kGeneric)
      if (auto name = Attr(n, "name"); name && !name->empty()) suite = SuiteOfName(*name);
    for (const xmlNode* k = n->children; k; k = k->next) {
      if (Is(k, "testcase")) {
        if (auto s = Case(k, suite); !s) return s;
      } else if (Is(k, "testsuite")) {
        if (auto s = Suite(k, suite); !s) return s;
      }
    }
    return OkStatus();
  }
};

// The first error libxml2 reports: later ones are usually its consequences ("premature end
// of data" at the end of the file after a mismatched tag on line 4).
struct FirstXmlError {
  bool set = false;
  int line = 0, column = 0;
  std::string message;
};

void KeepFirstError(void* user, xmlErrorPtr e) {
  auto* first = static_cast<FirstXmlError*>(user);
  if (first->set || !e || e->level < XML_ERR_ERROR) return;
  first->set = true;
  first->line = e->line;
  first->column = e->int2;
  first->message = e->message ? e->message : "malformed XML";
  while (!first->message.empty() && (first->message.back() == '\n' || first->message.back() == ' '))
    first->message.pop_back();
}

// An entity declaration, refused as it is read: a report has no use for one, and one entity
// of 50 KB referenced 20,000 times in a 110 KB file expands to gigabytes when the text is
// read. Parameter entities too, so no declaration builds on another.
struct EntityRefusal {
  bool set = false;
  int line = 0;
  std::string name;
};

void RefuseEntityDeclaration(void* ctx, const xmlChar* name, int /*type*/, const xmlChar* /*public_id*/,
                             const xmlChar* /*system_id*/, xmlChar* /*content*/) {
  auto* ctxt = static_cast<xmlParserCtxtPtr>(ctx);  // libxml2's SAX user data is the context
  auto* refusal = static_cast<EntityRefusal*>(ctxt->_private);
  if (!refusal->set) {
    refusal->set = true;
    refusal->line = ctxt->input ? ctxt->input->line : 0;
    refusal->name = name ? reinterpret_cast<const char*>(name) : "";
  }
  xmlStopParser(ctxt);
}

}  // namespace

Result<std::vector<FinishedCase>> ParseJunitXml(const std::string& text, const std::string& origin,
                                                const std::string& suite) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return UsageError(fmt::format("{}: {} bytes, more than libxml2 reads at once", origin, text.size()));
  std::unique_ptr<xmlParserCtxt, decltype(&xmlFreeParserCtxt)> ctxt(xmlNewParserCtxt(), xmlFreeParserCtxt);
  if (!ctxt) return InfraError("libxml2: out of memory");
  EntityRefusal refusal;
  ctxt->_private = &refusal;
  ctxt->sax->entityDecl = RefuseEntityDeclaration;
  // NONET: never fetch a DTD; no NOENT: entities are not substituted, and none may be
  // declared. No HUGE: libxml2's own bounds hold (elements nested at most 256 deep, a text
  // node at most 10 MB).
  FirstXmlError first;
  xmlSetStructuredErrorFunc(&first, KeepFirstError);  // per thread in libxml2
  std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc(
      xmlCtxtReadMemory(ctxt.get(), text.data(), static_cast<int>(text.size()), origin.c_str(), nullptr,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
      xmlFreeDoc);
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  if (refusal.set)
    return UsageError(
        fmt::format("{}:{}: <!ENTITY {}> refused: a report may not declare entities (their "
                    "expansion is unbounded)",
                    origin, refusal.line, refusal.name));
  if (!doc || first.set) {
    if (!first.set) return UsageError(fmt::format("{}:1: not XML", origin));
    return UsageError(fmt::format("{}:{}:{}: {}", origin, first.line, first.column, first.message));
  }
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  // GoogleTest names its root "AllTests"; its cases are named as in its JSON report.
  const bool gtest = root && Is(root, "testsuites") && Attr(root, "name") == std::optional<std::string>("AllTests");
  Reader reader{origin, suite, gtest ? Producer::kGoogleTest : Producer::kGeneric, {}};
  const std::string base = !suite.empty() ? suite : gtest ? "gtest" : "junit";
  if (!root || !(Is(root, "testsuites") || Is(root, "testsuite")))
    return reader.At(root ? root : reinterpret_cast<const xmlNode*>(doc.get()),
                     fmt::format("expected <testsuites> or <testsuite> as the root element, found <{}>",
                                 root ? reinterpret_cast<const char*>(root->name) : ""));
  Status s = Is(root, "testsuite") ? reader.Suite(root, base) : OkStatus();
  if (Is(root, "testsuites"))
    for (const xmlNode* k = root->children; k && s; k = k->next)
      if (Is(k, "testsuite")) s = reader.Suite(k, base);
  if (!s) return s.error();
  return MergeRepeatedCases(std::move(reader.cases));
}

}  // namespace harness
