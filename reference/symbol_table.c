#include "symbol_table.h"

#include <pthread.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "arg.h"
#include "tffi_error.h"
#include "mem.h"
#include "vec.h"

typedef struct {
  char* name;
  void* ptr;
} TffiSymbolEntry;

typedef struct {
  pthread_mutex_t lock;
  struct {
    TffiSymbolEntry* items;
    size_t n, cap;
  } v;
} TffiSymbolTable;

static TffiSymbolTable tffi_context_symbols = {PTHREAD_MUTEX_INITIALIZER, {NULL, 0, 0}};
static TffiSymbolTable tffi_system_symbols = {PTHREAD_MUTEX_INITIALIZER, {NULL, 0, 0}};

/* Lock held. The entry named `name`, or NULL. */
static TffiSymbolEntry* tffi_table_find(TffiSymbolTable* t, const char* name) {
  for (size_t i = 0; i < t->v.n; ++i)
    if (strcmp(t->v.items[i].name, name) == 0) return &t->v.items[i];
  return NULL;
}

/* Sets name -> ptr, replacing an existing entry when `replace`, else
 * appending (context symbols keep every registration, as upstream). */
static int tffi_table_put(TffiSymbolTable* t, const char* name, void* ptr, int replace) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  TffiSymbolEntry* have = replace ? tffi_table_find(t, name) : NULL;
  if (have != NULL) {
    have->ptr = ptr;
  } else {
    TffiSymbolEntry e = {tffi_strdup(name), ptr};
    if (e.name == NULL || TFFI_VEC_PUSH(&t->v, e) != 0) {
      tffi_free(e.name);
      rc = tffi_raise_oom(strlen(name) + sizeof e);
    }
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

void* tffi_system_symbol(const char* name) {
  pthread_mutex_lock(&tffi_system_symbols.lock);
  TffiSymbolEntry* e = tffi_table_find(&tffi_system_symbols, name);
  void* ptr = e ? e->ptr : NULL;
  pthread_mutex_unlock(&tffi_system_symbols.lock);
  return ptr;
}

int tffi_context_symbols_each(int (*visit)(const char* name, void* ptr, void* data), void* data) {
  int rc = 0;
  pthread_mutex_lock(&tffi_context_symbols.lock);
  for (size_t i = 0; rc == 0 && i < tffi_context_symbols.v.n; ++i)
    rc = visit(tffi_context_symbols.v.items[i].name, tffi_context_symbols.v.items[i].ptr, data);
  pthread_mutex_unlock(&tffi_context_symbols.lock);
  return rc;
}

int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  if (name == NULL) return tffi_arg_null("TVMFFIEnvModRegisterContextSymbol", "name");
  return tffi_table_put(&tffi_context_symbols, name, symbol, 0);
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* ptr) {
  if (name == NULL) return tffi_arg_null("TVMFFIEnvModRegisterSystemLibSymbol", "name");
  return tffi_table_put(&tffi_system_symbols, name, ptr, 1);
}
