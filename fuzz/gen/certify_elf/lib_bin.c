/* Seed: a well-formed one-module library_bin ("_lib") and a metadata string
 * as data. */
__attribute__((visibility("default"))) const unsigned char __tvm_ffi__library_bin[] = {
    /* nbytes */ 44, 0, 0, 0, 0, 0, 0, 0,
    /* indptr: 2 x u64 */ 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* child_indices: 0 */ 0, 0, 0, 0, 0, 0, 0, 0,
    /* kind "_lib" */ 4, 0, 0, 0, 0, 0, 0, 0, '_', 'l', 'i', 'b'};
__attribute__((visibility("default"))) const char __tvm_ffi__metadata_f[] = "{\"a\": 1";
__attribute__((visibility("default"))) int __tvm_ffi_f(void) { return 0; }
