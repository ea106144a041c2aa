//===- ModelRun.h - Running a compiled model on a checkpoint -----*- C++
//-*-===//
//
// What `linnet run` does once the model is compiled, and what a binary made
// by `linnet build` does: one stateless entry on token rows (`--tokens`), a
// script of entry calls against one session (`--script`), or greedy
// generation (`--prompt-tokens --generate`). It needs only the model's
// manifest and a way to call an entry with packed arguments, so the JIT and
// the ahead-of-time object run through the same code. A run is prepared
// (inputs parsed and checked, checkpoint loaded, states allocated) before
// any code is generated, so that a mistake costs no compile time.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_MODELRUN_H
#define LINNET_RUNTIME_MODELRUN_H

#include "linnet/Runtime/ChatConversation.h"
#include "linnet/Runtime/CudaDevice.h"
#include "linnet/Runtime/GenerationConfig.h"
#include "linnet/Runtime/ModelManifest.h"
#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Runtime/RuntimeCalls.h"
#include "linnet/Runtime/Sampler.h"
#include "linnet/Runtime/Session.h"
#include "linnet/Text/Tokenizer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// Finds entry `name`'s packed wrapper in the compiled model (the JIT's, or
/// a built binary's table).
using PackedEntryLookup =
    std::function<llvm::Expected<PackedEntry>(llvm::StringRef name)>;

/// `checkpoint/config.json`, or an error saying it does not exist: the
/// first thing `linnet run` and a built binary check.
llvm::Expected<std::string> checkpointConfig(llvm::StringRef checkpoint);

/// The options `linnet run` and a built binary share.
struct RunOptions {
  /// The checkpoint's folder; empty with `randomWeights`.
  std::string checkpoint;
  /// Draw the parameters from this seed (RandomWeights) instead.
  std::optional<uint64_t> randomWeights;
  std::optional<std::string> entry; ///< with --tokens; `forward` if absent
  std::optional<std::string> tokens, script, prompt;
  /// `--prompt TEXT` (or the text of `--prompt-file`): generation from a
  /// text, encoded with `tokenizer`'s tokenizer.json (default: the
  /// checkpoint's), printed as text as it is generated.
  std::optional<std::string> promptText;
  /// `--chat FILE` (a JSON chat whose reply is generated) or `--chat -`
  /// (a conversation on standard input, one user message per line).
  std::optional<std::string> chat;
  /// `--system`: the first message of a `--chat -` conversation.
  std::optional<std::string> systemMessage;
  /// `--thinking on|off`: the chat template's `enable_thinking`.
  std::optional<bool> thinking;
  /// `--chat-template FILE`, instead of the tokenizer folder's.
  std::string chatTemplate;
  /// The folder of the tokenizer, generation_config.json and chat template
  /// (default: the checkpoint).
  std::string tokenizer;
  /// `--transcript FILE`: each reply's ids, one JSON object per line.
  std::string transcript;
  /// The most tokens generated (per reply, with a chat).
  std::optional<unsigned> generate;
  /// The sampling options given; the rest are generation_config.json's
  /// (with a text or a chat) or greedy.
  SamplingOverrides sampling;
  /// --stop: the generated text ends before the first of these.
  std::vector<std::string> stopStrings;
  std::string out;
  unsigned top = 5;
  bool timings = false;
  /// Check that the checkpoint's config.json agrees with the manifest's
  /// generics (a built binary; `linnet run` binds from that config).
  bool checkConfig = false;
  /// Run on a GPU (the CUDA target's plan, not emulated): the device it
  /// needs. The memory it must have is worked out by prepare.
  std::optional<CudaRequirements> gpu;
  /// Prefixes the --timings lines (`linnet run`).
  std::string tool = "linnet run";
  /// Serve requests (`linnet serve`, a built binary's --serve): load the
  /// tokenizer, generation_config.json and the chat template, and let the
  /// server call `prefill_slots` and `decode_rows` on the session.
  bool serve = false;

  /// Checks that exactly one mode and one source of weights is asked for,
  /// with their companions.
  llvm::Error validate() const;
};

/// What one reply of --generate was.
struct GeneratedReply {
  std::vector<int32_t> ids;
  /// Its text as printed (before a stop string); with a tokenizer.
  std::string text;
  /// Why it ended: `stop` (an end-of-sequence id or a stop string) or
  /// `length` (the most tokens, or the cache's end), as OpenAI says.
  bool stopped = false;
  /// The ids fed before it and where they went.
  size_t fedCount = 0;
  int64_t position = 0;
  /// Generated ids with no text in the tokenizer (a padded vocabulary).
  unsigned untokened = 0;
  double prefillSeconds = 0, decodeSeconds = 0;
};

class ModelRun {
public:
  ~ModelRun();

  /// Parses and checks the inputs against `manifest`, loads the checkpoint
  /// and allocates the session's states. Nothing is called yet.
  static llvm::Expected<std::unique_ptr<ModelRun>>
  prepare(const ModelManifest &manifest, const RunOptions &options);

  /// The entries the run calls, in the order of first use: what must be
  /// compiled.
  const std::vector<std::string> &entries() const { return usedEntries; }
  double loadSeconds() const { return loadTime; }

  /// Runs the calls through `call`, writing the outputs the options ask for
  /// (`.npy` files, or the top tokens or generated ids on standard output).
  llvm::Error execute(const PackedEntryLookup &call);

  /// One call of a stateful entry on the session (checked against its
  /// counts first), for a server's scheduler: the logits as f32 in `logits`,
  /// their shape in `shape`.
  llvm::Error call(const PackedEntryLookup &packed, const EntryCall &call,
                   std::vector<int64_t> &shape, std::vector<float> &logits) {
    return callEntry(packed, call, shape, logits);
  }
  Session &states() { return *session; }
  const ModelManifest &modelManifest() const { return *manifest; }
  /// With a text, a chat or --serve: what generation reads.
  const Tokenizer *textTokenizer() const { return tokenizer.get(); }
  const GenerationConfig &generationDefaults() const {
    return generationConfig;
  }
  /// With --serve: the chat template, or null, with the reason in
  /// chatTemplateProblem().
  const tmpl::ChatTemplate *chatTemplateOrNull() const {
    return chatTemplate.get();
  }
  const std::string &chatTemplateProblem() const { return missingTemplate; }

private:
  ModelRun() = default;
  llvm::Error callEntry(const PackedEntryLookup &packed, const EntryCall &call,
                        std::vector<int64_t> &shape,
                        std::vector<float> &logits);
  llvm::Error runTokens(const PackedEntryLookup &call);
  llvm::Error runScript(const PackedEntryLookup &call);
  llvm::Error runGeneration(const PackedEntryLookup &call);
  llvm::Error runChat(const PackedEntryLookup &call);
  /// Loads what generation needs (tokenizer, generation_config.json, chat
  /// template) and checks the first turn's ids against the sizes.
  llvm::Error prepareGeneration(const SessionSizes &sizes);
  /// Loads what a server needs: the tokenizer, generation_config.json and
  /// the chat template (whose absence only the chat endpoint reports).
  llvm::Error prepareServing();
  /// The tokenizer and generation_config.json of `folder`; `option` starts
  /// the errors.
  llvm::Error loadText(llvm::StringRef folder, llvm::StringRef option);
  /// The tokenizer's `ids` are all below `Vocab`.
  llvm::Error checkVocabulary(llvm::ArrayRef<int32_t> ids,
                              llvm::StringRef option) const;
  /// `prefill` of `ids` at `pos` on every slot.
  EntryCall prefillCall(llvm::ArrayRef<int32_t> ids, int32_t pos) const;
  /// The notes and --timings line of a reply.
  void reportReply(const GeneratedReply &reply, unsigned turn) const;
  /// Generates a reply to `ids`, fed after the state's tokens (or from
  /// position 0, `fromStart`), streaming its text with a tokenizer.
  /// `turn` numbers the replies of a chat (0: not a chat).
  llvm::Expected<GeneratedReply> generateReply(const PackedEntryLookup &call,
                                               llvm::ArrayRef<int32_t> ids,
                                               bool fromStart, unsigned turn);
  /// Binds the checkpoint and puts each parameter where the entries read
  /// it: in place on the CPU, copied to the device's memory on a GPU.
  llvm::Error loadCheckpoint();
  /// Fills each parameter from `options.randomWeights`, on the CPU in its
  /// own buffer, on a GPU through a bounded host buffer.
  llvm::Error drawParameters();
  /// The next parameter's place (of `bytes`) in the device's parameter
  /// arena, allocated whole at the first call; in the manifest's order.
  llvm::Expected<void *> placeOnDevice(uint64_t bytes);

  /// Declared first, so that it outlives every buffer on it.
  std::unique_ptr<CudaDevice> device;
  /// Each parameter's data where the entries read it (the manifest's
  /// order): the host's, or the device's copy in the arena.
  std::vector<void *> parameterData;
  /// With a device: one allocation holding every parameter.
  void *parameterArena = nullptr;
  uint64_t arenaUsed = 0;
  /// Random weights drawn on the host (the CPU).
  std::vector<std::unique_ptr<uint64_t[]>> drawnParameters;
  const ModelManifest *manifest = nullptr;
  RunOptions options;
  std::unique_ptr<ParameterStore> store;
  std::unique_ptr<Session> session;
  std::vector<EntryCall> calls; ///< --tokens and --script
  /// --generate: the ids of the first (or only) turn.
  std::vector<int32_t> promptIds;
  /// With a text or a chat: the tokenizer, generation_config.json (the ids
  /// that end a reply, the sampling) and the chat.
  std::unique_ptr<Tokenizer> tokenizer;
  GenerationConfig generationConfig;
  std::unique_ptr<tmpl::ChatTemplate> chatTemplate;
  std::string missingTemplate;
  std::unique_ptr<ChatConversation> conversation;
  std::optional<Sampler> sampler;
  /// The ids state row 0 holds (every row runs the same tokens), and the
  /// last reply's last id when the state has yet to read it (a reply that
  /// ended on an end-of-sequence id leaves none: the template closes it).
  std::vector<int32_t> fed;
  std::optional<int32_t> pending;
  std::unique_ptr<llvm::raw_fd_ostream> transcript;
  std::vector<std::string> usedEntries;
  double loadTime = 0;
};

/// Sets `options.promptText` from `--prompt` (`text`, when given on the
/// command line) or `--prompt-file` (`file`, when not empty); both is an
/// error, as is a file that cannot be read.
llvm::Error setPromptText(RunOptions &options,
                          const llvm::cl::opt<std::string> &text,
                          llvm::StringRef file);

/// Parses `1,2,3;4,5,6` into rows of ids in [0, vocab); the messages start
/// with `option`.
llvm::Expected<std::vector<std::vector<int32_t>>>
parseTokenRows(llvm::StringRef option, llvm::StringRef text, int64_t vocab);
/// The ids of the `count` largest of `row`'s `width` logits, largest first,
/// ties to the lower id, NaN after every number (a total order).
std::vector<int64_t> largestLogits(const float *row, int64_t width,
                                   size_t count);

/// Element `i` of `data` (f32, bf16 or f16) as a float.
float elementToFloat(const void *data, ElementType element, int64_t i);
/// Writes a NumPy .npy file (format 1.0) of float32 in C order.
llvm::Error writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<float> values);

} // namespace linnet

#endif // LINNET_RUNTIME_MODELRUN_H
