// Which questions a bisect run evaluates (issue 20 §2): most of a GSM8K eval repeats what
// both ends agree on, so a run at a commit inside the range evaluates only
//   - the questions the stored runs at the two ends do not all answer alike (they differ
//     between the known-good and known-bad runs, or between reruns of one end): a drop's
//     lost questions are among them, and so is the noise that could pass for one;
//   - the questions known to flip: a learned borderline probability (flip_rates.h) of at
//     least `flip_threshold`;
//   - a control set: each other question with probability `control_share`, drawn from a
//     hash of (salt, question), so the same salt gives the same set (the search salts with
//     the position and its run count: each run gets its own).
// A rerun (of an end of the range, or of a culprit and its parent being verified) takes a
// larger control set, `rerun_control_share`: the end runs decide what the runs inside the
// range evaluate, and a question an affected fault left right on one run of the bad end
// shows on another. With `full` every run is a whole eval (`--full-evals`).
// Leaving a question out is no evidence either way: the per-question model skips an
// unanswered question, and since the choice depends only on runs already seen, the
// likelihood of what was evaluated is the right one (the missing answers are ignorable).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/bisect/flip_rates.h"

namespace harness::bisect {

// A per-question outcome that is an answer: '1' right, '0' wrong; anything else (a
// question a partial run left out) is none.
inline bool IsAnswer(char c) { return c == '0' || c == '1'; }

struct QuestionChoice {
  bool full = false;            // whole evals everywhere
  double control_share = 0.02;  // the random control set's share of the other questions
  double flip_threshold = 0.3;  // P(borderline) from which a question is known to flip
  double rerun_control_share = 0.25;  // the control share of a rerun (an end, a culprit being verified)
};

// The question indices (ascending) a run inside the range evaluates. questions: how many
// the series has; end_runs: the per-question outcomes of the stored runs at both ends.
// Without an end run that carries outcomes, every question.
std::vector<int> ChooseQuestions(int questions, const std::vector<const std::string*>& end_runs,
                                 const FlipRates& rates, uint64_t salt, const QuestionChoice& choice);

// Whether the control set holds question q for this salt (share: its probability).
bool InControlSet(uint64_t salt, int q, double share);

}  // namespace harness::bisect
