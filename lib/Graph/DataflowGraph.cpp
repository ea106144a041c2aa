//===- DataflowGraph.cpp - Emitting DOT from checked dataflow -------------===//
//
// Walks a checked function's nodes in order; a call that is expanded emits
// the callee's nodes inside a cluster, with the callee's types rewritten in
// the caller's generics, and its parameters wired to the caller's edges.
//
//===----------------------------------------------------------------------===//

#include "linnet/Graph/DataflowGraph.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace linnet;

namespace {

/// Where a value comes from in the drawing: the DOT node that produced it
/// and the type its edges carry.
struct Endpoint {
  std::string node;
  std::string type;
};

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// Composes substitutions: the callee's generics in the outer caller's
/// terms.
Substitution compose(const Substitution &inner, const Substitution &outer) {
  Substitution result;
  for (const auto &[name, size] : inner.sizes)
    result.sizes[name] = substituteSize(size, outer);
  for (const auto &[name, element] : inner.elements) {
    auto it = element.isGeneric ? outer.elements.find(element.name)
                                : outer.elements.end();
    result.elements[name] = it != outer.elements.end() ? it->second : element;
  }
  for (const auto &[name, dims] : inner.shapes) {
    ValueType wrapper = ValueType::tensor(dims, ElementRef{});
    result.shapes[name] = substituteType(wrapper, outer).dims;
  }
  return result;
}

/// Expansion stops (drawing calls as boxes) past these, so a chain of
/// functions that each call the next twice cannot blow up the drawing.
constexpr unsigned kMaxNesting = 64;
constexpr unsigned kMaxNodes = 5000;

class Emitter {
public:
  Emitter(const CheckedProgram &program, llvm::raw_ostream &os)
      : program(program), os(os) {}

  std::vector<Endpoint> emit(const CheckedFunction &fn,
                             const Substitution &subst,
                             const std::vector<Endpoint> &params,
                             unsigned depth, const std::string &indent) {
    std::map<int, Endpoint> values;
    for (size_t i = 0; i < fn.graph.params.size() && i < params.size(); ++i)
      values[fn.graph.params[i]] = params[i];
    auto typeOf = [&](int id) {
      return formatValueType(substituteType(fn.graph.values[id], subst));
    };
    for (const GraphNode &node : fn.graph.nodes) {
      std::vector<Endpoint> inputs;
      for (int id : node.inputs) {
        auto it = values.find(id);
        inputs.push_back(it != values.end() ? it->second : Endpoint{});
      }
      const CheckedFunction *callee =
          node.callee ? program.find(node.calleeBlock, node.callee->name)
                      : nullptr;
      // A block's own functions are drawn inline; each level of sub-block
      // calls costs one level of depth.
      bool own = callee && node.calleeBlock == fn.block;
      if (callee && callee->ok && (own || depth > 0) && nesting < kMaxNesting &&
          nextId < kMaxNodes) {
        std::string cluster = "cluster_" + std::to_string(nextId++);
        std::string label =
            node.calleeBlock->qualifiedName() + "." + node.callee->name;
        if (!node.repeat.empty())
          label += " (for each of " + node.repeat + ")";
        os << indent << "subgraph " << cluster << " {\n"
           << indent << "  label=\"" << escape(label) << "\";\n"
           << indent << "  style=rounded; color=gray50;\n";
        Substitution inner = compose(node.calleeGenerics, subst);
        ++nesting;
        std::vector<Endpoint> results = emit(
            *callee, inner, inputs, own ? depth : depth - 1, indent + "  ");
        --nesting;
        os << indent << "}\n";
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          Endpoint out = i < results.size() ? results[i] : Endpoint{};
          out.type = typeOf(node.outputs[i]);
          values[node.outputs[i]] = out;
        }
        continue;
      }
      std::string id = "n" + std::to_string(nextId++);
      std::string label = node.label;
      if (node.callee)
        label = node.calleeBlock->qualifiedName() + "." + node.callee->name;
      if (!node.repeat.empty())
        label += " (for each of " + node.repeat + ")";
      const char *shape = node.callee ? "box" : "ellipse";
      os << indent << id << " [label=\"" << escape(label)
         << "\", shape=" << shape << "];\n";
      for (const Endpoint &input : inputs)
        edge(input, id, indent);
      for (int output : node.outputs)
        values[output] = Endpoint{id, typeOf(output)};
    }
    std::vector<Endpoint> results;
    for (int id : fn.graph.results)
      if (auto it = values.find(id); it != values.end())
        results.push_back({it->second.node, typeOf(id)});
    return results;
  }

  /// Edges are written after every node: Graphviz puts a node in the
  /// first cluster that mentions it, so edges inside clusters would pull
  /// nodes into them.
  void edge(const Endpoint &from, const std::string &to, const std::string &) {
    if (from.node.empty())
      return;
    edges += "  " + from.node + " -> " + to + " [label=\"" + escape(from.type) +
             "\"];\n";
  }
  std::string edges;

  unsigned nextId = 0;
  unsigned nesting = 0;

private:
  const CheckedProgram &program;
  llvm::raw_ostream &os;
};

} // namespace

std::string linnet::renderDataflowGraph(const CheckedProgram &program,
                                        const CheckedFunction &fn,
                                        unsigned depth,
                                        const std::string &title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "digraph \"" << escape(title) << "\" {\n"
     << "  label=\"" << escape(title) << "\"; labelloc=t;\n"
     << "  rankdir=TB; node [fontname=\"Helvetica\", fontsize=11];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  Emitter emitter(program, os);
  std::vector<Endpoint> params;
  for (int id : fn.graph.params) {
    std::string node = "in" + std::to_string(id);
    os << "  " << node << " [label=\"" << escape(fn.graph.valueNames[id])
       << "\", shape=invhouse];\n";
    params.push_back({node, formatValueType(fn.graph.values[id])});
  }
  std::vector<Endpoint> results = emitter.emit(fn, {}, params, depth, "  ");
  os << "  out [label=\"result\", shape=house];\n";
  for (const Endpoint &result : results)
    emitter.edge(result, "out", "  ");
  os << emitter.edges << "}\n";
  return text;
}
