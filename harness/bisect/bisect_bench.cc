// The search against plain bisection on simulated noisy histories (issue 20's benchmark):
// per history family, 100 histories with a 1.3 pp drop (the seed's 0.925 -> 0.912), 100
// with 0.6 pp, 50 with none, 64 commits, questions as noisy as the family says
// (bisect_sim.h). Three contenders on the same histories: the search reading each run's
// questions and choosing which to evaluate (what `harness bisect --metric gsm8k` does when
// samples are stored), the search reading only each run's accuracy (whole evals), and plain
// bisection (`git bisect run` with a gate script: one whole eval per commit, bad below
// 0.91). Prints accuracy, mean runs (= commands) and cost in full-eval equivalents
// (questions evaluated / 1319), then the calibration of the per-question search's answers
// over every family (share right per confidence bin, expected calibration error).
// Deterministic (fixed seeds).
//   build/harness/bisect/bisect_bench [--family all|default|f81-ar25|f160|f160-ar50|f160-b75]
//       [--fragile N] [--affected-right P] [--affected-before P] [--max-runs N] [--history N]
//       [--full-evals] [--histories N] [--seed-base B] [--commits N] [--jobs K[,K...]]
//       [--watched-share P [--culprit-watched yes|no|both] [--watched-prior Q[,Q...]]]
//       [--max-changes N] [--two-changes yes|only]
// --max-changes N: the culprits the search looks for (CulpritChain; default 1, the
// one-culprit search, as `harness bisect`); --two-changes: the two-change families (RunTwoChanges) after the
// table (yes) or instead of it (only).
// The families: default (56 borderline questions, the stand-in's 0.25 pp), f81-ar25
// (`--fragile 81 --affected-right 0.25`: real-server noise, faults that move margins part
// way), f160 (`--fragile 160`), f160-ar50 (`--fragile 160 --affected-right 0.5`), f160-b75
// (`--fragile 160 --affected-before 0.75 --affected-right 0.25`: the stand-in's fault under
// heavy noise, which moves questions that were already borderline). --fragile,
// --affected-right or --affected-before alone run one custom family. --history N: earlier nightlies the flip
// rates are learned from (default 8; 0: the fixed prior); --full-evals: whole evals only;
// --histories N: N histories per drop and N / 2 without one (default 100); --seed-base B:
// history i is drawn from seed B + i (default 1000: another B draws other questions and
// noise, the culprits stay where they were); --commits N: the range's length (default 64). --jobs 1,2,4,8: parallel steps instead (Search::Decide
// with runs pending): per family and K, the per-question search's correct answers, rounds
// (wall time in units of one step: every step takes the same time) and total steps, and both
// against K = 1 (the first K listed is the reference).
// --watched-share P [--culprit-watched yes|no|both] [--watched-prior Q[,Q...]]: priors
// from what a commit changed instead (docs/bisect.md): each commit touches a watched path
// with probability P, the culprit does (yes), or does not (no: the priors are wrong); per
// family, variant and prior Q that the culprit is a watched commit (UnwatchedWeight; 0: no
// priors; default 0,0.3,0.5,0.7), the per-question search's correct answers and steps on
// the same histories, and its steps against the first Q.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness/bisect/bisect_sim.h"

using harness::bisect::BisectDefaults;
using harness::bisect::SearchOptions;
using harness::bisect::SimHistory;
using harness::bisect::SimResult;
using harness::bisect::SimulatePlainBisect;
using harness::bisect::SimulateSearch;
using harness::bisect::Verdict;

namespace {

[[noreturn]] void BadFlag(const char* flag, const char* value, const char* why) {
  std::fprintf(stderr, "bisect_bench: %s%s%s: %s (the flags are listed at the top of bisect_bench.cc)\n", flag,
               *value ? " " : "", value, why);
  std::exit(2);
}

// A flag's value as a number, or exit 2 naming the flag: a typo must not measure the defaults.
double NumberOf(const char* flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v)) BadFlag(flag, text, "expected a number");
  return v;
}

std::vector<double> NumberList(const char* flag, const char* text) {
  std::vector<double> out;
  std::string item;
  for (const char* p = text;; ++p) {
    if (*p != ',' && *p != '\0') {
      item += *p;
      continue;
    }
    out.push_back(NumberOf(flag, item.c_str()));
    item.clear();
    if (*p == '\0') return out;
  }
}

std::vector<int> JobsList(const char* text) {
  std::vector<int> out;
  for (double k : NumberList("--jobs", text)) out.push_back(std::max(1, static_cast<int>(k)));
  return out;
}

struct Family {
  std::string name;
  int fragile = 56;
  double affected_right = 0;
  double affected_before = 1;
};

struct Tally {
  int count = 0, correct = 0, ambiguous = 0, all_correct = 0;
  double runs = 0, questions = 0, rounds = 0;
  void Add(const SimResult& r) {
    ++count;
    correct += r.correct;
    all_correct += r.all_correct;
    ambiguous += r.verdict == Verdict::kAmbiguous;
    runs += r.runs;
    questions += r.questions;
    rounds += r.rounds;
  }
  double Rounds() const { return count ? rounds / count : 0; }
  double Percent() const { return count ? 100.0 * correct / count : 0; }
  double AllPercent() const { return count ? 100.0 * all_correct / count : 0; }
  double Runs() const { return count ? runs / count : 0; }
  double Evals(int n) const { return count ? questions / n / count : 0; }
};

// Answers of the per-question search by confidence bin: how many, how many right, their
// mean confidence.
struct Calibration {
  static constexpr double kEdges[] = {0, 0.9, 0.95, 0.99, 0.999, 1.0000001};
  static constexpr int kBins = 5;
  double count[kBins] = {}, right[kBins] = {}, confidence[kBins] = {};
  void Add(const SimResult& r) {
    if (r.verdict == Verdict::kSearching) return;
    int b = 0;
    while (b + 1 < kBins && r.confidence >= kEdges[b + 1]) ++b;
    count[b] += 1;
    right[b] += r.correct;
    confidence[b] += r.confidence;
  }
  void Print() const {
    std::printf("\ncalibration of the per-question search's answers (all families):\n");
    std::printf("%-16s %-8s %-10s %-10s\n", "confidence", "answers", "mean conf.", "right");
    double total = 0, ece = 0;
    for (int b = 0; b < kBins; ++b) total += count[b];
    for (int b = 0; b < kBins; ++b) {
      if (count[b] == 0) continue;
      const double conf = confidence[b] / count[b], acc = right[b] / count[b];
      std::printf("[%.3f, %.3f)   %-8.0f %-10.4f %6.2f %%\n", kEdges[b], std::min(1.0, kEdges[b + 1]), count[b], conf,
                  100 * acc);
      ece += count[b] / total * std::fabs(acc - conf);
    }
    std::printf("expected calibration error %.4f over %.0f answers\n", ece, total);
  }
};

struct FamilyResult {
  Family family;
  Tally q[3], v[3], p[3];  // per drop: 1.3 pp, 0.6 pp, none
};

constexpr double kDrops[] = {0.013, 0.006, 0.0};
const char* DropName(int d) { return d == 0 ? "1.3 pp" : d == 1 ? "0.6 pp" : "none"; }

struct Draws {
  int history = SimHistory{}.history_runs;  // earlier nightlies
  int histories = 100;                       // per drop; half as many without one
  uint64_t seed_base = 1000;
  int commits = SimHistory{}.commits;        // --commits: the range's length (culprits drawn over it)
  int max_changes = BisectDefaults::kMaxCulprits;  // --max-changes: 1 is the one-culprit search
};

// The next history of drop d in family f, its culprit drawn from pick.
SimHistory DrawHistory(const Family& f, const Draws& draws, int d, std::mt19937_64& pick) {
  SimHistory h;
  h.drop = kDrops[d];
  h.fragile = f.fragile;
  h.affected_right = f.affected_right;
  h.affected_before = f.affected_before;
  h.history_runs = draws.history;
  h.commits = draws.commits;
  h.culprit = kDrops[d] > 0 ? 1 + static_cast<int>(pick() % static_cast<uint64_t>(draws.commits)) : 0;
  return h;
}

// Calls visit(d, i, history) for every history of family f, drop by drop: the same histories
// (culprit draws seeded 7) wherever it is called, so K = 1, 2, 4, 8 and the families' table
// meet the same ones.
template <class Visit>
void ForEachHistory(const Family& f, const Draws& draws, Visit visit) {
  std::mt19937_64 pick(7);
  for (int d = 0; d < 3; ++d) {
    const int histories = kDrops[d] > 0 ? draws.histories : draws.histories / 2;
    for (int i = 0; i < histories; ++i) visit(d, i, DrawHistory(f, draws, d, pick));
  }
}

FamilyResult RunFamily(const Family& f, const SearchOptions& options, const Draws& draws, Calibration& calibration) {
  FamilyResult out{f, {}, {}, {}};
  ForEachHistory(f, draws, [&](int d, int i, SimHistory h) {
    const SimResult q = SimulateSearch(h, draws.seed_base + i, options, draws.max_changes);
    out.q[d].Add(q);
    calibration.Add(q);
    out.p[d].Add(SimulatePlainBisect(h, draws.seed_base + i, 0.91));
    h.per_question = false;
    out.v[d].Add(SimulateSearch(h, draws.seed_base + i, options, draws.max_changes));
  });
  return out;
}

void PrintFamily(const FamilyResult& r, int n) {
  std::printf("\nfamily %s: %d borderline questions, affected right %.2f before the culprit, %.2f after\n",
              r.family.name.c_str(), r.family.fragile, r.family.affected_before, r.family.affected_right);
  std::printf("%-7s %-5s | %-36s | %-16s | %-16s\n", "drop", "hist.", "search, per question", "accuracy only",
              "plain bisect");
  std::printf("%-7s %-5s | %-9s %-6s %-10s %-8s | %-9s %-6s | %-9s %-6s\n", "", "", "correct", "runs", "full evals",
              "ambig.", "correct", "runs", "correct", "runs");
  for (int d = 0; d < 3; ++d)
    std::printf("%-7s %-5d | %6.1f %%  %-6.1f %-10.2f %-8d | %6.1f %%  %-6.1f | %6.1f %%  %-6.1f\n", DropName(d),
                r.q[d].count, r.q[d].Percent(), r.q[d].Runs(), r.q[d].Evals(n), r.q[d].ambiguous, r.v[d].Percent(),
                r.v[d].Runs(), r.p[d].Percent(), r.p[d].Runs());
}

void PrintSummary(const std::vector<FamilyResult>& results, int n) {
  std::printf("\nsummary, search per question: correct %% (all changes right %%), mean runs (= commands), full-eval "
              "equivalents\n");
  std::printf("%-10s | %-30s | %-30s | %-30s | %-14s\n", "family", "1.3 pp", "0.6 pp", "none", "mean per hist.");
  for (const auto& r : results) {
    Tally all;
    std::printf("%-10s", r.family.name.c_str());
    for (int d = 0; d < 3; ++d) {
      std::printf(" | %5.1f %% (%5.1f %%) %5.1f %6.2f", r.q[d].Percent(), r.q[d].AllPercent(), r.q[d].Runs(),
                  r.q[d].Evals(n));
      all.count += r.q[d].count;
      all.runs += r.q[d].runs;
      all.questions += r.q[d].questions;
    }
    std::printf(" | %5.1f %6.2f\n", all.Runs(), all.Evals(n));
  }
}

// --jobs: the per-question search on the family's histories at each K; per drop and over
// the family, correct %, mean rounds and mean steps, and rounds and steps against the first K.
void RunJobs(const Family& f, const SearchOptions& options, const Draws& draws, const std::vector<int>& jobs) {
  std::printf("\nfamily %s: %d borderline questions, affected right %.2f before the culprit, %.2f after\n",
              f.name.c_str(), f.fragile, f.affected_before, f.affected_right);
  std::printf("%-4s | %-20s | %-20s | %-20s | %-20s | %-16s\n", "K", "1.3 pp", "0.6 pp", "none",
              "all: correct rounds steps", "vs the first K");
  double ref_rounds = 0, ref_steps = 0;
  for (std::size_t ki = 0; ki < jobs.size(); ++ki) {
    Tally t[3], all;
    ForEachHistory(f, draws, [&](int d, int i, SimHistory h) {
      h.jobs = jobs[ki];
      const SimResult r = SimulateSearch(h, draws.seed_base + i, options);
      t[d].Add(r);
      all.Add(r);
    });
    if (ki == 0) ref_rounds = all.Rounds(), ref_steps = all.Runs();
    std::printf("%-4d", jobs[ki]);
    for (const auto& one : t) std::printf(" | %5.1f %% %5.1f %6.1f", one.Percent(), one.Rounds(), one.Runs());
    std::printf(" | %5.1f %% %5.1f %6.1f | %5.1f %% %5.2fx\n", all.Percent(), all.Rounds(), all.Runs(),
                ref_rounds > 0 ? 100 * all.Rounds() / ref_rounds : 0, ref_steps > 0 ? all.Runs() / ref_steps : 0);
    std::fflush(stdout);
  }
}

// Families with two changes: the culprit drawn over the range (all but its last ten
// commits), the second change ten commits later. two-drops: 0.6 pp, then 0.8 pp more;
// drop-fix: 1.3 pp, then a partial fix giving 0.6 pp back. Per family, the per-question
// chain's share with every change right, the first culprit right, and mean runs.
void RunTwoChanges(const Family& f, const SearchOptions& options, const Draws& draws) {
  struct Shape {
    const char* name;
    double drop, second_drop;
  };
  for (const Shape& shape : {Shape{"two-drops 0.6 + 0.8 pp", 0.006, 0.008}, Shape{"drop-fix 1.3 - 0.6 pp", 0.013, -0.006}}) {
    std::mt19937_64 pick(11);
    Tally t;
    for (int i = 0; i < draws.histories; ++i) {
      SimHistory h = DrawHistory(f, draws, 0, pick);
      h.drop = shape.drop;
      h.culprit = 1 + static_cast<int>(pick() % static_cast<uint64_t>(std::max(1, draws.commits - 10)));
      h.second = h.culprit + 10;
      h.second_drop = shape.second_drop;
      t.Add(SimulateSearch(h, draws.seed_base + i, options, draws.max_changes));
    }
    std::printf("%-10s %-24s | %-5d | %6.1f %%  | %6.1f %%  | %-6.1f | %-6d\n", f.name.c_str(), shape.name, t.count,
                t.AllPercent(), t.Percent(), t.Runs(), t.ambiguous);
    std::fflush(stdout);
  }
}

// --max-changes and --two-changes, when flag is one of them.
void ParseChangesFlag(const char* flag, const char* value, Draws& draws, int& two_changes) {
  if (std::strcmp(flag, "--max-changes") == 0) draws.max_changes = std::max(1, static_cast<int>(NumberOf(flag, value)));
  if (std::strcmp(flag, "--two-changes") != 0) return;
  if (std::strcmp(value, "yes") != 0 && std::strcmp(value, "only") != 0) BadFlag(flag, value, "expected yes or only");
  two_changes = std::strcmp(value, "only") == 0 ? 2 : 1;
}

void PrintTwoChanges(const std::vector<Family>& families, const SearchOptions& options, const Draws& draws) {
  std::printf("two changes in one range (max changes %d): all culprits right, first culprit right, mean runs\n",
              draws.max_changes);
  std::printf("%-10s %-24s | %-5s | %-9s | %-9s | %-6s | %-6s\n", "family", "history", "hist.", "all right", "first",
              "runs", "ambig.");
  for (const Family& f : families) RunTwoChanges(f, options, draws);
}

struct Priors {
  double watched_share = 0;             // 0: not asked for
  std::vector<bool> culprit_watched = {true, false};
  std::vector<double> watched_priors = {0, 0.3, 0.5, 0.7};
};

// --watched-share: the per-question search on the family's histories, each commit marked
// watched or not (the same marks for every prior), at each prior that a watched commit is
// the culprit.
void RunPriors(const Family& f, const SearchOptions& options, const Draws& draws, const Priors& priors) {
  for (bool culprit_watched : priors.culprit_watched) {
    std::printf("\nfamily %s, %.0f %% of commits watched, the culprit %s\n", f.name.c_str(),
                100 * priors.watched_share, culprit_watched ? "watched" : "NOT watched (the priors are wrong)");
    std::printf("%-7s | %-15s | %-15s | %-15s | %-15s | %-10s\n", "prior", "1.3 pp", "0.6 pp", "none",
                "all: correct steps", "steps vs first");
    double ref_steps = 0;
    for (std::size_t wi = 0; wi < priors.watched_priors.size(); ++wi) {
      Tally t[3], all;
      ForEachHistory(f, draws, [&](int d, int i, SimHistory h) {
        h.watched_share = priors.watched_share;
        h.culprit_watched = culprit_watched;
        h.watched_prior = priors.watched_priors[wi];
        const SimResult r = SimulateSearch(h, draws.seed_base + i, options);
        t[d].Add(r);
        all.Add(r);
      });
      if (wi == 0) ref_steps = all.Runs();
      std::printf("%-7.2f", priors.watched_priors[wi]);
      for (const auto& one : t) std::printf(" | %5.1f %% %5.1f ", one.Percent(), one.Runs());
      std::printf(" | %5.1f %% %5.1f  | %+6.1f %%\n", all.Percent(), all.Runs(),
                  ref_steps > 0 ? 100 * (all.Runs() / ref_steps - 1) : 0);
      std::fflush(stdout);
    }
  }
}

// --watched-share, --watched-prior and --culprit-watched, when flag is one of them.
void ParsePriorsFlag(const char* flag, const char* value, Priors& priors) {
  if (std::strcmp(flag, "--watched-share") == 0) priors.watched_share = NumberOf(flag, value);
  if (std::strcmp(flag, "--watched-prior") == 0) priors.watched_priors = NumberList(flag, value);
  if (std::strcmp(flag, "--culprit-watched") == 0) {
    const std::string v = value;
    if (v != "yes" && v != "no" && v != "both") BadFlag(flag, value, "expected yes, no or both");
    priors.culprit_watched = v == "yes" ? std::vector<bool>{true} : v == "no" ? std::vector<bool>{false}
                                                                              : std::vector<bool>{true, false};
  }
}

bool IsValueFlag(const char* flag) {
  for (const char* known : {"--max-runs", "--history", "--histories", "--seed-base", "--family", "--jobs", "--commits",
                            "--max-changes", "--two-changes", "--watched-share", "--watched-prior", "--culprit-watched",
                            "--fragile", "--affected-right", "--affected-before"})
    if (std::strcmp(flag, known) == 0) return true;
  return false;
}

// What the command line asks for; every flag is checked here, once.
struct Flags {
  SearchOptions options;
  std::string family = "all";
  Family custom{"custom", SimHistory{}.fragile, 0, 1};
  bool is_custom = false;
  Draws draws;
  std::vector<int> jobs;
  Priors priors;
  int two_changes = 0;  // --two-changes yes: after the table (1); only: instead of it (2)
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (std::strcmp(flag, "--full-evals") == 0) {
      f.options.questions.full = true;
      continue;
    }
    if (!IsValueFlag(flag)) BadFlag(flag, "", "not a flag of this benchmark");
    if (i + 1 == argc) BadFlag(flag, "", "needs a value");
    const char* value = argv[++i];
    auto integer = [&] { return static_cast<int>(NumberOf(flag, value)); };
    if (std::strcmp(flag, "--max-runs") == 0) f.options.max_runs = integer();
    if (std::strcmp(flag, "--history") == 0) f.draws.history = integer();
    if (std::strcmp(flag, "--histories") == 0) f.draws.histories = std::max(2, integer());
    if (std::strcmp(flag, "--seed-base") == 0) f.draws.seed_base = static_cast<uint64_t>(NumberOf(flag, value));
    if (std::strcmp(flag, "--family") == 0) f.family = value;
    if (std::strcmp(flag, "--jobs") == 0) f.jobs = JobsList(value);
    if (std::strcmp(flag, "--commits") == 0) f.draws.commits = std::max(2, integer());
    ParseChangesFlag(flag, value, f.draws, f.two_changes);
    ParsePriorsFlag(flag, value, f.priors);
    if (std::strcmp(flag, "--fragile") == 0) f.custom.fragile = integer(), f.is_custom = true;
    if (std::strcmp(flag, "--affected-right") == 0) f.custom.affected_right = NumberOf(flag, value), f.is_custom = true;
    if (std::strcmp(flag, "--affected-before") == 0)
      f.custom.affected_before = NumberOf(flag, value), f.is_custom = true;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  SearchOptions options = flags.options;
  const std::string& family = flags.family;
  const Draws& draws = flags.draws;
  const std::vector<int>& jobs = flags.jobs;
  const Priors& priors = flags.priors;
  const int two_changes = flags.two_changes;
  std::vector<Family> families = {{"default", 56, 0, 1},
                                  {"f81-ar25", 81, 0.25, 1},
                                  {"f160", 160, 0, 1},
                                  {"f160-ar50", 160, 0.5, 1},
                                  {"f160-b75", 160, 0.25, 0.75}};
  if (flags.is_custom) families = {flags.custom};
  else if (family != "all") std::erase_if(families, [&](const Family& f) { return f.name != family; });
  if (families.empty()) BadFlag("--family", family.c_str(), "no such family (all, default, f81-ar25, f160, f160-ar50, f160-b75)");
  const int n = SimHistory{}.questions;
  if (priors.watched_share > 0) {
    std::printf("priors from what a commit changed: per prior that the culprit is a watched commit, correct %% and mean steps\n");
    for (const Family& f : families) RunPriors(f, options, draws, priors);
    std::printf("%d commits, seeds from %llu\n", draws.commits, static_cast<unsigned long long>(draws.seed_base));
    return 0;
  }
  if (!jobs.empty()) {
    std::printf("parallel steps: per K, correct %%, mean rounds (wall time in steps), mean steps\n");
    for (const Family& f : families) RunJobs(f, options, draws, jobs);
    return 0;
  }
  if (two_changes > 0 && (PrintTwoChanges(families, options, draws), two_changes == 2)) return 0;
  Calibration calibration;
  std::vector<FamilyResult> results;
  for (const Family& f : families) {
    results.push_back(RunFamily(f, options, draws, calibration));
    PrintFamily(results.back(), n);
    std::fflush(stdout);
  }
  PrintSummary(results, n);
  calibration.Print();
  std::printf("max runs %d, %d earlier nightlies for the flip rates, %s, seeds from %llu\n", options.max_runs,
              draws.history, options.questions.full ? "whole evals (--full-evals)" : "chosen questions inside the range",
              static_cast<unsigned long long>(draws.seed_base));
  return 0;
}
