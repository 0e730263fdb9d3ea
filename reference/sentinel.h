/* The process-wide marker objects behind "ffi.GetInvalidObject" and
 * "ffi.GetKwargsObject". */
#ifndef TFFI_SENTINEL_H_
#define TFFI_SENTINEL_H_

#include <tvm/ffi/c_api.h>

/* The "missing" marker (borrowed: it lives as long as the process), made on
 * first use; NULL with MemoryError raised when it cannot be made. Look-ups
 * that find nothing (ffi.MapGetItemOrMissing) return it. */
TVMFFIObject* tffi_missing_object(void);

/* The keyword-arguments marker, as tffi_missing_object. */
TVMFFIObject* tffi_kwargs_object(void);

#endif
