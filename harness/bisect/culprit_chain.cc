#include "harness/bisect/culprit_chain.h"

#include <algorithm>
#include <map>
#include <utility>

namespace harness::bisect {

CulpritChain::CulpritChain(int positions, std::vector<SeriesSpec> series, SearchOptions options, int max_changes)
    : positions_(std::max(positions, 2)), series_(std::move(series)), options_(options),
      max_changes_(std::max(1, max_changes)) {
  part_ = {0, positions_ - 1};
  active_.emplace(positions_, series_, options_);
}

// A run outside 0..positions-1 is kept but never read: every reader takes the runs of a part
// or of a culprit's sides, and Search::Add drops what is outside its own range.
void CulpritChain::Add(const Observation& o) {
  observations_.push_back(o);
  if (active_ && o.position >= part_.lo && o.position <= part_.hi) active_->Add(Mapped(o, part_));
}

void CulpritChain::CountRun() {
  ++runs_requested_;
  if (active_) active_->CountRun();
}

void CulpritChain::Skip(int position) {
  if (position <= 0 || position >= positions_ - 1) return;
  skipped_.insert(position);
  if (active_ && position > part_.lo && position < part_.hi) active_->Skip(position - part_.lo);
}

void CulpritChain::SetFlipRates(int series, FlipRates rates) {
  if (series < 0) return;
  if (series >= static_cast<int>(rates_.size())) rates_.resize(series + 1);
  rates_[series] = rates;
  if (active_ && part_.lo == 0) active_->SetFlipRates(series, std::move(rates));
}

void CulpritChain::SetPriorWeights(std::vector<double> weights) {
  weights_ = weights;
  if (active_ && part_.lo == 0 && part_.hi == positions_ - 1) active_->SetPriorWeights(std::move(weights));
}

// A run as the part's search sees it: its position from the part's good end.
Observation CulpritChain::Mapped(const Observation& o, const Part& part) const {
  Observation m = o;
  m.position = o.position - part.lo;
  return m;
}

Search CulpritChain::MakeSearch(const Part& part, int max_runs, bool with_observations) const {
  SearchOptions options = options_;
  options.max_runs = max_runs;
  Search s(part.hi - part.lo + 1, series_, options);
  // Flip rates describe the questions at the known-good end: a part after a change (whose
  // questions were settled right there and are wrong in the whole part) goes without them
  // (the fixed prior), or every question the change broke would look affected in it.
  for (int si = 0; part.lo == 0 && si < static_cast<int>(rates_.size()); ++si)
    if (rates_[si]) s.SetFlipRates(si, *rates_[si]);
  if (!weights_.empty()) {
    std::vector<double> w(part.hi - part.lo + 1, 1.0);
    for (int j = 1; j < static_cast<int>(w.size()) && part.lo + j < static_cast<int>(weights_.size()); ++j)
      w[j] = weights_[part.lo + j];
    s.SetPriorWeights(std::move(w));
  }
  for (int k : skipped_)
    if (k > part.lo && k < part.hi) s.Skip(k - part.lo);
  if (with_observations)
    for (const Observation& o : observations_)
      if (o.position >= part.lo && o.position <= part.hi) s.Add(Mapped(o, part));
  return s;
}

double CulpritChain::NoChange(const Part& part) const { return MakeSearch(part, 0, true).Posterior()[0]; }

void CulpritChain::NextPart() {
  if (active_) last_ = part_, last_search_ = std::move(active_);
  active_.reset();
  while (!todo_.empty() && static_cast<int>(changes_.size()) < max_changes_) {
    Part part = todo_.front();
    todo_.pop_front();
    if (part.hi - part.lo < 1) continue;
    if (NoChange(part) >= kUnexplained) continue;
    part_ = part;
    active_.emplace(MakeSearch(part, options_.max_runs - runs_requested_, true));
    return;
  }
}

void CulpritChain::Found(const Decision& d) {
  const int at = part_.lo + d.culprit;
  changes_.push_back({at, d.confidence, 0});
  // The bad end's side while it is the bad end (a further drop after the change), then the
  // good end's side while it is the good end (the search named the later of two drops).
  // A part between two changes is not asked: its ends are both runs of commits the
  // searches verified, and on them the check names drops that are not there (docs/bisect.md).
  if (part_.hi == positions_ - 1) todo_.push_back({at, part_.hi});
  if (part_.lo == 0 && at - 1 > 0) todo_.push_back({0, at - 1});
}

Decision CulpritChain::Decide(const std::vector<int>& pending) {
  for (;;) {
    if (!active_) return Answer();
    std::vector<int> inside;
    for (int p : pending)
      if (p >= part_.lo && p <= part_.hi) inside.push_back(p - part_.lo);
    Decision d = active_->Decide(inside);
    if (d.verdict == Verdict::kSearching) {
      if (d.next_position >= 0) d.next_position += part_.lo;
      if (!first_done_) return d;
      return {Verdict::kSearching, d.next_position, -1, {}, d.confidence, {}, false};
    }
    if (!first_done_) {
      first_done_ = true;
      first_ = d;
    } else if (d.verdict == Verdict::kAmbiguous) {
      unsettled_ = true;
    }
    if (d.verdict == Verdict::kCulprit) Found(d);
    if (first_.verdict != Verdict::kCulprit) {  // no culprit, or ambiguous: as before
      last_ = part_, last_search_ = std::move(active_);
      active_.reset();
      return Answer();
    }
    NextPart();
  }
}

// The part's own search chooses the batch, so its cuts are placed together (Search::DecideBatch),
// as without a chain; Decide first moves on to the next part once this one has its answer.
std::vector<int> CulpritChain::DecideBatch(const std::vector<int>& pending, int slots) {
  const Decision d = Decide(pending);
  if (d.verdict != Verdict::kSearching || d.next_position < 0 || !active_) return {};
  std::vector<int> inside;
  for (int p : pending)
    if (p >= part_.lo && p <= part_.hi) inside.push_back(p - part_.lo);
  const int budget = std::max(0, options_.max_runs - runs_requested_);
  std::vector<int> chosen = active_->DecideBatch(inside, std::min(slots, budget));
  for (int& p : chosen) p += part_.lo;
  return chosen;
}

double CulpritChain::SizeOf(int position, const std::vector<int>& bounds) const {
  // bounds: the change positions, sorted; the levels either side run to the neighbours.
  const auto it = std::find(bounds.begin(), bounds.end(), position);
  const int from = it == bounds.begin() ? 0 : *(it - 1);
  const int to = it + 1 == bounds.end() ? positions_ : *(it + 1);
  std::map<std::size_t, std::pair<double, double>> before, after;  // question: (right, answered)
  double sum[2] = {0, 0}, count[2] = {0, 0};
  std::size_t questions = 0;
  for (const Observation& o : observations_) {
    if (o.series != 0 || o.is_status || o.position < from || o.position >= to) continue;
    const bool later = o.position >= position;
    sum[later] += o.value, count[later] += 1;
    questions = std::max(questions, o.questions.size());
    for (std::size_t q = 0; q < o.questions.size(); ++q)
      if (IsAnswer(o.questions[q])) {
        auto& cell = (later ? after : before)[q];
        cell.first += o.questions[q] == '1', cell.second += 1;
      }
  }
  if (questions > 0) {
    double moved = 0;
    for (const auto& [q, b] : before)
      if (auto a = after.find(q); a != after.end()) moved += a->second.first / a->second.second - b.first / b.second;
    return moved / static_cast<double>(questions);
  }
  return count[0] > 0 && count[1] > 0 ? sum[1] / count[1] - sum[0] / count[0] : 0;
}

Decision CulpritChain::Answer() const {
  Decision d = first_;
  d.changes = changes_;
  std::sort(d.changes.begin(), d.changes.end(), [](const Change& a, const Change& b) { return a.position < b.position; });
  std::vector<int> bounds;
  for (const Change& c : d.changes) bounds.push_back(c.position);
  for (Change& c : d.changes) c.size = SizeOf(c.position, bounds);
  if (!d.changes.empty()) d.culprit = d.changes.front().position, d.confidence = d.changes.front().confidence;
  d.unsettled = unsettled_;
  return d;
}

std::pair<const Search*, const CulpritChain::Part*> CulpritChain::Shown() const {
  if (active_) return {&*active_, &part_};
  if (last_search_) return {&*last_search_, &last_};
  return {nullptr, nullptr};
}

std::vector<double> CulpritChain::Posterior() const {
  const auto [s, part] = Shown();
  std::vector<double> out(positions_, 0.0);
  if (!s) return out;
  const std::vector<double> inner = s->Posterior();
  out[0] = inner[0];
  for (int j = 1; j < static_cast<int>(inner.size()); ++j) out[part->lo + j] = inner[j];
  return out;
}

double CulpritChain::ProbabilityBad(int position) const {
  const auto post = Posterior();
  double p = 0;
  for (int j = 1; j <= std::min(position, positions_ - 1); ++j) p += post[j];
  return p;
}

std::vector<int> CulpritChain::CredibleRange() const {
  const auto [s, part] = Shown();
  std::vector<int> out;
  if (s)
    for (int j : s->CredibleRange()) out.push_back(part->lo + j);
  return out;
}

std::vector<int> CulpritChain::QuestionsFor(int position, int series) const {
  if (!active_ || position < part_.lo || position > part_.hi) {
    // Not in the part being searched: every question (a whole run is never wrong), as a
    // search of full evals over the series' runs answers it.
    SearchOptions whole = options_;
    whole.questions.full = true;
    Search s(positions_, series_, whole);
    for (const Observation& o : observations_)
      if (o.series == series) s.Add(o);
    return s.QuestionsFor(position, series);
  }
  return active_->QuestionsFor(position - part_.lo, series);
}

}  // namespace harness::bisect
