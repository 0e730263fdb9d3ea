/* Hashing and equality of map keys, exactly as upstream's headers compute
 * them (AnyHash, AnyEqual): a map made here is searched by C++ code built
 * on those headers, and one made there is searched here, so both sides must
 * put a key in the same slot and agree on which keys are the same. */
#ifndef TFFI_ANY_HASH_H_
#define TFFI_ANY_HASH_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* The bytes hash of upstream (StableHashBytes): eight bytes at a time read
 * as a little-endian word, w = (w * 1099511628211 + word) mod (2^31 - 1),
 * the tail zero-padded into one last word. */
uint64_t tffi_hash_bytes(const char* data, size_t size);

/* The hash of a key: strings and bytes by content (a small one hashes as its
 * heap twin), a type with an `__any_hash__` attribute by that, anything
 * else by its type index and its 8 payload bytes. Returns 0, or -1 with the
 * error an `__any_hash__` function raised. */
int tffi_any_hash(const TVMFFIAny* key, uint64_t* out);

/* Whether two keys are the same key: identical 16 bytes, or two strings (or
 * two bytes) with the same content in any form, or equal by the type's
 * `__any_equal__` attribute. Returns 1 or 0, or -1 with the error an
 * `__any_equal__` function raised. */
int tffi_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs);

#endif
