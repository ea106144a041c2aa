//===- Builtins.cpp - Typing rules of the built-in operations -------------===//
//
// Each built-in operation declares its parameters (positional, or by name)
// and computes its result type from its arguments' types; the rules are the
// ones docs/language.md lists under "Operations". Conditions that are
// arithmetic (element counts, sums of parts) become obligations.
//
//===----------------------------------------------------------------------===//

#include "BodyCheckerImpl.h"

#include "linnet/Sema/Builtins.h"
#include "linnet/Sema/DeclChecker.h"

#include "llvm/ADT/StringSwitch.h"

using namespace linnet;
using namespace linnet::detail;

bool FunctionChecker::isFloatElement(const ElementRef &element) const {
  if (element.isGeneric)
    return true; // a Float generic
  auto type = parseElementType(element.name);
  return type && isFloatType(*type);
}

namespace linnet::detail {

/// One call of a built-in: its arguments matched to parameters, and
/// accessors that check each argument's kind.
struct BuiltinCall {
  FunctionChecker &checker;
  DiagnosticEngine &diags;
  BuiltinId id;
  std::string name; ///< its spelling, for messages
  const ast::CallExpr &call;
  std::map<std::string, const ast::Expr *> args;
  std::vector<Value> inputs; ///< tensors read, for the graph

  bool bind() {
    llvm::ArrayRef<BuiltinParameter> params = builtinParameters(id);
    auto quoted = [](llvm::StringRef param) { return "`" + param.str() + "`"; };
    size_t position = 0;
    std::map<std::string, llvm::SMRange> givenAt;
    for (const ast::Argument &arg : call.arguments) {
      std::string param;
      if (arg.keyword) {
        for (const BuiltinParameter &p : params)
          if (p.name == arg.keyword->name)
            param = arg.keyword->name;
        if (param.empty()) {
          std::string names;
          for (const BuiltinParameter &p : params)
            names += (names.empty() ? "" : ", ") + quoted(p.name);
          diags.report(arg.keyword->range, diag::UnknownKeyword, name,
                       arg.keyword->name, "its parameters are " + names);
          return false;
        }
      } else {
        if (position >= params.size()) {
          size_t required = 0;
          for (const BuiltinParameter &p : params)
            required += !p.optional;
          std::string count = std::to_string(params.size());
          if (required != params.size())
            count = std::to_string(required) + " to " + count;
          count += params.size() == 1 ? " argument" : " arguments";
          diags.report(call.range, diag::ArgumentCount, name, count,
                       unsigned(call.arguments.size()));
          return false;
        }
        param = params[position++].name.str();
      }
      if (args.count(param)) {
        diags.report(arg.keyword ? arg.keyword->range : arg.range,
                     diag::DuplicateArgument, name, param);
        diags.report(givenAt[param], diag::BoundBy,
                     "`" + param + "` is first given here");
        return false;
      }
      args[param] = &arg.value;
      givenAt[param] = arg.range;
    }
    for (const BuiltinParameter &p : params)
      if (!p.optional && !args.count(p.name.str())) {
        diags.report(call.range, diag::MissingArgument, name, p.name.str());
        return false;
      }
    return true;
  }

  bool has(const std::string &param) const { return args.count(param) != 0; }
  llvm::SMRange loc(const std::string &param) const {
    return ast::rangeOf(*args.at(param));
  }

  std::optional<Value> tensor(const std::string &param) {
    Value value = checker.asTensor(checker.check(*args.at(param)), loc(param));
    if (value.type.isInvalid())
      return std::nullopt;
    inputs.push_back(value);
    return value;
  }
  std::optional<Value> floatTensor(const std::string &param) {
    auto value = tensor(param);
    if (value && !checker.isFloatElement(value->type.element) &&
        !value->type.weak) {
      diags.report(loc(param), diag::OperandType,
                   "`" + param + "` of `" + name + "`",
                   quoteValueType(value->type), "a float tensor");
      return std::nullopt;
    }
    return value;
  }
  /// A tensor of the given rank whose dims are given names in messages.
  std::optional<Value> tensorOfRank(const std::string &param, unsigned rank,
                                    const std::string &layout) {
    auto value = tensor(param);
    if (!value)
      return std::nullopt;
    if (value->type.hasSpread() || value->type.rank() != rank) {
      diags.report(loc(param), diag::OperandType,
                   "`" + param + "` of `" + name + "`",
                   quoteValueType(value->type), "a tensor `" + layout + "`");
      return std::nullopt;
    }
    return value;
  }
  std::optional<ElementRef> elementType(const std::string &param) {
    Value value = checker.check(*args.at(param));
    if (value.type.isInvalid())
      return std::nullopt;
    if (value.type.kind != ValueType::Element) {
      diags.report(loc(param), diag::OperandType,
                   "`" + param + "` of `" + name + "`",
                   quoteValueType(value.type), "an element type");
      return std::nullopt;
    }
    return value.type.element;
  }
  std::optional<ShapeExpr> size(const std::string &param) {
    return checker.staticSize(checker.check(*args.at(param)), loc(param));
  }
  std::optional<DimList> sizeList(const std::string &param) {
    Value value = checker.check(*args.at(param));
    if (value.type.isInvalid())
      return std::nullopt;
    if (value.type.kind != ValueType::SizeList) {
      diags.report(loc(param), diag::OperandType,
                   "`" + param + "` of `" + name + "`",
                   quoteValueType(value.type), "a list of sizes `[...]`");
      return std::nullopt;
    }
    return value.type.dims;
  }
  /// An axis: an integer constant, negative from the end; the default
  /// when absent is the last axis.
  std::optional<size_t> axis(const ValueType &type, bool allowEnd = false) {
    int64_t raw = -1;
    if (has("axis")) {
      auto value = size("axis");
      if (!value)
        return std::nullopt;
      auto constant = value->constantValue();
      if (!constant || !constant->isInteger()) {
        diags.report(loc("axis"), diag::OperandType, "`axis` of `" + name + "`",
                     "a size `" + value->str() + "`", "an integer constant");
        return std::nullopt;
      }
      raw = constant->numerator();
    }
    int64_t rank = int64_t(type.rank()) + (allowEnd ? 1 : 0);
    int64_t resolved = raw < 0 ? rank + raw : raw;
    llvm::SMRange at = has("axis") ? loc("axis") : call.range;
    if (resolved < 0 || resolved >= std::max<int64_t>(rank, 1) ||
        type.rank() == 0) {
      std::string axes = type.rank() == 0 ? "it is a scalar, with no axes"
                         : type.rank() == 1
                             ? "it has 1 axis, `0` or `-1`"
                             : "it has " + std::to_string(type.rank()) +
                                   " axes, `0` to `" +
                                   std::to_string(type.rank() - 1) + "` or `-" +
                                   std::to_string(type.rank()) + "` to `-1`";
      diags.report(at, diag::AxisOutOfRange,
                   has("axis") ? std::to_string(raw)
                               : "-1 (the last, when none is given)",
                   formatValueType(type), axes);
      return std::nullopt;
    }
    // Axes counted across a `*S` spread are unknown; the other end may
    // reach them.
    for (size_t i = 0; i < type.dims.size(); ++i)
      if (type.dims[i].isSpread() &&
          (raw >= 0 ? int64_t(i) <= resolved : int64_t(i) >= resolved)) {
        bool sizesAfter = i + 1 < type.dims.size(), sizesBefore = i > 0;
        diags.report(
            at, diag::IndexSpread, type.dims[i].spread, formatValueType(type),
            raw >= 0 && sizesAfter ? "count from the end, with a negative axis"
            : raw < 0 && sizesBefore
                ? "count from the start"
                : "only the axes on either side of it are known");
        return std::nullopt;
      }
    return size_t(resolved);
  }
  /// A `true` or `false` literal; false when absent.
  std::optional<bool> flag(const std::string &param) {
    if (!has(param))
      return false;
    Value value = checker.check(*args.at(param));
    if (value.type.isInvalid())
      return std::nullopt;
    const auto *literal = boost::get<ast::BoolLiteral>(args.at(param));
    if (!literal) {
      diags.report(loc(param), diag::OperandType,
                   "`" + param + "` of `" + name + "`",
                   quoteValueType(value.type), "`true` or `false`");
      return std::nullopt;
    }
    return literal->value;
  }
  /// Requires a size of two operands (`q` and `k`, `the parts`) to be
  /// equal, reporting both.
  bool same(const ValueDim &a, const ValueDim &b, const std::string &what,
            const std::string &leftParam, const Value &left,
            const std::string &rightParam, const Value &right) {
    if (a == b)
      return true;
    diags.report(call.range, diag::OperandMismatch,
                 "`" + leftParam + "` and `" + rightParam + "` of `" + name +
                     "`",
                 what, "`" + a.str() + "`", formatValueType(left.type),
                 "`" + b.str() + "`", formatValueType(right.type));
    return false;
  }
  Value result(ValueType type) {
    return checker.node(name, inputs, std::move(type), call.range);
  }
};

} // namespace linnet::detail

static ShapeExpr productOf(const DimList &dims) {
  // A spread `*S` counts as one symbol for its product.
  ShapeExpr product = ShapeExpr::constant(1);
  for (const ValueDim &dim : dims) {
    ShapeExpr factor =
        dim.size
            ? *dim.size
            : ShapeExpr::symbol({kUnknownRank - 1, "prod(" + dim.spread + ")"});
    auto next = ShapeExpr::multiply(product, factor);
    if (!next) {
      llvm::consumeError(next.takeError());
      return product;
    }
    product = *next;
  }
  return product;
}

Value FunctionChecker::matmul(const Value &lhs, const Value &rhs,
                              const ast::Expr &rhsExpr, llvm::SMRange lhsLoc,
                              llvm::SMRange rhsLoc, llvm::SMRange loc) {
  Value a = asTensor(lhs, lhsLoc), b = asTensor(rhs, rhsLoc);
  if (a.type.isInvalid() || b.type.isInvalid())
    return Value::invalid();
  // [..., M, K] @ [..., K, N] -> [..., M, N]; batch axes broadcast.
  // The inner sizes must be sizes; the outer ones may be spreads (`[*S, In]
  // @ [In, Out]` is `[*S, Out]`).
  if (a.type.rank() < 2 || a.type.dims.back().isSpread()) {
    diags.report(lhsLoc, diag::OperandType, "the left side of a matrix product",
                 quoteValueType(a.type),
                 "a tensor `[..., M, K]` whose last dimension is a size");
    return Value::invalid();
  }
  if (b.type.rank() < 2 || b.type.dims[b.type.rank() - 2].isSpread()) {
    diags.report(rhsLoc, diag::OperandType,
                 "the right side of a matrix product", quoteValueType(b.type),
                 "a tensor `[..., K, N]` whose next to last dimension is a "
                 "size");
    return Value::invalid();
  }
  const ValueDim &k1 = a.type.dims[a.type.rank() - 1];
  const ValueDim &k2 = b.type.dims[b.type.rank() - 2];
  if (k1 != k2) {
    // `x @ weight` with a PyTorch `[Out, In]` weight: the right side has
    // the inner size last.
    std::string hint;
    if (b.type.dims.back() == k1) {
      std::string permutation;
      for (size_t i = 0; i + 2 < b.type.rank(); ++i)
        permutation += std::to_string(i) + ", ";
      permutation += std::to_string(b.type.rank() - 1) + ", " +
                     std::to_string(b.type.rank() - 2);
      hint = "; the right side has `" + k1.str() +
             "` last, so multiply by `transpose(" + sourceText(rhsLoc) + ", [" +
             permutation + "])`";
    }
    diags.report(loc, diag::MatmulMismatch, formatValueType(a.type),
                 formatValueType(b.type), k1.str(), k2.str(), hint);
    if (!hint.empty())
      noteDeclaration(rhsExpr);
    return Value::invalid();
  }
  auto element = commonElement(a.type, b.type, "multiply", loc);
  if (!element)
    return Value::invalid();
  ValueType batchA = a.type, batchB = b.type;
  batchA.dims.resize(a.type.rank() - 2);
  batchB.dims.resize(b.type.rank() - 2);
  auto batch = broadcast(batchA, batchB, "multiply", loc);
  if (!batch)
    return Value::invalid();
  DimList dims = *batch;
  dims.push_back(a.type.dims[a.type.rank() - 2]);
  dims.push_back(b.type.dims[b.type.rank() - 1]);
  return node("matmul", {a, b}, ValueType::tensor(dims, *element), loc);
}

Value FunctionChecker::callBuiltin(BuiltinId id, const ast::CallExpr &call) {
  BuiltinCall op{*this, diags, id, builtinSpelling(id).str(), call, {}, {}};
  if (!op.bind())
    return Value::invalid();
  CallResolution &resolution = annotations.calls[&call];
  resolution.builtin = id;
  resolution.builtinArguments = op.args;

  switch (id) {
#define LINNET_UNARY_FLOAT_BUILTIN(Id, Spelling) case BuiltinId::Id:
#include "linnet/Sema/Builtins.def"
    {
      auto x = op.floatTensor("x");
      if (!x)
        return Value::invalid();
      ValueType type = x->type;
      type.value.reset();
      return op.result(type);
    }
  case BuiltinId::Cast: {
    auto x = op.tensor("x");
    auto type = op.elementType("type");
    if (!x || !type)
      return Value::invalid();
    ValueType result = ValueType::tensor(x->type.dims, *type);
    if (type->name[0] == 'i')
      result.value = x->type.value;
    return op.result(result);
  }
  case BuiltinId::Where: {
    auto condition = op.tensor("condition");
    auto a = op.tensor("a"), b = op.tensor("b");
    if (!condition || !a || !b)
      return Value::invalid();
    if (condition->type.element.name != "i1") {
      diags.report(op.loc("condition"), diag::OperandType,
                   "`condition` of `where`", quoteValueType(condition->type),
                   "an `i1` tensor");
      return Value::invalid();
    }
    auto element =
        commonElement(a->type, b->type, "select between", call.range);
    auto ab = broadcast(a->type, b->type, "select between", call.range);
    if (!element || !ab)
      return Value::invalid();
    ValueType values = ValueType::tensor(*ab, *element);
    auto dims = broadcast(condition->type, values, "select with", call.range);
    if (!dims)
      return Value::invalid();
    ValueType result = ValueType::tensor(*dims, *element);
    result.weak = a->type.weak && b->type.weak;
    return op.result(result);
  }
  case BuiltinId::Sum:
  case BuiltinId::Mean:
  case BuiltinId::Max:
  case BuiltinId::Softmax: {
    auto x = id == BuiltinId::Sum || id == BuiltinId::Max ? op.tensor("x")
                                                          : op.floatTensor("x");
    if (!x)
      return Value::invalid();
    auto axis = op.axis(x->type);
    if (!axis)
      return Value::invalid();
    if (id == BuiltinId::Softmax)
      return op.result(ValueType::tensor(x->type.dims, x->type.element));
    std::optional<bool> keep = op.flag("keepdim");
    if (!keep)
      return Value::invalid();
    DimList dims = x->type.dims;
    if (*keep)
      dims[*axis] = ValueDim::of(ShapeExpr::constant(1));
    else
      dims.erase(dims.begin() + *axis);
    ElementRef element = x->type.element;
    if (id == BuiltinId::Sum && element.name == "i1")
      element = ElementRef{"i32", false};
    return op.result(ValueType::tensor(dims, element));
  }
  case BuiltinId::Matmul: {
    Value a = check(*op.args.at("a")), b = check(*op.args.at("b"));
    return matmul(a, b, *op.args.at("b"), op.loc("a"), op.loc("b"), call.range);
  }
  case BuiltinId::Reshape: {
    auto x = op.tensor("x");
    auto shape = op.sizeList("shape");
    if (!x || !shape)
      return Value::invalid();
    if (!obligation(Obligation::Equal, productOf(x->type.dims),
                    productOf(*shape), "`reshape` keeps the element count",
                    call.range,
                    "cannot reshape `" + formatValueType(x->type) + "` to `" +
                        sourceText(op.loc("shape")) + "`"))
      return Value::invalid();
    return op.result(ValueType::tensor(*shape, x->type.element));
  }
  case BuiltinId::Transpose: {
    auto x = op.tensor("x");
    auto perm = op.sizeList("permutation");
    if (!x || !perm)
      return Value::invalid();
    if (x->type.hasSpread()) {
      for (const ValueDim &dim : x->type.dims)
        if (dim.isSpread()) {
          diags.report(op.loc("x"), diag::IndexSpread, dim.spread,
                       formatValueType(x->type),
                       "transpose a tensor whose dimensions are all sizes");
          break;
        }
      return Value::invalid();
    }
    if (perm->size() != x->type.rank()) {
      diags.report(op.loc("permutation"), diag::BadPermutation,
                   sourceText(op.loc("permutation")), formatValueType(x->type),
                   x->type.rank());
      return Value::invalid();
    }
    DimList dims;
    std::vector<bool> used(perm->size(), false);
    for (const ValueDim &entry : *perm) {
      auto constant = entry.size ? entry.size->constantValue() : std::nullopt;
      int64_t axis =
          constant && constant->isInteger() ? constant->numerator() : -1;
      if (axis < 0 || axis >= int64_t(perm->size()) || used[axis]) {
        diags.report(op.loc("permutation"), diag::BadPermutation,
                     sourceText(op.loc("permutation")),
                     formatValueType(x->type), x->type.rank());
        return Value::invalid();
      }
      used[axis] = true;
      dims.push_back(x->type.dims[axis]);
    }
    return op.result(ValueType::tensor(dims, x->type.element));
  }
  case BuiltinId::Concat:
  case BuiltinId::Split: {
    if (id == BuiltinId::Concat) {
      const auto *list =
          boost::get<boost::spirit::x3::forward_ast<ast::ListExpr>>(
              op.args.at("tensors"));
      if (!list || list->get().items.empty()) {
        diags.report(op.loc("tensors"), diag::OperandType,
                     "`tensors` of `concat`",
                     "`" + sourceText(op.loc("tensors")) + "`",
                     "a list `[a, b, ...]` of tensors");
        return Value::invalid();
      }
      std::vector<Value> parts;
      for (const ast::ListItem &item : list->get().items) {
        Value part = asTensor(check(item.value), item.range);
        if (part.type.isInvalid())
          return part;
        parts.push_back(part);
        op.inputs.push_back(part);
      }
      auto axis = op.axis(parts[0].type);
      if (!axis)
        return Value::invalid();
      DimList dims = parts[0].type.dims;
      ShapeExpr total = ShapeExpr::constant(0);
      for (size_t n = 0; n < parts.size(); ++n) {
        const Value &part = parts[n];
        llvm::SMRange at = list->get().items[n].range;
        std::string first = sourceText(list->get().items[0].range);
        std::string each = sourceText(at);
        if (part.type.rank() != dims.size()) {
          diags.report(at, diag::OperandMismatch,
                       "`" + first + "` and `" + each + "` of `concat`", "rank",
                       std::to_string(dims.size()) +
                           (dims.size() == 1 ? " axis" : " axes"),
                       formatValueType(parts[0].type),
                       std::to_string(part.type.rank()) +
                           (part.type.rank() == 1 ? " axis" : " axes"),
                       formatValueType(part.type));
          return Value::invalid();
        }
        if (!commonElement(parts[0].type, part.type, "concatenate", at))
          return Value::invalid();
        for (size_t i = 0; i < dims.size(); ++i)
          if (i != *axis && dims[i] != part.type.dims[i]) {
            diags.report(
                at, diag::OperandMismatch,
                "`" + first + "` and `" + each + "` of `concat`",
                "dimension " + std::to_string(i) + ", which is not the axis",
                "`" + dims[i].str() + "`", formatValueType(parts[0].type),
                "`" + part.type.dims[i].str() + "`",
                formatValueType(part.type));
            return Value::invalid();
          }
        if (!part.type.dims[*axis].size) {
          diags.report(at, diag::IndexSpread, part.type.dims[*axis].spread,
                       formatValueType(part.type),
                       "concatenate along an axis that is a size");
          return Value::invalid();
        }
        auto sum = ShapeExpr::add(total, *part.type.dims[*axis].size);
        if (!sum) {
          llvm::consumeError(sum.takeError());
          return Value::invalid();
        }
        total = *sum;
      }
      dims[*axis] = ValueDim::of(total);
      return op.result(ValueType::tensor(dims, parts[0].type.element));
    }
    auto x = op.tensor("x");
    auto sizes = op.sizeList("sizes");
    if (!x || !sizes)
      return Value::invalid();
    auto axis = op.axis(x->type);
    if (!axis)
      return Value::invalid();
    ShapeExpr total = ShapeExpr::constant(0);
    std::vector<ValueType> parts;
    for (const ValueDim &part : *sizes) {
      if (part.isSpread()) {
        diags.report(op.loc("sizes"), diag::OperandType, "`sizes` of `split`",
                     "`" + sourceText(op.loc("sizes")) + "`",
                     "a list of sizes, without `*Shape` spreads");
        return Value::invalid();
      }
      auto sum = ShapeExpr::add(total, *part.size);
      if (!sum) {
        llvm::consumeError(sum.takeError());
        return Value::invalid();
      }
      total = *sum;
      DimList dims = x->type.dims;
      dims[*axis] = part;
      parts.push_back(ValueType::tensor(dims, x->type.element));
    }
    if (!obligation(Obligation::Equal, total, *x->type.dims[*axis].size,
                    "the parts of `split` sum to the axis", call.range,
                    "cannot split axis " + std::to_string(*axis) + " of `" +
                        formatValueType(x->type) + "` into `" +
                        sourceText(op.loc("sizes")) + "`"))
      return Value::invalid();
    return op.result(ValueType::tuple(parts));
  }
  case BuiltinId::RepeatInterleave: {
    auto x = op.tensor("x");
    auto repeats = op.size("repeats");
    if (!x || !repeats)
      return Value::invalid();
    auto axis = op.axis(x->type);
    if (!axis)
      return Value::invalid();
    DimList dims = x->type.dims;
    auto grown = arithmetic(ShapeExpr::multiply(*dims[*axis].size, *repeats),
                            call.range);
    if (!grown)
      return Value::invalid();
    dims[*axis] = ValueDim::of(simplifyQuotients(*grown));
    return op.result(ValueType::tensor(dims, x->type.element));
  }
  case BuiltinId::Zeros: {
    auto shape = op.sizeList("shape");
    auto type = op.elementType("type");
    if (!shape || !type)
      return Value::invalid();
    return op.result(ValueType::tensor(*shape, *type));
  }
  case BuiltinId::Arange: {
    auto n = op.size("n");
    if (!n)
      return Value::invalid();
    return op.result(
        ValueType::tensor({ValueDim::of(*n)}, ElementRef{"i32", false}));
  }
  case BuiltinId::Take: {
    auto table = op.tensor("table");
    auto ids = op.tensor("ids");
    if (!table || !ids)
      return Value::invalid();
    if (table->type.rank() < 1 || table->type.dims[0].isSpread() ||
        ids->type.element.name[0] != 'i' || ids->type.element.name == "i1") {
      bool badTable = table->type.rank() < 1 || table->type.dims[0].isSpread();
      diags.report(op.loc(badTable ? "table" : "ids"), diag::OperandType,
                   badTable ? "`table` of `take`" : "`ids` of `take`",
                   quoteValueType(badTable ? table->type : ids->type),
                   badTable ? "a tensor `[Rows, ...]`" : "an integer tensor");
      return Value::invalid();
    }
    DimList dims = ids->type.dims;
    dims.insert(dims.end(), table->type.dims.begin() + 1,
                table->type.dims.end());
    return op.result(ValueType::tensor(dims, table->type.element));
  }
  case BuiltinId::Attention: {
    // q [B, Hq, S, D], k [B, Hk, L, D], v [B, Hk, L, E] -> [B, Hq, S, E].
    auto q = op.tensorOfRank("q", 4, "[B, Heads, S, HeadDim]");
    auto k = op.tensorOfRank("k", 4, "[B, KvHeads, L, HeadDim]");
    auto v = op.tensorOfRank("v", 4, "[B, KvHeads, L, ValueDim]");
    auto offset = op.tensor("offset");
    auto scale = op.floatTensor("scale");
    if (!q || !k || !v || !offset || !scale)
      return Value::invalid();
    const DimList &qd = q->type.dims, &kd = k->type.dims, &vd = v->type.dims;
    if (!op.same(qd[0], kd[0], "the batch", "q", *q, "k", *k) ||
        !op.same(kd[0], vd[0], "the batch", "k", *k, "v", *v) ||
        !op.same(qd[3], kd[3], "the head size", "q", *q, "k", *k) ||
        !op.same(kd[1], vd[1], "the key heads", "k", *k, "v", *v) ||
        !op.same(kd[2], vd[2], "the key length", "k", *k, "v", *v))
      return Value::invalid();
    const Value &other = q->type.element.name != k->type.element.name ? *k : *v;
    if (q->type.element.name != other.type.element.name) {
      diags.report(call.range, diag::ElementMismatch, "attend with",
                   formatValueType(q->type), formatValueType(other.type),
                   q->type.element.name, other.type.element.name);
      return Value::invalid();
    }
    ValueType batchOffsets =
        ValueType::tensor({qd[0]}, ElementRef{"i32", false});
    if (!(offset->type.isScalar() || sameType(offset->type, batchOffsets)) ||
        offset->type.element.name[0] != 'i') {
      diags.report(op.loc("offset"), diag::OperandType,
                   "`offset` of `attention`", quoteValueType(offset->type),
                   "`i32` or `" + formatValueType(batchOffsets) + "`");
      return Value::invalid();
    }
    if (op.has("lengths")) {
      auto lengths = op.tensor("lengths");
      if (!lengths || !sameType(lengths->type, batchOffsets)) {
        if (lengths)
          diags.report(
              op.loc("lengths"), diag::OperandType, "`lengths` of `attention`",
              quoteValueType(lengths->type), quoteValueType(batchOffsets));
        return Value::invalid();
      }
    }
    // Query head h reads key head h / (Hq / Hk): Hk must divide Hq.
    if (*qd[1].size != *kd[1].size)
      quotient(*qd[1].size, *kd[1].size, call.range);
    return op.result(
        ValueType::tensor({qd[0], qd[1], qd[2], vd[3]}, q->type.element));
  }
  case BuiltinId::DeltaRule: {
    // q, k [B, S, N, K], v [B, S, N, V], beta, g [B, S, N], initial
    // [B, N, K, V], all f32 -> (out [B, S, N, V], state [B, N, K, V]).
    auto q = op.tensorOfRank("q", 4, "[B, S, Heads, KeyDim]");
    auto k = op.tensorOfRank("k", 4, "[B, S, Heads, KeyDim]");
    auto v = op.tensorOfRank("v", 4, "[B, S, Heads, ValueDim]");
    auto beta = op.tensorOfRank("beta", 3, "[B, S, Heads]");
    auto g = op.tensorOfRank("g", 3, "[B, S, Heads]");
    auto initial =
        op.tensorOfRank("initial", 4, "[B, Heads, KeyDim, ValueDim]");
    if (!q || !k || !v || !beta || !g || !initial)
      return Value::invalid();
    const DimList &qd = q->type.dims, &vd = v->type.dims;
    ValueType keys = q->type;
    ValueType gates =
        ValueType::tensor({qd[0], qd[1], qd[2]}, ElementRef{"f32", false});
    ValueType state = ValueType::tensor({qd[0], qd[2], qd[3], vd[3]},
                                        ElementRef{"f32", false});
    ValueType values = ValueType::tensor({qd[0], qd[1], qd[2], vd[3]},
                                         ElementRef{"f32", false});
    keys.element = ElementRef{"f32", false};
    struct Expect {
      const char *param;
      const Value &value;
      const ValueType &type;
    } expects[] = {{"q", *q, keys},   {"k", *k, keys},
                   {"v", *v, values}, {"beta", *beta, gates},
                   {"g", *g, gates},  {"initial", *initial, state}};
    for (const Expect &e : expects)
      if (!sameType(e.value.type, e.type) ||
          e.value.type.element.name != "f32") {
        diags.report(op.loc(e.param), diag::OperandType,
                     std::string("`") + e.param + "` of `delta_rule`",
                     quoteValueType(e.value.type), quoteValueType(e.type));
        return Value::invalid();
      }
    if (op.has("lengths")) {
      auto lengths = op.tensor("lengths");
      ValueType rows = ValueType::tensor({qd[0]}, ElementRef{"i32", false});
      if (!lengths || !sameType(lengths->type, rows)) {
        if (lengths)
          diags.report(op.loc("lengths"), diag::OperandType,
                       "`lengths` of `delta_rule`",
                       quoteValueType(lengths->type), quoteValueType(rows));
        return Value::invalid();
      }
    }
    return op.result(ValueType::tuple({values, state}));
  }
  case BuiltinId::CausalConv: {
    // x [B, S, C], taps [C, W], history [B, W - 1, C] -> (y [B, S, C],
    // history [B, W - 1, C]).
    auto x = op.tensorOfRank("x", 3, "[B, S, Channels]");
    auto taps = op.tensorOfRank("taps", 2, "[Channels, Width]");
    auto history = op.tensorOfRank("history", 3, "[B, Width - 1, Channels]");
    if (!x || !taps || !history)
      return Value::invalid();
    const DimList &xd = x->type.dims, &td = taps->type.dims;
    auto kept = ShapeExpr::subtract(*td[1].size, ShapeExpr::constant(1));
    if (!kept) {
      llvm::consumeError(kept.takeError());
      return Value::invalid();
    }
    ValueType expected =
        ValueType::tensor({xd[0], ValueDim::of(*kept), xd[2]}, x->type.element);
    if (!op.same(xd[2], td[0], "the channels", "x", *x, "taps", *taps))
      return Value::invalid();
    if (!sameType(history->type, expected)) {
      diags.report(op.loc("history"), diag::OperandType,
                   "`history` of `causal_conv`", quoteValueType(history->type),
                   quoteValueType(expected));
      return Value::invalid();
    }
    if (op.has("lengths")) {
      auto lengths = op.tensor("lengths");
      ValueType rows = ValueType::tensor({xd[0]}, ElementRef{"i32", false});
      if (!lengths || !sameType(lengths->type, rows)) {
        if (lengths)
          diags.report(op.loc("lengths"), diag::OperandType,
                       "`lengths` of `causal_conv`",
                       quoteValueType(lengths->type), quoteValueType(rows));
        return Value::invalid();
      }
    }
    return op.result(ValueType::tuple({x->type, expected}));
  }
  case BuiltinId::TopK:
  case BuiltinId::Rank: {
    // topk: the k largest along the axis and their indices; rank: each
    // element's place in its axis sorted descending. Ties: lower index
    // first.
    auto x = op.tensor("x");
    if (!x)
      return Value::invalid();
    auto axis = op.axis(x->type);
    if (!axis)
      return Value::invalid();
    ElementRef index{"i32", false};
    if (id == BuiltinId::Rank)
      return op.result(ValueType::tensor(x->type.dims, index));
    auto k = op.size("k");
    if (!k)
      return Value::invalid();
    DimList dims = x->type.dims;
    if (dims[*axis].size &&
        !obligation(Obligation::AtMost, *k, *dims[*axis].size,
                    "`topk` takes at most the axis", call.range,
                    "cannot take the top `" + sourceText(op.loc("k")) +
                        "` along axis " + std::to_string(*axis) + " of `" +
                        formatValueType(x->type) + "`"))
      return Value::invalid();
    dims[*axis] = ValueDim::of(*k);
    return op.result(ValueType::tuple({ValueType::tensor(dims, x->type.element),
                                       ValueType::tensor(dims, index)}));
  }
  case BuiltinId::ExpertMatmul: {
    // x [R, In] or [R, K, In], weights [E, Out, In], experts [R, K]
    // -> [R, K, Out]: each row times the weights of each chosen expert.
    auto x = op.tensor("x");
    auto weights = op.tensorOfRank("weights", 3, "[Experts, Out, In]");
    auto experts = op.tensorOfRank("experts", 2, "[Rows, TopK]");
    if (!x || !weights || !experts)
      return Value::invalid();
    const DimList &xd = x->type.dims, &wd = weights->type.dims,
                  &ed = experts->type.dims;
    if (x->type.hasSpread() || (xd.size() != 2 && xd.size() != 3)) {
      diags.report(op.loc("x"), diag::OperandType, "`x` of `expert_matmul`",
                   quoteValueType(x->type),
                   "a tensor `[Rows, In]` or `[Rows, TopK, In]`");
      return Value::invalid();
    }
    if (!op.same(xd[0], ed[0], "the rows", "x", *x, "experts", *experts) ||
        (xd.size() == 3 &&
         !op.same(xd[1], ed[1], "the choices", "x", *x, "experts", *experts)) ||
        !op.same(xd.back(), wd[2], "the inner size", "x", *x, "weights",
                 *weights))
      return Value::invalid();
    return op.result(ValueType::tensor({xd[0], ed[1], wd[1]}, x->type.element));
  }
  }
  llvm_unreachable("every built-in has a typing rule");
}
