/* Comparisons of "ffi.RecursiveEq" and the orderings (recursive_compare.c)
 * that need no walk. */
#ifndef TFFI_RECURSIVE_ORDER_H_
#define TFFI_RECURSIVE_ORDER_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* Decides l against r without looking inside objects: 0 with *out the
 * sign of the order (nonzero for unequal when eq_only), or 1 when they are
 * two different objects of one type index, neither NULL, to walk. Returns
 * -1 with a TypeError raised when the pair cannot be ordered. */
int tffi_cmp_shallow(int eq_only, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out);

#endif
