// The regressions bisect --auto found in the latest runs, and what it said of each (its
// culprit, or why none): the note the failures and changes carry, and the words every
// rendering shows for it. Counted in the summary and failures, listed in the JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/store/bisect_changes.h"
#include "harness/store/bisect_evidence.h"
#include "harness/store/bisect_words.h"
#include "reports/sections/section.h"

namespace harness::reports {

// What `harness bisect --auto` said of a regression (Store::Regressions): for the failing
// cases it names and the report's summary.
struct CulpritNote {
  // culprit | no-culprit | ambiguous | not-confirmed | untestable (its Word, as bisect --auto
  // answered it: AutoVerdict)
  RegressionVerdict verdict = RegressionVerdict::kAmbiguous;
  std::string culprit, subject;     // with verdict culprit
  double confidence = 0;
  int64_t runs = 0;                 // commands its bisection ran
  int64_t session = 0;              // its bisect session; 0: not bisected
  std::vector<std::string> range;   // with verdict ambiguous: the commits the culprit is among
  std::optional<BisectTiming> timing;  // its session's time (since the nightly ended); none: untimed
  // With verdict culprit, when its session named several (bisect --max-culprits): each with
  // its own drop and confidence, in first-parent order. Empty for one: culprit says it all.
  std::vector<BisectChange> culprits;
};

// "1. abc123def456 subject: moved -0.0060 (-0.60 pp), posterior 0.990; 2. ...": a session's
// several culprits in the words the text renderings show; "" for fewer than two.
std::string CulpritListWords(const std::vector<BisectChange>& culprits);
// One of them, without its number: "abc123def456 subject: moved -0.0060 (-0.60 pp), posterior 0.990".
std::string CulpritChangeWords(const BisectChange& culprit);
// The same words with the sha and subject as a rendering writes them (Markdown: the sha
// linked, the subject escaped), so the wording exists once.
std::string CulpritChangeWords(const BisectChange& culprit, std::string_view sha, std::string_view subject);

// "culprit abc123def456 subject (confidence 0.990, 6 runs, bisect session 3)", "not confirmed
// (flaky): ...", "bisect ambiguous: ...": the words every rendering shows; a session that named
// several culprits adds "; 2 culprits in the range: " and CulpritListWords.
std::string CulpritWords(const CulpritNote& note);
// A culprit's "(confidence ..., N runs, bisect session S; answered ... after the nightly
// ended; the bisect took ..., N steps in R rounds)", for renderings that write the
// sha and subject their own way (a link in Markdown).
std::string CulpritEvidence(const CulpritNote& note);

struct RegressionEntry {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string suite, kind;
  std::vector<std::string> cases;
  CulpritNote note;
};

// Reads them after the failures and the bisect sessions: a failure carries its note.
Status LoadRegressions(ReportLoad& load);
Json RegressionsJson(const ReportModel& m);
// A note as JSON: its verdict, culprit, words (CulpritWords) and, when its session named
// several, each culprit; and a session's timing as bisect's own JSON writes it.
Json CulpritJson(const CulpritNote& n);
Json TimingJson(const std::optional<BisectTiming>& timing);

}  // namespace harness::reports
