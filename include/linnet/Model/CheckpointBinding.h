//===- CheckpointBinding.h - How a checkpoint's names bind a model -*- C++
//-*-===//
//
// A model's `checkpoint_binding.json` says how a Hugging Face checkpoint
// binds it: which config fields give the root's generics (`config`, read by
// ConfigRules), and how each Linnet parameter path is named in
// the checkpoint (`parameters`): ordered rename rules with placeholders and
// index expressions, accepted name prefixes, an alternative stacked layout
// for fused tensors, names to ignore, and the layer pattern the config must
// have. The format is documented in the model's README.md; this class reads
// it once and answers the loader's and the writer's questions.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_CHECKPOINTBINDING_H
#define LINNET_MODEL_CHECKPOINTBINDING_H

#include "linnet/Model/ConfigRules.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// The file, next to the root block's module, that maps config fields to
/// generics and parameter paths to checkpoint tensor names.
inline constexpr const char *kCheckpointBindingFile = "checkpoint_binding.json";

/// A dotted name pattern: literal segments, `{x}` (one segment) and `{x*}`
/// (one or more segments).
class NamePattern {
public:
  static llvm::Expected<NamePattern> parse(llvm::StringRef text);
  /// The captures when `name` matches, each as text.
  std::optional<std::map<std::string, std::string>>
  match(llvm::StringRef name) const;
  const std::string &text() const { return source; }

private:
  struct Segment {
    std::string text; ///< literal, or the capture's name
    bool capture = false;
    bool many = false;
  };
  /// Matches segments from `segment` on against the parts from `part` on.
  /// Whether a (segment, part) pair matches does not depend on the
  /// captures, so the pairs that failed are remembered in `failed`: with
  /// several `{x*}` a long name would otherwise take exponential time.
  bool matchFrom(size_t segment, size_t part,
                 llvm::ArrayRef<llvm::StringRef> parts,
                 std::map<std::string, llvm::StringRef> &captures,
                 std::vector<bool> &failed) const;
  std::vector<Segment> segments;
  std::string source;
};

/// Fills a name template: `{name}` is a capture's text, `{4 * g + j}` an
/// integer expression over integer captures (exact; a fraction is an error).
llvm::Expected<std::string>
expandTemplate(llvm::StringRef text,
               const std::map<std::string, std::string> &captures);

/// The longest tensor name a rename may produce: real names are under 200
/// bytes, and rules like `{r*}` -> `{r}.{r}` would otherwise double a name
/// once per rule.
inline constexpr size_t kMaxCheckpointNameBytes = 1024;

class CheckpointBinding {
public:
  /// Reads `path`; every problem names the file and the JSON path.
  static llvm::Expected<CheckpointBinding> load(llvm::StringRef path);
  static llvm::Expected<CheckpointBinding> parse(llvm::StringRef text,
                                                 llvm::StringRef path);

  const std::string &path() const { return file; }

  /// The checkpoint name of a Linnet parameter path, without a prefix. A
  /// name the renames make longer than kMaxCheckpointNameBytes is an error.
  llvm::Expected<std::string> checkpointName(llvm::StringRef linnetPath) const;
  /// `name` as stored under `prefix` (names listed as unprefixed stay).
  std::string withPrefix(llvm::StringRef name, llvm::StringRef prefix) const;
  /// The accepted prefixes, most specific first.
  llvm::ArrayRef<std::string> prefixes() const { return prefixList; }
  /// The prefix a checkpoint uses: the first accepted prefix that some
  /// tensor name (not ignored, not unprefixed) starts with, else the first.
  std::string detectPrefix(llvm::ArrayRef<std::string> tensorNames) const;
  bool isIgnored(llvm::StringRef name) const;
  bool isUnprefixed(llvm::StringRef name) const;

  /// The names of element `index` of a fused tensor's stacked layout (its
  /// parts, concatenated on dimension 0), or nothing when `fusedName` has no
  /// such layout. Names are without a prefix.
  std::optional<std::vector<std::string>>
  stackedPartNames(llvm::StringRef fusedName, int64_t index) const;

  /// Checks the config section's layer pattern, if the binding states one.
  llvm::Error checkLayerTypes(const llvm::json::Object &section,
                              llvm::StringRef where) const;
  /// The layer-type list the pattern gives for `count` layers (empty when the
  /// binding states no pattern).
  std::vector<std::string> layerTypes(int64_t count) const;
  /// The config field that lists layer types, and the one that counts them.
  const std::string &layerTypesField() const { return layerField; }
  const std::string &layerCountField() const { return layerCount; }

  /// The `config` rules: how a config.json gives the generics.
  const ConfigRules &config() const { return configRules; }

private:
  struct Rename {
    NamePattern from;
    std::string to;
  };
  struct Stacked {
    NamePattern fused;
    std::string index;
    std::vector<std::string> parts;
  };
  std::string file;
  ConfigRules configRules;
  std::vector<Rename> renames;
  std::vector<std::string> prefixList;
  std::vector<std::string> unprefixed;
  std::vector<std::string> ignored; ///< glob patterns
  std::vector<Stacked> stacked;
  std::string layerField, layerCount;
  std::vector<std::string> layerPattern;
};

} // namespace linnet

#endif // LINNET_MODEL_CHECKPOINTBINDING_H
