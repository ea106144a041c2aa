//===- Template.h - A Jinja chat template, parsed and rendered --*- C++ -*-===//
//
// The subset of Jinja that checkpoints' chat templates use, rendered as
// transformers' apply_chat_template renders them (jinja2's sandbox with
// trim_blocks and lstrip_blocks, its `tojson`, `raise_exception` and
// `strftime_now`), so that the prompt linnet feeds a model is the prompt the
// model was trained on, byte for byte.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_TEMPLATE_H
#define LINNET_TEMPLATE_TEMPLATE_H

#include "linnet/Template/Value.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace linnet::tmpl {

struct Node;

class Template {
public:
  /// `source` parsed; errors `fileName:line:col: what [TemplateMalformed]`
  /// (or [TemplateUnsupported] for Jinja linnet does not implement).
  static llvm::Expected<Template> parse(llvm::StringRef source,
                                        llvm::StringRef fileName);

  /// The text the template writes with `variables` defined (besides the
  /// globals). Errors name the line and column: [TemplateRenderFailed], or
  /// [TemplateRaised] for the template's own raise_exception. A render takes
  /// at most `maxSteps` steps (statements, loop iterations, loop filter
  /// tests), so that a hostile template ends.
  llvm::Expected<std::string>
  render(const Dict &variables, uint64_t maxSteps = kDefaultRenderSteps) const;

  /// Real templates take a few steps per message.
  static constexpr uint64_t kDefaultRenderSteps = 5'000'000;

  ~Template();
  Template(Template &&);
  Template &operator=(Template &&);

private:
  Template();
  struct Parsed;
  std::unique_ptr<Parsed> parsed;
};

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_TEMPLATE_H
