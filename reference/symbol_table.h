/*
 * The two process-wide name -> pointer tables a host fills before loading
 * libraries: system-library symbols (TVMFFIEnvModRegisterSystemLibSymbol,
 * looked up by ffi.SystemLib modules) and context symbols
 * (TVMFFIEnvModRegisterContextSymbol, written into every library loaded).
 */
#ifndef TFFI_SYMBOL_TABLE_H_
#define TFFI_SYMBOL_TABLE_H_

/* The system-library symbol `name`, or NULL. */
void* tffi_system_symbol(const char* name);

/* Calls visit(name, ptr, data) for each context symbol in registration
 * order, under the table's lock, until one returns nonzero; returns that. */
int tffi_context_symbols_each(int (*visit)(const char* name, void* ptr, void* data), void* data);

#endif
