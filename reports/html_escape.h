// Escaping for the HTML report: every string that came from a model, an endpoint, a user
// file or the database goes through HtmlEscape, whether it lands in element content or in
// a quoted attribute value; commit links go through CommitUrl.
#pragma once

#include <string>
#include <string_view>

namespace harness::reports {

// &, <, >, " and ' as entities; invalid UTF-8 and C0 controls other than tab, newline and
// carriage return become U+FFFD, so the text shows what was there without breaking out.
std::string HtmlEscape(std::string_view s);

// Percent-encodes every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~).
std::string UrlEscape(std::string_view s);

// The --commit-url template with each {sha} replaced by the URL-escaped sha; empty when the
// template is empty. Only http: and https: templates are accepted by the command; the
// result still goes through HtmlEscape when written into an attribute.
std::string CommitUrl(std::string_view url_template, std::string_view sha);

}  // namespace harness::reports
