#include "harness/ingest/junit_xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <limits>
#include <memory>

#include <fmt/format.h>

#include "harness/ingest/ingest.h"

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

struct Reader {
  const std::string& origin;
  const std::string& suite_override;
  std::vector<FinishedCase> cases;

  Error At(const xmlNode* n, const std::string& what) const {
    return UsageError(fmt::format("{}:{}: {}", origin, xmlGetLineNo(n), what));
  }

  // The message of a <failure>/<error>/<skipped>: its message attribute, then its text
  // (cut to kMaxIngestedTextBytes by ParseIngestFile).
  static std::string MessageOf(const xmlNode* n) {
    std::string msg = Attr(n, "message").value_or("");
    std::string body = Text(n);
    if (!body.empty()) msg += msg.empty() ? body : "\n" + body;
    return msg;
  }

  Status Case(const xmlNode* n, const std::string& suite) {
    auto name = Attr(n, "name");
    if (!name || name->empty()) return At(n, "<testcase> has no name attribute");
    const std::string classname = Attr(n, "classname").value_or("");
    FinishedCase c;
    c.suite = suite;
    c.result.case_id = suite + "/" + (classname.empty() ? *name : classname + "." + *name);
    c.result.status = CaseStatus::kPass;
    if (auto t = Attr(n, "time")) {
      auto seconds = ParseNumber(*t);
      if (!seconds || *seconds < 0) return At(n, fmt::format("<testcase> time=\"{}\" is not a number of seconds", *t));
      c.result.duration_s = *seconds;
    }
    for (const xmlNode* k = n->children; k; k = k->next) {
      // error outranks failure outranks skipped, whatever their order in the file.
      if (Is(k, "error")) {
        c.result.status = CaseStatus::kError;
        c.result.message = MessageOf(k);
      } else if (Is(k, "failure") && c.result.status != CaseStatus::kError) {
        c.result.status = CaseStatus::kFail;
        c.result.message = MessageOf(k);
      } else if (Is(k, "skipped") && c.result.status == CaseStatus::kPass) {
        c.result.status = CaseStatus::kSkip;
        c.result.message = MessageOf(k);
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
    cases.push_back(std::move(c));
    return OkStatus();
  }

  Status Suite(const xmlNode* n, const std::string& outer) {
    std::string suite = outer;
    if (suite_override.empty())
      if (auto name = Attr(n, "name"); name && !name->empty()) suite = *name;
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
  Reader reader{origin, suite, {}};
  const std::string base = suite.empty() ? "junit" : suite;
  if (!root || !(Is(root, "testsuites") || Is(root, "testsuite")))
    return reader.At(root ? root : reinterpret_cast<const xmlNode*>(doc.get()),
                     fmt::format("expected <testsuites> or <testsuite> as the root element, found <{}>",
                                 root ? reinterpret_cast<const char*>(root->name) : ""));
  Status s = Is(root, "testsuite") ? reader.Suite(root, base) : OkStatus();
  if (Is(root, "testsuites"))
    for (const xmlNode* k = root->children; k && s; k = k->next)
      if (Is(k, "testsuite")) s = reader.Suite(k, base);
  if (!s) return s.error();
  if (auto u = CheckUniqueCaseIds(reader.cases, origin); !u) return u.error();
  return std::move(reader.cases);
}

}  // namespace harness
