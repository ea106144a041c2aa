//===- Session.cpp - State storage, row counts and the script format ------===//
//
// Everything here runs before or after the compiled entries, never inside
// them: the checks a call must pass (so that a rejected call changes
// nothing), the counts it leaves behind, and the storage the entries read
// and write.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Session.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Runtime/RuntimeCalls.h"

#include "linnet/Basic/JSON.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace linnet;
namespace json = llvm::json;

namespace {

struct EntryInfo {
  EntryKind kind;
  llvm::StringRef name;
  /// The arguments after `tokens`, as the script names them.
  llvm::SmallVector<llvm::StringRef, 2> arguments;
};

const EntryInfo &infoOf(EntryKind entry) {
  static const EntryInfo infos[] = {
      {EntryKind::Forward, "forward", {}},
      {EntryKind::NextToken, "next_token", {}},
      {EntryKind::Prefill, "prefill", {"pos"}},
      {EntryKind::Decode, "decode", {"pos"}},
      {EntryKind::DecodeRows, "decode_rows", {"positions"}},
      {EntryKind::PrefillSlots, "prefill_slots", {"slots", "lengths"}},
  };
  return infos[static_cast<int>(entry)];
}

/// `tokens`, `tokens` and `pos`, `tokens`, `slots` and `lengths`.
std::string argumentList(EntryKind entry) {
  llvm::SmallVector<std::string> names = {"`tokens`"};
  for (llvm::StringRef name : infoOf(entry).arguments)
    names.push_back(("`" + name + "`").str());
  if (names.size() == 1)
    return names.front();
  std::string text = llvm::join(llvm::ArrayRef(names).drop_back(), ", ");
  return text + " and " + names.back();
}

/// `a string`, `an array`: what a JSON value is, for messages.
std::string describe(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    if (auto integer = jsonInteger(value))
      return "the integer " + std::to_string(*integer);
    if (double number = *value.getAsNumber(); number == std::trunc(number))
      return "a number outside the 64-bit integers";
    return "a number with a fraction";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

llvm::Error fail(ErrorId id, const llvm::Twine &message) {
  return makeError(id, message);
}

/// One call being parsed: errors carry its index, entry and the field.
struct CallParser {
  size_t index;
  std::string entry; ///< empty until known

  llvm::Error error(llvm::StringRef field, const llvm::Twine &message) const {
    std::string where = "call " + std::to_string(index);
    if (!entry.empty())
      where += " (`" + entry + "`)";
    if (!field.empty())
      where += ", `" + field.str() + "`";
    return fail(ErrorId::ScriptMalformed, where + ": " + message);
  }

  llvm::Expected<int32_t> integer(llvm::StringRef field, const json::Value &v,
                                  const llvm::Twine &what) const {
    std::optional<int64_t> value = jsonInteger(v);
    if (!value)
      return error(field, "expected " + what + ", got " + describe(v));
    if (*value < std::numeric_limits<int32_t>::min() ||
        *value > std::numeric_limits<int32_t>::max())
      return error(field, "the integer " + std::to_string(*value) +
                              " does not fit in i32");
    return int32_t(*value);
  }

  llvm::Error integers(llvm::StringRef field, const json::Value &v,
                       std::vector<int32_t> &out) const {
    const json::Array *array = v.getAsArray();
    if (!array)
      return error(field, "expected an array of integers, got " + describe(v));
    for (size_t i = 0; i < array->size(); ++i) {
      auto value = integer(field, (*array)[i],
                           "an integer at index " + std::to_string(i));
      if (!value)
        return value.takeError();
      out.push_back(*value);
    }
    return llvm::Error::success();
  }

  llvm::Error tokens(const json::Value &v, EntryCall &call) const {
    const json::Array *rows = v.getAsArray();
    if (!rows || rows->empty())
      return error("tokens",
                   "expected rows of token ids like [[1, 2, 3], "
                   "[4, 5, 6]], got " +
                       (rows ? std::string("an empty array") : describe(v)));
    for (size_t r = 0; r < rows->size(); ++r) {
      const json::Array *row = (*rows)[r].getAsArray();
      if (!row || row->empty())
        return error("tokens", "row " + std::to_string(r) +
                                   ": expected a non-empty array of token "
                                   "ids, got " +
                                   (row ? std::string("an empty array")
                                        : describe((*rows)[r])));
      if (r > 0 && int64_t(row->size()) != call.length)
        return error("tokens", "row " + std::to_string(r) + " has " +
                                   std::to_string(row->size()) +
                                   (row->size() == 1 ? " token" : " tokens") +
                                   " but row 0 has " +
                                   std::to_string(call.length) +
                                   "; every row has the same length");
      call.length = int64_t(row->size());
      for (size_t i = 0; i < row->size(); ++i) {
        auto id = integer("tokens", (*row)[i],
                          "a token id at row " + std::to_string(r) +
                              ", position " + std::to_string(i));
        if (!id)
          return id.takeError();
        call.tokens.push_back(*id);
      }
    }
    call.rows = int64_t(rows->size());
    return llvm::Error::success();
  }

  llvm::Expected<EntryCall> parse(const json::Value &value) {
    const json::Object *object = value.getAsObject();
    if (!object)
      return error("", "expected an object like {\"entry\": \"decode\", "
                       "\"tokens\": [[4]], \"pos\": 3}, got " +
                           describe(value));
    const json::Value *entryValue = object->get("entry");
    if (!entryValue)
      return error("entry", "missing; every call names its entry");
    std::optional<llvm::StringRef> name = entryValue->getAsString();
    if (!name)
      return error("entry",
                   "expected the entry's name, got " + describe(*entryValue));
    std::optional<EntryKind> kind = entryNamed(*name);
    if (!kind)
      return error("entry", "`" + *name +
                                "` is not an entry the runtime calls; "
                                "expected forward, next_token, prefill, "
                                "decode, decode_rows or prefill_slots");
    entry = name->str();
    EntryCall call;
    call.entry = *kind;
    const EntryInfo &info = infoOf(*kind);

    // Fields in a stable order, so the first problem reported does not
    // depend on the object's hashing.
    llvm::SmallVector<llvm::StringRef> fields;
    for (const auto &field : *object)
      fields.push_back(field.first);
    llvm::sort(fields);
    for (llvm::StringRef field : fields)
      if (field != "entry" && field != "tokens" &&
          !llvm::is_contained(info.arguments, field))
        return error(field, "`" + entry + "` has no argument `" + field +
                                "`; it takes " + argumentList(*kind));
    llvm::SmallVector<llvm::StringRef, 3> required = {"tokens"};
    required.append(info.arguments.begin(), info.arguments.end());
    for (llvm::StringRef field : required)
      if (!object->get(field))
        return error(field,
                     "missing; `" + entry + "` takes " + argumentList(*kind));

    if (llvm::Error e = tokens(*object->get("tokens"), call))
      return std::move(e);
    switch (*kind) {
    case EntryKind::Prefill:
    case EntryKind::Decode: {
      auto pos = integer("pos", *object->get("pos"), "an integer position");
      if (!pos)
        return pos.takeError();
      call.pos = *pos;
      break;
    }
    case EntryKind::DecodeRows:
      if (llvm::Error e =
              integers("positions", *object->get("positions"), call.positions))
        return std::move(e);
      break;
    case EntryKind::PrefillSlots:
      if (llvm::Error e = integers("slots", *object->get("slots"), call.slots))
        return std::move(e);
      if (llvm::Error e =
              integers("lengths", *object->get("lengths"), call.lengths))
        return std::move(e);
      break;
    case EntryKind::Forward:
    case EntryKind::NextToken:
      break;
    }
    return call;
  }
};

/// `row 1 holds 3 tokens, so it continues at position 3`, and what may
/// restart it instead.
std::string continuation(int64_t row, int64_t count, int64_t position,
                         bool prefill) {
  std::string text =
      "row " + std::to_string(row) + " holds " + std::to_string(count) +
      (count == 1 ? " token" : " tokens") + ", so it continues at position " +
      std::to_string(count) + ", not " + std::to_string(position);
  text += prefill ? " (or restarts at 0)"
                  : "; only `prefill` at 0 or `prefill_slots` restarts a row";
  return text + "; the recurrent state cannot be rewound";
}

} // namespace

llvm::StringRef linnet::entryName(EntryKind entry) {
  return infoOf(entry).name;
}

std::optional<EntryKind> linnet::entryNamed(llvm::StringRef name) {
  for (EntryKind kind :
       {EntryKind::Forward, EntryKind::NextToken, EntryKind::Prefill,
        EntryKind::Decode, EntryKind::DecodeRows, EntryKind::PrefillSlots})
    if (infoOf(kind).name == name)
      return kind;
  return std::nullopt;
}

bool linnet::isStateful(EntryKind entry) {
  return entry != EntryKind::Forward && entry != EntryKind::NextToken;
}

llvm::Expected<std::vector<EntryCall>>
linnet::parseScript(llvm::StringRef text, llvm::StringRef name) {
  llvm::Expected<json::Value> document = parseJSON(text);
  if (!document)
    return fail(ErrorId::ScriptMalformed,
                "`" + name + "` is not valid JSON: " +
                    llvm::toString(document.takeError()));
  const json::Object *root = document->getAsObject();
  const json::Array *calls =
      root && root->get("calls") ? root->get("calls")->getAsArray() : nullptr;
  if (!calls)
    return fail(ErrorId::ScriptMalformed,
                "expected an object with a `calls` array, like {\"calls\": "
                "[{\"entry\": \"forward\", \"tokens\": [[1, 2]]}]}");
  if (calls->empty())
    return fail(ErrorId::ScriptMalformed,
                "`calls` is empty; give at least one call");
  for (const auto &field : *root)
    if (field.first != "calls")
      return fail(ErrorId::ScriptMalformed, "unknown field `" +
                                                field.first.str() +
                                                "`; a script has only `calls`");
  std::vector<EntryCall> result;
  for (size_t i = 0; i < calls->size(); ++i) {
    CallParser parser{i, ""};
    auto call = parser.parse((*calls)[i]);
    if (!call)
      return call.takeError();
    result.push_back(std::move(*call));
  }
  return result;
}

llvm::Expected<SessionSizes>
SessionSizes::of(llvm::ArrayRef<BoundGeneric> generics) {
  SessionSizes sizes;
  bool hasVocab = false, hasMaxSeq = false;
  for (const BoundGeneric &generic : generics) {
    if (generic.kind != GenericKind::Dim)
      continue;
    if (generic.name == "Batch")
      sizes.batch = generic.size;
    else if (generic.name == "MaxSeq")
      (sizes.maxSeq = generic.size), hasMaxSeq = true;
    else if (generic.name == "Vocab")
      (sizes.vocab = generic.size), hasVocab = true;
  }
  if (sizes.batch < 1 || sizes.batch > kMaxSessionSlots)
    return fail(ErrorId::ManifestInvalid, "`Batch` is " +
                                              std::to_string(sizes.batch) +
                                              " slots; a session holds 1 to " +
                                              std::to_string(kMaxSessionSlots));
  if (!hasVocab || !hasMaxSeq)
    return fail(ErrorId::ManifestInvalid,
                "the model has no `" +
                    llvm::Twine(hasVocab ? "MaxSeq" : "Vocab") +
                    "` generic; a session needs `Vocab` and `MaxSeq` (and "
                    "`Batch`, 1 when absent)");
  return sizes;
}

RowCounts::RowCounts(const SessionSizes &sizes)
    : sizes_(sizes), rowCounts(size_t(sizes.batch), 0),
      freeRows(size_t(sizes.batch), false) {}

llvm::Error RowCounts::checkTokens(const EntryCall &call) const {
  // Every id is embedded, padding included, so every id must be in range.
  for (int64_t r = 0; r < call.rows; ++r)
    for (int64_t i = 0; i < call.length; ++i) {
      int32_t id = call.tokens[size_t(r * call.length + i)];
      if (id < 0 || id >= sizes_.vocab)
        return fail(ErrorId::TokenOutOfVocabulary,
                    "`tokens`: token id " + std::to_string(id) + " (row " +
                        std::to_string(r) + ", position " + std::to_string(i) +
                        ") is outside the vocabulary [0, " +
                        std::to_string(sizes_.vocab) + ")");
    }
  llvm::StringRef name = entryName(call.entry);
  bool perSlot = call.entry == EntryKind::Prefill ||
                 call.entry == EntryKind::Decode ||
                 call.entry == EntryKind::DecodeRows;
  if (perSlot && call.rows != sizes_.batch)
    return fail(ErrorId::CallShapeInvalid,
                "`tokens`: " + std::to_string(call.rows) +
                    (call.rows == 1 ? " row" : " rows") + ", but `" + name +
                    "` takes one row per slot (`Batch` = " +
                    std::to_string(sizes_.batch) + ")");
  bool oneToken =
      call.entry == EntryKind::Decode || call.entry == EntryKind::DecodeRows;
  if (oneToken && call.length != 1)
    return fail(ErrorId::CallShapeInvalid,
                "`tokens`: rows of " + std::to_string(call.length) +
                    " tokens, but `" + name + "` takes one token per row");
  if (call.entry == EntryKind::PrefillSlots && call.length > sizes_.maxSeq)
    return fail(ErrorId::CallShapeInvalid,
                "`tokens`: rows of " + std::to_string(call.length) +
                    " tokens do not fit the cache (`MaxSeq` = " +
                    std::to_string(sizes_.maxSeq) + ")");
  return llvm::Error::success();
}

llvm::Error RowCounts::check(const EntryCall &call) const {
  if (llvm::Error e = checkTokens(call))
    return e;
  std::string maxSeq = "(`MaxSeq` = " + std::to_string(sizes_.maxSeq) + ")";
  switch (call.entry) {
  case EntryKind::Forward:
  case EntryKind::NextToken:
    return llvm::Error::success();
  case EntryKind::Prefill:
  case EntryKind::Decode: {
    bool prefill = call.entry == EntryKind::Prefill;
    if (call.pos < 0)
      return fail(ErrorId::CallPositionInvalid, "`pos`: position " +
                                                    std::to_string(call.pos) +
                                                    " is negative");
    int64_t last = int64_t(call.pos) + call.length - 1;
    if (last >= sizes_.maxSeq)
      return fail(ErrorId::CallPositionInvalid,
                  "`pos`: " +
                      (call.length == 1
                           ? "position " + std::to_string(last) + " is"
                           : "positions " + std::to_string(call.pos) + " to " +
                                 std::to_string(last) + " run") +
                      " past the end of the cache " + maxSeq);
    // Only a prefill at 0 restarts rows; a decode at 0 needs fresh rows.
    if (prefill && call.pos == 0)
      return llvm::Error::success();
    for (int64_t b = 0; b < sizes_.batch; ++b)
      if (!freeRows[size_t(b)] && rowCounts[size_t(b)] != call.pos)
        return fail(ErrorId::CallPositionInvalid,
                    "`pos`: " + continuation(b, rowCounts[size_t(b)], call.pos,
                                             prefill));
    return llvm::Error::success();
  }
  case EntryKind::DecodeRows: {
    if (int64_t(call.positions.size()) != sizes_.batch)
      return fail(
          ErrorId::CallShapeInvalid,
          "`positions`: " + std::to_string(call.positions.size()) +
              (call.positions.size() == 1 ? " position" : " positions") +
              ", but `decode_rows` takes one per slot "
              "(`Batch` = " +
              std::to_string(sizes_.batch) + ")");
    for (int64_t b = 0; b < sizes_.batch; ++b) {
      int32_t position = call.positions[size_t(b)];
      if (position < 0)
        return fail(ErrorId::CallPositionInvalid,
                    "`positions`: position " + std::to_string(position) +
                        " (row " + std::to_string(b) + ") is negative");
      if (position >= sizes_.maxSeq)
        return fail(ErrorId::CallPositionInvalid,
                    "`positions`: position " + std::to_string(position) +
                        " (row " + std::to_string(b) +
                        ") is past the end of the cache " + maxSeq);
    }
    for (int64_t b = 0; b < sizes_.batch; ++b)
      if (!freeRows[size_t(b)] &&
          rowCounts[size_t(b)] != call.positions[size_t(b)])
        return fail(ErrorId::CallPositionInvalid,
                    "`positions`: " + continuation(b, rowCounts[size_t(b)],
                                                   call.positions[size_t(b)],
                                                   false));
    return llvm::Error::success();
  }
  case EntryKind::PrefillSlots: {
    for (auto [field, values] :
         {std::pair<llvm::StringRef, const std::vector<int32_t> *>{"slots",
                                                                   &call.slots},
          {"lengths", &call.lengths}})
      if (int64_t(values->size()) != call.rows)
        return fail(ErrorId::CallShapeInvalid,
                    "`" + field + "`: " + std::to_string(values->size()) +
                        (values->size() == 1 ? " value" : " values") + " for " +
                        std::to_string(call.rows) +
                        (call.rows == 1 ? " row" : " rows") +
                        " of `tokens`; give one per row");
    for (int64_t m = 0; m < call.rows; ++m) {
      int32_t slot = call.slots[size_t(m)];
      if (slot < 0 || slot >= sizes_.batch)
        return fail(ErrorId::CallSlotInvalid,
                    "`slots`: slot " + std::to_string(slot) + " (row " +
                        std::to_string(m) + ") is not a slot; they are 0 to " +
                        std::to_string(sizes_.batch - 1) +
                        " (`Batch` = " + std::to_string(sizes_.batch) + ")");
      for (int64_t earlier = 0; earlier < m; ++earlier)
        if (call.slots[size_t(earlier)] == slot)
          return fail(ErrorId::CallSlotInvalid,
                      "`slots`: slot " + std::to_string(slot) +
                          " is named by rows " + std::to_string(earlier) +
                          " and " + std::to_string(m) +
                          "; the slots of one call are distinct");
    }
    for (int64_t m = 0; m < call.rows; ++m) {
      int32_t length = call.lengths[size_t(m)];
      if (length < 1 || length > call.length)
        return fail(ErrorId::CallLengthInvalid,
                    "`lengths`: length " + std::to_string(length) + " (row " +
                        std::to_string(m) + ") is outside [1, " +
                        std::to_string(call.length) +
                        "]; a row holds 1 to S tokens, the rest is padding");
    }
    return llvm::Error::success();
  }
  }
  return llvm::Error::success();
}

void RowCounts::advance(const EntryCall &call) {
  switch (call.entry) {
  case EntryKind::Forward:
  case EntryKind::NextToken:
    return;
  case EntryKind::Prefill:
  case EntryKind::Decode:
    // A prefill at 0 starts every row, free ones too.
    if (call.entry == EntryKind::Prefill && call.pos == 0)
      freeRows.assign(freeRows.size(), false);
    for (size_t b = 0; b < rowCounts.size(); ++b)
      if (!freeRows[b])
        rowCounts[b] = int64_t(call.pos) + call.length;
    return;
  case EntryKind::DecodeRows:
    for (size_t b = 0; b < rowCounts.size(); ++b)
      if (!freeRows[b])
        rowCounts[b] = int64_t(call.positions[b]) + 1;
    return;
  case EntryKind::PrefillSlots:
    for (size_t m = 0; m < call.slots.size(); ++m) {
      rowCounts[size_t(call.slots[m])] = call.lengths[m];
      freeRows[size_t(call.slots[m])] = false;
    }
    return;
  }
}

void RowCounts::reset(int64_t slot) {
  rowCounts[size_t(slot)] = 0;
  freeRows[size_t(slot)] = false;
}

void RowCounts::release(int64_t slot) {
  rowCounts[size_t(slot)] = 0;
  freeRows[size_t(slot)] = true;
}

void RowCounts::restore(int64_t slot, int64_t count) {
  rowCounts[size_t(slot)] = count;
  freeRows[size_t(slot)] = false;
}

uint64_t RowSnapshot::bytes() const {
  uint64_t total = 0;
  for (const std::vector<char> &state : states)
    total += state.size();
  return total;
}

Session::~Session() {
  for (StateBuffer &buffer : buffers)
    if (memory.release)
      memory.release(buffer.data);
    else
      std::free(buffer.data);
}

llvm::Expected<std::unique_ptr<Session>>
Session::create(const SessionSizes &sizes, std::vector<ModelParameter> states,
                StateMemory memory) {
  std::unique_ptr<Session> session(new Session(sizes));
  session->memory = std::move(memory);
  for (ModelParameter &state : states) {
    if (state.shape.empty() || state.shape.front() != sizes.batch)
      return fail(ErrorId::StateUnsupported,
                  "state `" + state.path + "` has type `" + state.typeText() +
                      "`, whose leading dimension is not the slot (`Batch` = " +
                      std::to_string(sizes.batch) + ")");
    StateBuffer buffer;
    // The product of the bound sizes may not fit in 64 bits (`MaxSeq` =
    // 10^18): such a state is as impossible as one that does not fit.
    uint64_t bytes = elementTypeBytes(state.element);
    bool overflows = false;
    for (int64_t dim : state.shape)
      overflows |= __builtin_mul_overflow(bytes, uint64_t(dim), &bytes);
    if (overflows || bytes > (uint64_t(1) << 62))
      return fail(ErrorId::StateAllocationFailed,
                  "state `" + state.path + "` (" + state.typeText() +
                      ") of the session takes more than 2^62 bytes");
    buffer.bytes = bytes;
    // aligned_alloc wants a multiple of the alignment.
    uint64_t allocated = (buffer.bytes + 63) / 64 * 64;
    buffer.data = session->memory.allocate
                      ? session->memory.allocate(allocated)
                      : std::aligned_alloc(64, allocated ? allocated : 64);
    if (!buffer.data)
      return fail(ErrorId::StateAllocationFailed,
                  "cannot allocate " + formatBytes(buffer.bytes) +
                      " for state `" + state.path + "` (" + state.typeText() +
                      ") of the session");
    std::memset(buffer.data, 0, buffer.bytes);
    buffer.state = std::move(state);
    session->buffers.push_back(std::move(buffer));
  }
  return session;
}

void Session::reset(int64_t slot) {
  for (StateBuffer &buffer : buffers) {
    uint64_t rowBytes = buffer.bytes / uint64_t(sizes().batch);
    std::memset(static_cast<char *>(buffer.data) + uint64_t(slot) * rowBytes, 0,
                rowBytes);
  }
  rows.reset(slot);
}

namespace {

/// How a state's row is cut for a snapshot of `count` tokens: `blocks`
/// pieces of `keep` bytes, each `stride` bytes apart (the whole row, one
/// piece, for a state without a context axis).
struct RowCut {
  uint64_t blocks = 1, keep = 0, stride = 0;
};

RowCut cutOf(const StateBuffer &buffer, int64_t batch, int64_t count) {
  const ModelParameter &state = buffer.state;
  uint64_t rowBytes = buffer.bytes / uint64_t(batch);
  if (!state.contextAxis)
    return {1, rowBytes, rowBytes};
  unsigned axis = *state.contextAxis;
  uint64_t inner = elementTypeBytes(state.element);
  for (size_t i = axis + 1; i < state.shape.size(); ++i)
    inner *= uint64_t(state.shape[i]);
  uint64_t stride = inner * uint64_t(state.shape[axis]);
  uint64_t kept = std::min<uint64_t>(uint64_t(count), state.shape[axis]);
  return {rowBytes / stride, inner * kept, stride};
}

} // namespace

RowSnapshot Session::snapshot(int64_t slot) const {
  RowSnapshot snapshot;
  snapshot.count = counts()[size_t(slot)];
  for (const StateBuffer &buffer : buffers) {
    uint64_t rowBytes = buffer.bytes / uint64_t(sizes().batch);
    const char *row =
        static_cast<const char *>(buffer.data) + uint64_t(slot) * rowBytes;
    RowCut cut = cutOf(buffer, sizes().batch, snapshot.count);
    std::vector<char> &kept = snapshot.states.emplace_back();
    kept.reserve(cut.blocks * cut.keep);
    for (uint64_t block = 0; block < cut.blocks; ++block)
      kept.insert(kept.end(), row + block * cut.stride,
                  row + block * cut.stride + cut.keep);
  }
  return snapshot;
}

void Session::restore(int64_t slot, const RowSnapshot &snapshot) {
  // Positions past the count keep what the slot held: nothing reads a
  // cached position before a step writes it.
  for (auto [buffer, kept] : llvm::zip_equal(buffers, snapshot.states)) {
    uint64_t rowBytes = buffer.bytes / uint64_t(sizes().batch);
    char *row = static_cast<char *>(buffer.data) + uint64_t(slot) * rowBytes;
    RowCut cut = cutOf(buffer, sizes().batch, snapshot.count);
    for (uint64_t block = 0; block < cut.blocks; ++block)
      std::memcpy(row + block * cut.stride, kept.data() + block * cut.keep,
                  cut.keep);
  }
  rows.restore(slot, snapshot.count);
}

void Session::copyRow(int64_t from, int64_t to) {
  for (StateBuffer &buffer : buffers) {
    uint64_t rowBytes = buffer.bytes / uint64_t(sizes().batch);
    char *data = static_cast<char *>(buffer.data);
    std::memcpy(data + uint64_t(to) * rowBytes,
                data + uint64_t(from) * rowBytes, rowBytes);
  }
  rows.restore(to, counts()[size_t(from)]);
}

void Session::resetAll() {
  for (int64_t slot = 0; slot < sizes().batch; ++slot)
    reset(slot);
}
