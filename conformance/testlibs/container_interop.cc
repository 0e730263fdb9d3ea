// Containers handled by C++ code built on upstream's own headers (the
// container classes there are header-only: they read and change a map, dict
// or list in place, in the layout the headers define). The conformance
// tests (conformance/map_test.c, list_test.c) hand these functions
// containers the runtime under test made, and read back the ones made here,
// so both sides must agree on the layouts, on the dense table's hashing and
// chaining, and on who frees which storage.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace {

namespace ffi = tvm::ffi;

// The key of entry i: an int for even i, a string for odd i (strings of
// both the small and the heap form).
ffi::Any KeyOf(int64_t i) {
  if (i % 2 == 0) return ffi::Any(i);
  return ffi::Any(
      ffi::String(i % 4 == 1 ? "k" + std::to_string(i) : "a-longer-key-" + std::to_string(i)));
}

// Sets KeyOf(i) -> i * 10 for i in [begin, end) in the dict, in place.
void DictInsertRange(ffi::Dict<ffi::Any, ffi::Any> dict, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) dict.Set(KeyOf(i), ffi::Any(i * 10));
}

// Erases KeyOf(i) for i in [begin, end) from the dict, in place.
void DictEraseRange(ffi::Dict<ffi::Any, ffi::Any> dict, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) dict.erase(KeyOf(i));
}

// The number of i in [begin, end) whose KeyOf(i) maps to i * 10 (found
// through the map's own hashing and chains, as C++ looks keys up).
int64_t MapCountRange(ffi::Map<ffi::Any, ffi::Any> map, int64_t begin, int64_t end) {
  int64_t found = 0;
  for (int64_t i = begin; i < end; ++i) {
    auto it = map.find(KeyOf(i));
    if (it != map.end() && (*it).second.cast<int64_t>() == i * 10) ++found;
  }
  return found;
}

// The same for a dict.
int64_t DictCountRange(ffi::Dict<ffi::Any, ffi::Any> dict, int64_t begin, int64_t end) {
  int64_t found = 0;
  for (int64_t i = begin; i < end; ++i) {
    auto value = dict.Get(KeyOf(i));
    if (value.has_value() && value->cast<int64_t>() == i * 10) ++found;
  }
  return found;
}

// The number of i for which the map finds keys[i] mapped to i (through its
// own hashing and chains, for keys of any kind).
int64_t MapCountKeys(ffi::Map<ffi::Any, ffi::Any> map, ffi::Array<ffi::Any> keys) {
  int64_t found = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(keys.size()); ++i) {
    auto it = map.find(keys[i]);
    if (it != map.end() && (*it).second.cast<int64_t>() == i) ++found;
  }
  return found;
}

// The keys of a map in its iteration order.
ffi::Array<ffi::Any> MapKeys(ffi::Map<ffi::Any, ffi::Any> map) {
  ffi::Array<ffi::Any> keys;
  for (const auto& kv : map) keys.push_back(kv.first);
  return keys;
}

// A map made here: KeyOf(i) -> i * 10 for i in [0, n).
ffi::Map<ffi::Any, ffi::Any> MapMakeRange(int64_t n) {
  ffi::Map<ffi::Any, ffi::Any> map;
  for (int64_t i = 0; i < n; ++i) map.Set(KeyOf(i), ffi::Any(i * 10));
  return map;
}

// A dict made here, as MapMakeRange.
ffi::Dict<ffi::Any, ffi::Any> DictMakeRange(int64_t n) {
  ffi::Dict<ffi::Any, ffi::Any> dict;
  for (int64_t i = 0; i < n; ++i) dict.Set(KeyOf(i), ffi::Any(i * 10));
  return dict;
}

// Appends i * 10 for i in [0, n) to the list, in place (growing its buffer).
void ListPushRange(ffi::List<ffi::Any> list, int64_t n) {
  for (int64_t i = 0; i < n; ++i) list.push_back(ffi::Any(i * 10));
}

// A list made here: 0, 10, ..., (n - 1) * 10.
ffi::List<ffi::Any> ListMakeRange(int64_t n) {
  ffi::List<ffi::Any> list;
  for (int64_t i = 0; i < n; ++i) list.push_back(ffi::Any(i * 10));
  return list;
}

// The backtrace of this call, walked across the FFI boundary: it names
// the exported frames of this library that led here.
ffi::String BacktraceHere() {
  const TVMFFIByteArray* text = TVMFFIBacktrace(nullptr, 0, nullptr, 1);
  return ffi::String(text->data, text->size);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(backtrace_here, BacktraceHere);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_insert_range, DictInsertRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_erase_range, DictEraseRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_count_range, MapCountRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_count_keys, MapCountKeys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_count_range, DictCountRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_keys, MapKeys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_make_range, MapMakeRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_make_range, DictMakeRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_push_range, ListPushRange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_make_range, ListMakeRange);
