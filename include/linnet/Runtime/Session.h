//===- Session.h - The model's state across entry calls ---------*- C++ -*-===//
//
// The stateful entries (`prefill`, `decode`, `decode_rows`, `prefill_slots`)
// read and write the model's `state` members: KV caches, conv history and
// recurrent state, one row per batch slot. A Session owns that storage for
// one bound model and keeps each row's token count, because a row's
// recurrent state cannot be rewound: a call is checked against the counts
// (and the bound sizes) before it runs, so that a wrong position is an error
// that says so rather than silently wrong logits. The checks and the script
// format need no compiled code, so a whole script is checked before the
// model is compiled.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_SESSION_H
#define LINNET_RUNTIME_SESSION_H

#include "linnet/Model/BoundGeneric.h"
#include "linnet/Model/ModelParameter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// The most state slots (`Batch`) a session holds; every call is checked
/// against every slot's count.
inline constexpr int64_t kMaxSessionSlots = 1 << 16;

/// The entries of a model that the runtime knows how to call.
enum class EntryKind {
  Forward,     ///< `forward(tokens[B, S])`: stateless, logits of every token
  NextToken,   ///< `next_token(tokens[B, S])`: stateless, last token's logits
  Prefill,     ///< `prefill(tokens[Batch, S], pos)`
  Decode,      ///< `decode(token[Batch, 1], pos)`
  DecodeRows,  ///< `decode_rows(tokens[Batch, 1], positions[Batch])`
  PrefillSlots ///< `prefill_slots(tokens[M, S], slots[M], lengths[M])`
};

/// The entry's name in the model (`decode_rows`).
llvm::StringRef entryName(EntryKind entry);
/// The entry called `name`, if the runtime knows it.
std::optional<EntryKind> entryNamed(llvm::StringRef name);
/// Whether the entry reads and writes the model's state.
bool isStateful(EntryKind entry);

/// One call of an entry with its arguments.
struct EntryCall {
  EntryKind entry = EntryKind::Forward;
  int64_t rows = 0;               ///< B, Batch or M
  int64_t length = 0;             ///< S (1 for the decodes)
  std::vector<int32_t> tokens;    ///< [rows, length], row-major
  int32_t pos = 0;                ///< prefill, decode
  std::vector<int32_t> positions; ///< decode_rows: one per row
  std::vector<int32_t> slots;     ///< prefill_slots: one per row
  std::vector<int32_t> lengths;   ///< prefill_slots: one per row
};

/// Parses a script, `{"calls": [{"entry": "prefill", "tokens": [[1, 2]],
/// "pos": 0}, ...]}`: each call names its entry and gives exactly that
/// entry's arguments. Checks the form only (types, fields, rows of equal
/// length); the sizes are RowCounts::check's. The first problem is the
/// error, naming the call (counted from 0) and the field.
llvm::Expected<std::vector<EntryCall>> parseScript(llvm::StringRef text,
                                                   llvm::StringRef name);

/// The bound sizes a call is checked against: the root's generics `Batch`
/// (the state's rows; 1 when the model has none), `MaxSeq` and `Vocab`.
struct SessionSizes {
  int64_t batch = 1;
  int64_t maxSeq = 0;
  int64_t vocab = 0;

  /// The sizes given by bound `generics`; an error names a missing `Vocab`
  /// or `MaxSeq`.
  static llvm::Expected<SessionSizes> of(llvm::ArrayRef<BoundGeneric> generics);
};

/// How many tokens each state row holds, and the rules that keep calls
/// consistent with it (DESIGN.md, "The model's entries"): at position 0 a
/// row starts fresh; at any other position it continues where it stopped;
/// only `prefill` at 0 and `prefill_slots` restart a row that holds tokens.
class RowCounts {
public:
  explicit RowCounts(const SessionSizes &sizes);

  /// Checks `call` against the sizes and the counts. The error says which
  /// field is wrong and how (`` `pos`: … ``), without the call's index.
  llvm::Error check(const EntryCall &call) const;
  /// The counts after `call` (which check accepted) has run.
  void advance(const EntryCall &call);
  /// Row `slot` holds no tokens.
  void reset(int64_t slot);
  /// Row `slot` is free: what it holds is read by no one (a server's slot
  /// between requests), so `decode_rows` and `decode` may step it at any
  /// position in the cache, its count staying 0, until `prefill_slots`
  /// (or `prefill` at 0) starts a sequence there or restore() puts one.
  void release(int64_t slot);
  /// Row `slot` holds `count` tokens put there by a copy of another row's
  /// state (a snapshot): it continues at position `count`.
  void restore(int64_t slot, int64_t count);
  bool isFree(int64_t slot) const { return freeRows[size_t(slot)]; }

  llvm::ArrayRef<int64_t> counts() const { return rowCounts; }
  const SessionSizes &sizes() const { return sizes_; }

private:
  llvm::Error checkTokens(const EntryCall &call) const;

  SessionSizes sizes_;
  std::vector<int64_t> rowCounts;
  std::vector<bool> freeRows;
};

/// A copy of one state row (every state's slot `b`) and its count: a
/// sequence's whole state at a token boundary, which a server keeps to
/// start a later request with the same tokens without prefilling them.
struct RowSnapshot {
  int64_t count = 0;
  /// Each state's row, in the session's order.
  std::vector<std::vector<char>> states;

  uint64_t bytes() const;
};

/// The storage of one `state` member: contiguous, row-major, 64-byte
/// aligned, of `state.element`; row `b` of the leading (`Batch`) dimension
/// belongs to slot `b`.
struct StateBuffer {
  ModelParameter state;
  void *data = nullptr;
  uint64_t bytes = 0;
};

/// Where a session's states live: the heap (both empty), or a device's
/// memory that the host reaches too (a GPU's managed memory).
struct StateMemory {
  std::function<void *(uint64_t bytes)> allocate;
  std::function<void(void *pointer)> release;
};

/// Every state of one bound model, zero-initialised, with each row's count.
/// The entries are called by the code that owns the compiled model: it
/// checks a call here first, passes `states()` (in listStates order) to the
/// entry, which updates them in place, and then calls finish.
class Session {
public:
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Allocates `states` (listStates of a model of `sizes`) in `memory`.
  /// Every state's leading dimension must be the slot (`Batch`); the error
  /// names a state where it is not.
  static llvm::Expected<std::unique_ptr<Session>>
  create(const SessionSizes &sizes, std::vector<ModelParameter> states,
         StateMemory memory = {});

  const SessionSizes &sizes() const { return rows.sizes(); }
  llvm::ArrayRef<int64_t> counts() const { return rows.counts(); }
  llvm::MutableArrayRef<StateBuffer> states() { return buffers; }

  /// Checks `call` before it runs (RowCounts::check).
  llvm::Error check(const EntryCall &call) const { return rows.check(call); }
  /// Records that `call` ran: its rows' counts advance.
  void finish(const EntryCall &call) { rows.advance(call); }

  /// Zeroes slot `slot` of every state and its count.
  void reset(int64_t slot);
  /// Zeroes every slot.
  void resetAll();
  /// Marks slot `slot` free (RowCounts::release).
  void release(int64_t slot) { rows.release(slot); }
  bool isFree(int64_t slot) const { return rows.isFree(slot); }

  /// Slot `slot`'s state and count. The device (if the states are on one)
  /// must be idle.
  RowSnapshot snapshot(int64_t slot) const;
  /// Puts `snapshot` into slot `slot`, which then continues at its count.
  void restore(int64_t slot, const RowSnapshot &snapshot);
  /// Slot `to` becomes a copy of slot `from` (state and count).
  void copyRow(int64_t from, int64_t to);

private:
  explicit Session(const SessionSizes &sizes) : rows(sizes) {}

  RowCounts rows;
  std::vector<StateBuffer> buffers;
  StateMemory memory;
};

} // namespace linnet

#endif // LINNET_RUNTIME_SESSION_H
