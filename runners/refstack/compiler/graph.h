// The graph IR the reference compiler works on, modelled on torch.fx after AOT and
// pattern matching: an ordered list of nodes, each an op (namespace.op.overload) with
// positional arguments (node references, ints, int lists, node lists, doubles, dtypes,
// None), an output meta (one tensor, a tuple of tensors read through getitem nodes, or
// none), flags, and the ordered list of its users. The output node's arguments are the
// graph's formal outputs. Shapes are inferred from the arguments when a known op is
// created (infer.cc), so a wrong rewrite fails where it happens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "harness/util/error.h"
#include "runners/refstack/compiler/dtype.h"
#include "runners/refstack/compiler/ops.h"

namespace harness::compiler {

using Shape = std::vector<int64_t>;
int64_t NumElements(const Shape& shape);
// Python's str(list(shape)): "[1, 64, 5120]".
std::string ShapeString(const Shape& shape);

struct TensorMeta {
  Shape shape;
  DType dtype = DType::kBFloat16;
  int64_t numel() const { return NumElements(shape); }
  double bytes() const { return static_cast<double>(numel()) * DTypeBits(dtype) / 8.0; }
  bool operator==(const TensorMeta&) const = default;
};
// "bf16[1, 64, 5120]"
std::string MetaString(const TensorMeta& meta);

class Node;
class Graph;
struct None {
  bool operator==(const None&) const = default;
};
using IntList = std::vector<int64_t>;
using NodeList = std::vector<Node*>;
using Arg = std::variant<None, Node*, int64_t, double, IntList, NodeList, DType>;

// Node metadata the passes set (msmodeling keeps these in node.meta).
enum NodeFlag : uint32_t {
  kFlagSpLocal = 1u << 0,            // proven to hold the local token shard (tensor_cast_sp_local)
  kFlagSpSourceAllReduce = 1u << 1,  // a reduce_scatter that replaced an all_reduce
};

// A shape rule or a graph edit could not be satisfied. Thrown inside the compiler and
// turned into a harness::Error at its API boundary.
class ShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Node {
 public:
  OpKind kind() const { return kind_; }
  std::string_view op() const;
  const std::string& name() const { return name_; }
  const std::vector<Arg>& args() const { return args_; }
  // args()[i] as a node, int or int list; nullptr / nullopt when it is something else.
  Node* node_arg(size_t i) const;
  std::optional<int64_t> int_arg(size_t i) const;
  const IntList* int_list_arg(size_t i) const;
  const std::vector<TensorMeta>& outputs() const { return outputs_; }
  bool is_tuple() const { return tuple_; }
  bool has_tensor() const { return !tuple_ && outputs_.size() == 1; }
  // The single tensor output; throws ShapeError for tuples and ops without output.
  const TensorMeta& meta() const;
  const Shape& shape() const { return meta().shape; }
  // Users in the order their first use was added.
  const std::vector<Node*>& users() const { return users_; }
  bool HasFlag(NodeFlag flag) const { return (flags_ & flag) != 0; }
  void SetFlag(NodeFlag flag) { flags_ |= flag; }
  uint32_t flags() const { return flags_; }
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  bool live() const { return live_; }
  // "%name: bf16[..] = op(args)"
  std::string ToString() const;

 private:
  friend class Graph;
  OpKind kind_ = OpKind::kUnknown;
  std::string custom_op_;  // the name of a kUnknown op
  std::string name_;
  std::vector<Arg> args_;
  std::vector<TensorMeta> outputs_;
  bool tuple_ = false;
  std::vector<Node*> users_;
  uint32_t flags_ = 0;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  const void* owner_ = nullptr;  // the owning graph's identity (stable when the Graph moves)
  bool live_ = true;
};

// Calls fn(Node*) for every node referenced by args (directly or inside node lists).
void ForEachNodeArg(const std::vector<Arg>& args, const std::function<void(Node*)>& fn);

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;

  Node* AddPlaceholder(std::string_view name, TensorMeta meta);
  // A weight or buffer (FX get_attr); dots in the name become underscores.
  Node* AddGetAttr(std::string_view name, TensorMeta meta);
  // A known op; its meta is inferred from args. Throws ShapeError when the rule fails.
  Node* Call(OpKind kind, std::vector<Arg> args);
  // An op with explicit meta: unknown ops, or a known op whose meta a test sets by hand
  // (the verifier then checks it against the rule).
  Node* CallWithMeta(std::string_view op, std::vector<Arg> args, std::vector<TensorMeta> outputs, bool tuple = false);
  Node* GetItem(Node* tuple, int64_t index);
  // Creates the output node (last in the graph) or replaces its arguments.
  Node* SetOutput(NodeList outputs);
  Node* output_node() const { return output_; }

  // New nodes go right after `anchor` (in creation order) while the guard lives;
  // otherwise at the end, before the output node.
  class InsertionGuard {
   public:
    InsertionGuard(Graph* graph, Node* before);
    ~InsertionGuard();
    InsertionGuard(const InsertionGuard&) = delete;
    InsertionGuard& operator=(const InsertionGuard&) = delete;

   private:
    Graph* graph_;
    Node* saved_;
    bool saved_set_;
  };
  [[nodiscard]] InsertionGuard InsertAfter(Node* anchor);
  [[nodiscard]] InsertionGuard InsertBefore(Node* anchor);

  void SetArg(Node* user, size_t index, Arg value);
  // Replaces every occurrence of old_input in user's arguments (node lists included).
  void ReplaceInput(Node* user, Node* old_input, Node* new_input);
  // Redirects the uses of old_node to new_node, except in new_node itself and in users
  // for which skip returns true. Returns the number of users changed.
  int ReplaceAllUses(Node* old_node, Node* new_node, const std::function<bool(const Node*)>& skip = nullptr);
  // Removes a node that has no users.
  harness::Status Erase(Node* node);
  // Removes nodes without users that are not impure; returns how many.
  int EliminateDeadCode();
  // Reorders so every node follows its inputs, keeping the current order wherever it is
  // already valid. Fails on a cycle.
  harness::Status StableTopoSort();
  // Recomputes a known node's meta from its arguments (throws ShapeError).
  void Reinfer(Node* node);
  // Recomputes every known node's meta in order (fake-tensor propagation after a pass).
  harness::Status PropagateMeta();

  // Whether node was created by this graph (erased or not).
  bool Owns(const Node* node) const { return node->owner_ == identity_.get(); }
  size_t size() const { return size_; }
  Node* first() const { return first_; }
  Node* last() const { return last_; }
  // The live nodes in order (a snapshot: safe to edit the graph while walking it).
  std::vector<Node*> Nodes() const;
  std::string Print() const;

 private:
  Node* NewNode(OpKind kind, std::string_view custom_op, std::string_view base_name, std::vector<Arg> args);
  std::string UniqueName(std::string_view base);
  void Link(Node* node);
  void Unlink(Node* node);
  static void AddUser(Node* input, Node* user);
  static void RemoveUserIfUnused(Node* input, Node* user);

  struct Identity {};
  std::unique_ptr<Identity> identity_ = std::make_unique<Identity>();
  std::vector<std::unique_ptr<Node>> pool_;  // erased nodes stay allocated: stale refs stay detectable
  Node* first_ = nullptr;
  Node* last_ = nullptr;
  Node* output_ = nullptr;
  Node* insert_before_ = nullptr;
  bool insert_set_ = false;
  size_t size_ = 0;
  std::unordered_map<std::string, int> name_counts_;
};

}  // namespace harness::compiler
