//===- Generator.h - Internals of IR generation ------------------*- C++
//-*-===//
//
// IR generation walks the syntax of each entry with the checker's
// annotations (every expression's type, every call's resolution), inlining
// block functions and unrolling loops. This header is what IRGen.cpp
// (statements, names, calls) and GenOperations.cpp (operators and built-in
// operations) share. Not installed.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_IRGEN_GENERATOR_H
#define LINNET_LIB_IRGEN_GENERATOR_H

#include "linnet/IRGen/IRGen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringMap.h"

namespace linnet::irgen {

/// A value during generation: a tensor (rank 0 for scalars) or one of the
/// compile-time values a body names.
struct GenValue {
  enum Kind {
    Invalid,
    Tensor,     ///< tensor, dims, element
    Tuple,      ///< elements
    Size,       ///< size (entry-level sizes)
    Element,    ///< element
    SizeList,   ///< dims
    Block,      ///< block, path, generics
    BlockArray, ///< block, path, generics, count
    Number,     ///< a float literal (weak): number
    Bool,       ///< a bool literal: number 0 or 1
  } kind = Invalid;

  mlir::Value tensor;
  DimList dims;
  ElementType element = ElementType::F32;
  ShapeExpr size;
  std::vector<GenValue> elements;
  const BlockDecl *block = nullptr;
  std::string path;
  Substitution generics;
  int64_t count = 0;
  double number = 0;

  static GenValue ofTensor(mlir::Value tensor, DimList dims,
                           ElementType element) {
    GenValue value;
    value.kind = Tensor;
    value.tensor = tensor;
    value.dims = std::move(dims);
    value.element = element;
    return value;
  }
  static GenValue ofSize(ShapeExpr size) {
    GenValue value;
    value.kind = Size;
    value.size = std::move(size);
    return value;
  }
  static GenValue tuple(std::vector<GenValue> elements) {
    GenValue value;
    value.kind = Tuple;
    value.elements = std::move(elements);
    return value;
  }
  bool isTensor() const { return kind == Tensor; }
  unsigned rank() const { return unsigned(dims.size()); }
};

/// One inlined call: the function, where its block sits in the model, and
/// its generics in the entry's terms.
struct Frame {
  const BlockDecl *block = nullptr;
  const CheckedFunction *function = nullptr;
  std::string path; ///< `groups.0.full.self_attn`; empty for the root
  Substitution generics;
  std::vector<llvm::StringMap<GenValue>> scopes;
  mlir::LocationAttr caller; ///< the call site, null in the entry itself
};

/// How an index expression `x[i, ...]` addresses each axis of `x`.
struct IndexPlan {
  struct Axis {
    enum Kind { Range, Point, Gather } kind = Range;
    mlir::OpFoldResult offset; ///< Range, Point
    mlir::OpFoldResult size;   ///< Range
    GenValue indices;          ///< Gather: a 1-D integer tensor
  };
  std::vector<Axis> axes;
  /// Where the gathered axis sits in the indexed value: at the first
  /// gathered axis when gathered axes are adjacent, else in front (numpy).
  unsigned gatherPosition = 0;
  bool gathers = false;
};

/// Thrown nowhere: generation stops at the first problem, reported through
/// DiagnosticEngine, and returns Invalid values upward.
class Generator {
public:
  Generator(mlir::MLIRContext &context, const Program &program,
            const CheckedProgram &checked, const BoundModel &model,
            llvm::ArrayRef<ModelParameter> parameters, DiagnosticEngine &diags);

  /// Adds the function of `entry` to `module`; false after a report.
  bool generateEntry(const FnDecl &entry, mlir::ModuleOp module);

  // Shared with GenOperations.cpp.
  mlir::OpBuilder builder;
  mlir::Location loc(llvm::SMRange range);
  mlir::Type mlirElement(ElementType element);
  ElementType elementOf(mlir::Type type);
  mlir::RankedTensorType tensorType(const DimList &dims, ElementType element);
  /// An index value for an entry-level size.
  mlir::Value indexValue(const ShapeExpr &size, mlir::Location loc);
  mlir::OpFoldResult foldedIndex(const ShapeExpr &size, mlir::Location loc);
  llvm::SmallVector<mlir::Value> dynamicSizes(const DimList &dims,
                                              mlir::Location loc);
  mlir::Value emptyTensor(const DimList &dims, ElementType element,
                          mlir::Location loc);
  mlir::Value filledTensor(const DimList &dims, ElementType element,
                           double value, mlir::Location loc);
  /// Emits the check that every one of `ids` (an i32 tensor) lies in
  /// [0, bound): a min/max reduction, and where one falls outside, a call
  /// of the runtime's `linnet_index_out_of_range` with the op's location,
  /// the index and the bound (RuntimeCalls.h). The reads themselves stay
  /// clamped, so the code runs to its end and the runtime reports.
  void checkIndices(mlir::Value ids, mlir::Value bound, llvm::StringRef op,
                    mlir::Location at);
  /// A scalar of `element` for a literal, a size or a rank-0 tensor.
  mlir::Value scalarOf(const GenValue &value, ElementType element,
                       mlir::Location loc);
  /// A tensor for a value that may be a literal or a size (rank 0).
  GenValue asTensor(const GenValue &value, ElementType element,
                    mlir::Location loc);
  mlir::Value convertScalar(mlir::Value value, ElementType from, ElementType to,
                            mlir::Location loc);

  /// The annotated type of `expr` in the entry's terms.
  ValueType typeOf(const ast::Expr &expr);
  ElementType resolveElement(const ElementRef &element);
  DimList resolveDims(const DimList &dims);
  ShapeExpr resolveSize(const ShapeExpr &size);

  GenValue generate(const ast::Expr &expr);
  GenValue builtin(const CallResolution &resolution, const ast::CallExpr &call,
                   const ast::Expr &expr);
  GenValue binary(const ast::BinaryExpr &binary);
  GenValue unary(const ast::UnaryExpr &unary);
  /// How `indices` address `base`'s axes; reports and returns nullopt for
  /// what is not supported.
  std::optional<IndexPlan> planIndex(const GenValue &base,
                                     const std::vector<ast::Index> &indices,
                                     llvm::SMRange range);
  /// `destination` with `value` written at `indices` (a state write).
  GenValue scatter(const GenValue &destination,
                   const std::vector<ast::Index> &indices,
                   const GenValue &value, llvm::SMRange range);

  /// Elementwise map of `operands` (tensors broadcast to `dims`, scalars
  /// captured) into a tensor of `dims` and `element`.
  using ElementBody = llvm::function_ref<mlir::Value(
      mlir::OpBuilder &, mlir::Location, llvm::ArrayRef<mlir::Value>)>;
  mlir::Value elementwise(llvm::ArrayRef<GenValue> operands,
                          llvm::ArrayRef<ElementType> computeIn,
                          const DimList &dims, ElementType element,
                          mlir::Location loc, ElementBody body);
  mlir::Value reshape(const GenValue &value, const DimList &dims,
                      mlir::Location loc);
  mlir::Value transpose(const GenValue &value,
                        llvm::ArrayRef<int64_t> permutation,
                        mlir::Location loc);

  bool fail(llvm::SMRange range, const std::string &what,
            const std::string &why);
  bool failed = false;

  mlir::MLIRContext &context;
  const Program &program;
  const CheckedProgram &checked;
  const BoundModel &model;
  DiagnosticEngine &diags;
  llvm::StringMap<unsigned> parameterIndex;
  llvm::ArrayRef<ModelParameter> parameters;
  std::vector<ModelParameter> states;

  /// What is being generated into one MLIR function: an entry, or a block
  /// function outlined so that every layer calls the same code.
  struct FunctionState {
    std::vector<Frame> frames;
    /// Parameters by path relative to the function's block instance, and
    /// the function arguments that carry them.
    llvm::StringMap<unsigned> parameterIndex;
    llvm::SmallVector<const ModelParameter *> parameterDecls;
    llvm::SmallVector<std::string> parameterPaths; ///< relative, as indexed
    llvm::SmallVector<mlir::Value> parameterArguments;
    /// State members by path, and their values so far in the function (the
    /// argument, then what each write made of it).
    llvm::StringMap<unsigned> stateIndex;
    llvm::SmallVector<const ModelParameter *> stateDecls;
    llvm::SmallVector<std::string> statePaths; ///< relative, as indexed
    std::vector<GenValue> stateValues;
    /// The function's own sizes (`B`, `S`) as index values.
    std::map<std::string, mlir::Value> entrySizes;
    std::map<std::string, mlir::Value> indexCache;
  };
  FunctionState current;
  Frame &frame() { return current.frames.back(); }
  mlir::ModuleOp module;
  /// Index checks emitted so far (each names its string constant).
  unsigned indexSites = 0;
  /// Outlined functions by block instance and function name.
  std::map<std::string, mlir::func::FuncOp> outlined;

private:
  GenValue generateNode(const ast::IntegerLiteral &literal,
                        const ast::Expr &expr);
  GenValue generateNode(const ast::FloatLiteral &literal,
                        const ast::Expr &expr);
  GenValue generateNode(const ast::BoolLiteral &literal, const ast::Expr &expr);
  GenValue generateNode(const ast::Identifier &name, const ast::Expr &expr);
  GenValue generateNode(const ast::UnaryExpr &unary, const ast::Expr &expr);
  GenValue generateNode(const ast::BinaryExpr &binary, const ast::Expr &expr);
  GenValue generateNode(const ast::CallExpr &call, const ast::Expr &expr);
  GenValue generateNode(const ast::MemberExpr &member, const ast::Expr &expr);
  GenValue generateNode(const ast::IndexExpr &index, const ast::Expr &expr);
  GenValue generateNode(const ast::TupleExpr &tuple, const ast::Expr &expr);
  GenValue generateNode(const ast::ListExpr &list, const ast::Expr &expr);

  GenValue resolveName(const ast::Identifier &name);
  GenValue memberOf(const GenValue &block, const std::string &name,
                    llvm::SMRange range);
  GenValue call(const ast::CallExpr &call, const ast::Expr &expr);
  /// Runs `function`'s body in a new frame; returns what it returns.
  GenValue inlineCall(const BlockDecl &block, const FnDecl &fn,
                      const std::string &path, Substitution generics,
                      std::vector<GenValue> arguments, llvm::SMRange at);
  /// Calls `fn` of the sub-block at `path` as a function of its own,
  /// generated once per block instance; nullopt when it cannot be (then it
  /// is inlined).
  std::optional<GenValue> outlinedCall(const BlockDecl &block, const FnDecl &fn,
                                       const std::string &path,
                                       const Substitution &generics,
                                       std::vector<GenValue> arguments,
                                       llvm::SMRange at);
  /// Binds the function's own sizes to the dimensions of its arguments.
  void bindArgumentSizes(llvm::ArrayRef<ValueType> types,
                         llvm::ArrayRef<mlir::Value> arguments,
                         llvm::ArrayRef<llvm::SMRange> locations);
  bool body(const ast::Body &body, GenValue &result, bool &returned);
  void bindPattern(const ast::Pattern &pattern, const GenValue &value);
  Substitution composeGenerics(const Substitution &inCaller);
  void addQuotients(Frame &frame);
};

/// A zero of `type`, an integer or float type.
mlir::TypedAttr scalarAttrOrZero(mlir::OpBuilder &builder, mlir::Type type);

} // namespace linnet::irgen

#endif // LINNET_LIB_IRGEN_GENERATOR_H
