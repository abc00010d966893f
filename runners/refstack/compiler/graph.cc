#include "runners/refstack/compiler/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "runners/refstack/compiler/infer.h"

namespace harness::compiler {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string MetaString(const TensorMeta& meta) {
  return fmt::format("{}{}", DTypeShortName(meta.dtype), ShapeString(meta.shape));
}

namespace {

std::string ArgString(const Arg& arg) {
  struct Visitor {
    std::string operator()(None) const { return "None"; }
    std::string operator()(const Node* n) const { return "%" + n->name(); }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(const IntList& v) const { return ShapeString(v); }
    std::string operator()(const NodeList& v) const {
      std::vector<std::string> names;
      for (const Node* n : v) names.push_back("%" + n->name());
      return fmt::format("[{}]", fmt::join(names, ", "));
    }
    std::string operator()(DType d) const { return std::string(DTypeName(d)); }
  };
  return std::visit(Visitor{}, arg);
}

std::string SanitizeName(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c == '.' || c == '/' || c == '-') c = '_';
  return out;
}

}  // namespace

std::string_view Node::op() const {
  return kind_ == OpKind::kUnknown ? std::string_view(custom_op_) : InfoOf(kind_).name;
}

Node* Node::node_arg(size_t i) const {
  if (i >= args_.size()) return nullptr;
  const auto* n = std::get_if<Node*>(&args_[i]);
  return n ? *n : nullptr;
}

std::optional<int64_t> Node::int_arg(size_t i) const {
  if (i >= args_.size()) return std::nullopt;
  const auto* v = std::get_if<int64_t>(&args_[i]);
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

const IntList* Node::int_list_arg(size_t i) const {
  if (i >= args_.size()) return nullptr;
  return std::get_if<IntList>(&args_[i]);
}

const TensorMeta& Node::meta() const {
  if (!has_tensor()) throw ShapeError(fmt::format("node '{}' ({}) has no single tensor output", name_, op()));
  return outputs_[0];
}

std::string Node::ToString() const {
  std::string out_meta;
  if (outputs_.empty()) {
    out_meta = "None";
  } else if (tuple_) {
    std::vector<std::string> parts;
    for (const auto& m : outputs_) parts.push_back(MetaString(m));
    out_meta = fmt::format("({})", fmt::join(parts, ", "));
  } else {
    out_meta = MetaString(outputs_[0]);
  }
  std::vector<std::string> args;
  for (const auto& a : args_) args.push_back(ArgString(a));
  std::string line;
  if (kind_ == OpKind::kOutput) {
    line = fmt::format("return {}", fmt::join(args, ", "));
  } else if (kind_ == OpKind::kPlaceholder || kind_ == OpKind::kGetAttr) {
    line = fmt::format("%{}: {} = {}", name_, out_meta, op());
  } else {
    line = fmt::format("%{}: {} = {}({})", name_, out_meta, op(), fmt::join(args, ", "));
  }
  std::vector<std::string_view> flags;
  if (HasFlag(kFlagSpLocal)) flags.push_back("sp_local");
  if (HasFlag(kFlagSpSourceAllReduce)) flags.push_back("sp_source_all_reduce");
  if (!flags.empty()) line += fmt::format("  # {}", fmt::join(flags, " "));
  return line;
}

void ForEachNodeArg(const std::vector<Arg>& args, const std::function<void(Node*)>& fn) {
  for (const auto& a : args) {
    if (const auto* node = std::get_if<Node*>(&a)) {
      fn(*node);
    } else if (const auto* list = std::get_if<NodeList>(&a)) {
      for (Node* element : *list) fn(element);
    }
  }
}

// --- construction -------------------------------------------------------------------

Graph::InsertionGuard::InsertionGuard(Graph* graph, Node* before)
    : graph_(graph), saved_(graph->insert_before_), saved_set_(graph->insert_set_) {
  graph_->insert_before_ = before;
  graph_->insert_set_ = true;
}

Graph::InsertionGuard::~InsertionGuard() {
  graph_->insert_before_ = saved_;
  graph_->insert_set_ = saved_set_;
}

Graph::InsertionGuard Graph::InsertAfter(Node* anchor) { return InsertionGuard(this, anchor->next_); }
Graph::InsertionGuard Graph::InsertBefore(Node* anchor) { return InsertionGuard(this, anchor); }

std::string Graph::UniqueName(std::string_view base) {
  std::string stem(base);
  int& count = name_counts_[stem];
  std::string candidate = count == 0 ? stem : fmt::format("{}_{}", stem, count);
  while (candidate != stem && name_counts_.count(candidate)) candidate = fmt::format("{}_{}", stem, ++count);
  ++count;
  if (candidate != stem) name_counts_[candidate] = 1;
  return candidate;
}

void Graph::Link(Node* node) {
  // Nodes go before the insertion point; by default at the end, before the output node.
  Node* before = insert_set_ ? insert_before_ : output_;
  if (before == nullptr) {
    node->prev_ = last_;
    if (last_) last_->next_ = node;
    last_ = node;
    if (!first_) first_ = node;
  } else {
    node->next_ = before;
    node->prev_ = before->prev_;
    if (before->prev_)
      before->prev_->next_ = node;
    else
      first_ = node;
    before->prev_ = node;
  }
  ++size_;
}

void Graph::Unlink(Node* node) {
  if (node->prev_)
    node->prev_->next_ = node->next_;
  else
    first_ = node->next_;
  if (node->next_)
    node->next_->prev_ = node->prev_;
  else
    last_ = node->prev_;
  if (insert_set_ && insert_before_ == node) insert_before_ = node->next_;
  node->prev_ = node->next_ = nullptr;
  --size_;
}

void Graph::AddUser(Node* input, Node* user) {
  if (std::find(input->users_.begin(), input->users_.end(), user) == input->users_.end()) input->users_.push_back(user);
}

void Graph::RemoveUserIfUnused(Node* input, Node* user) {
  bool still_used = false;
  ForEachNodeArg(user->args_, [&](Node* n) { still_used = still_used || n == input; });
  if (still_used) return;
  auto& users = input->users_;
  users.erase(std::remove(users.begin(), users.end(), user), users.end());
}

Node* Graph::NewNode(OpKind kind, std::string_view custom_op, std::string_view base_name, std::vector<Arg> args) {
  auto owned = std::make_unique<Node>();
  Node* node = owned.get();
  node->kind_ = kind;
  node->custom_op_ = std::string(custom_op);
  node->name_ = UniqueName(base_name);
  node->args_ = std::move(args);
  node->owner_ = identity_.get();
  pool_.push_back(std::move(owned));
  ForEachNodeArg(node->args_, [&](Node* input) { AddUser(input, node); });
  Link(node);
  return node;
}

Node* Graph::AddPlaceholder(std::string_view name, TensorMeta meta) {
  Node* n = NewNode(OpKind::kPlaceholder, "", SanitizeName(name), {});
  n->outputs_ = {std::move(meta)};
  return n;
}

Node* Graph::AddGetAttr(std::string_view name, TensorMeta meta) {
  Node* n = NewNode(OpKind::kGetAttr, "", SanitizeName(name), {});
  n->outputs_ = {std::move(meta)};
  return n;
}

Node* Graph::Call(OpKind kind, std::vector<Arg> args) {
  Node* n = NewNode(kind, "", InfoOf(kind).base, std::move(args));
  try {
    Reinfer(n);
  } catch (const ShapeError&) {
    // Leave no half-made node behind: the caller gets the error, the graph is unchanged.
    (void)Erase(n);
    throw;
  }
  return n;
}

Node* Graph::CallWithMeta(std::string_view op, std::vector<Arg> args, std::vector<TensorMeta> outputs, bool tuple) {
  const auto known = FindOp(op);
  std::string_view base = op;
  if (known) {
    base = InfoOf(*known).base;
  } else if (auto dot = op.find('.'); dot != std::string_view::npos) {
    base = op.substr(dot + 1, op.find('.', dot + 1) - dot - 1);
  }
  Node* n = NewNode(known.value_or(OpKind::kUnknown), known ? "" : op, base, std::move(args));
  n->outputs_ = std::move(outputs);
  n->tuple_ = tuple;
  return n;
}

Node* Graph::GetItem(Node* tuple, int64_t index) { return Call(OpKind::kGetItem, {tuple, index}); }

Node* Graph::SetOutput(NodeList outputs) {
  if (output_) {
    SetArg(output_, 0, std::move(outputs));
    return output_;
  }
  auto saved_set = insert_set_;
  insert_set_ = false;  // the output node always goes last
  output_ = nullptr;
  Node* n = NewNode(OpKind::kOutput, "", "output", {std::move(outputs)});
  insert_set_ = saved_set;
  output_ = n;
  return n;
}

// --- editing ------------------------------------------------------------------------

void Graph::SetArg(Node* user, size_t index, Arg value) {
  std::vector<Node*> old_inputs;
  ForEachNodeArg({user->args_[index]}, [&](Node* n) { old_inputs.push_back(n); });
  user->args_[index] = std::move(value);
  for (Node* n : old_inputs) RemoveUserIfUnused(n, user);
  ForEachNodeArg({user->args_[index]}, [&](Node* n) { AddUser(n, user); });
}

void Graph::ReplaceInput(Node* user, Node* old_input, Node* new_input) {
  if (old_input == new_input) return;
  for (auto& a : user->args_) {
    if (auto* n = std::get_if<Node*>(&a); n && *n == old_input) {
      *n = new_input;
    } else if (auto* list = std::get_if<NodeList>(&a)) {
      std::replace(list->begin(), list->end(), old_input, new_input);
    }
  }
  RemoveUserIfUnused(old_input, user);
  AddUser(new_input, user);
}

int Graph::ReplaceAllUses(Node* old_node, Node* new_node, const std::function<bool(const Node*)>& skip) {
  int changed = 0;
  const std::vector<Node*> users = old_node->users_;
  for (Node* u : users) {
    if (u == new_node || (skip && skip(u))) continue;
    ReplaceInput(u, old_node, new_node);
    ++changed;
  }
  return changed;
}

harness::Status Graph::Erase(Node* node) {
  if (!node->users_.empty())
    return harness::UsageError(fmt::format("cannot erase '{}' ({}): it still has {} user(s), first '{}'", node->name_,
                                           node->op(), node->users_.size(), node->users_.front()->name_));
  ForEachNodeArg(node->args_, [&](Node* input) {
    auto& users = input->users_;
    users.erase(std::remove(users.begin(), users.end(), node), users.end());
  });
  if (node == output_) output_ = nullptr;
  Unlink(node);
  node->live_ = false;
  return harness::OkStatus();
}

int Graph::EliminateDeadCode() {
  int removed = 0;
  // Backwards, so a chain of dead nodes goes in one sweep.
  for (Node* n = last_; n != nullptr;) {
    Node* prev = n->prev_;
    const bool impure = n->kind_ != OpKind::kUnknown && (InfoOf(n->kind_).traits & kTraitImpure);
    if (n->users_.empty() && !impure && Erase(n).ok()) ++removed;
    n = prev;
  }
  return removed;
}

harness::Status Graph::StableTopoSort() {
  std::unordered_map<const Node*, size_t> position;
  std::vector<Node*> order = Nodes();
  position.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::vector<int> pending(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<Node*> inputs;
    ForEachNodeArg(order[i]->args_, [&](Node* n) {
      if (position.count(n) && std::find(inputs.begin(), inputs.end(), n) == inputs.end()) inputs.push_back(n);
    });
    pending[i] = static_cast<int>(inputs.size());
  }
  // Kahn's algorithm, always taking the earliest ready node: a valid order is unchanged.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < order.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<Node*> sorted;
  sorted.reserve(order.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    sorted.push_back(order[i]);
    for (Node* u : order[i]->users_) {
      auto it = position.find(u);
      if (it != position.end() && --pending[it->second] == 0) ready.push(it->second);
    }
  }
  if (sorted.size() != order.size()) {
    for (size_t i = 0; i < order.size(); ++i)
      if (pending[i] > 0)
        return harness::UsageError(fmt::format("graph has a cycle through '{}' ({})", order[i]->name_, order[i]->op()));
  }
  if (output_) {  // the output node stays last
    sorted.erase(std::find(sorted.begin(), sorted.end(), output_));
    sorted.push_back(output_);
  }
  for (size_t i = 0; i < sorted.size(); ++i) {
    sorted[i]->prev_ = i > 0 ? sorted[i - 1] : nullptr;
    sorted[i]->next_ = i + 1 < sorted.size() ? sorted[i + 1] : nullptr;
  }
  first_ = sorted.empty() ? nullptr : sorted.front();
  last_ = sorted.empty() ? nullptr : sorted.back();
  return harness::OkStatus();
}

void Graph::Reinfer(Node* node) {
  Inferred inferred = InferMeta(*node);
  node->outputs_ = std::move(inferred.outputs);
  node->tuple_ = inferred.tuple;
}

harness::Status Graph::PropagateMeta() {
  for (Node* n = first_; n != nullptr; n = n->next_) {
    if (n->kind_ == OpKind::kPlaceholder || n->kind_ == OpKind::kGetAttr || n->kind_ == OpKind::kOutput ||
        n->kind_ == OpKind::kUnknown)
      continue;
    try {
      Reinfer(n);
    } catch (const ShapeError& e) {
      return harness::Error{harness::ExitCode::kFail, e.what()};
    }
  }
  return harness::OkStatus();
}

std::vector<Node*> Graph::Nodes() const {
  std::vector<Node*> out;
  out.reserve(size_);
  for (Node* n = first_; n != nullptr; n = n->next_) out.push_back(n);
  return out;
}

std::string Graph::Print() const {
  std::string out;
  for (Node* n = first_; n != nullptr; n = n->next_) {
    out += n->ToString();
    out += '\n';
  }
  return out;
}

}  // namespace harness::compiler
