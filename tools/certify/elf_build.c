#include "elf_build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"

int cert_elf_fail(char* err, size_t errlen, const char* fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int symbols_push(CertSymbols* list, size_t* cap, const CertSymbol* sym) {
  if (tffi_vec_reserve(&list->items, cap, list->n + 1, sizeof *list->items) != 0) return -1;
  list->items[list->n++] = *sym;
  return 0;
}

size_t cert_elf_bytes_at(const CertElf* elf, unsigned long long vaddr, size_t max,
                         const unsigned char** bytes) {
  *bytes = NULL;
  for (size_t i = 0; i < elf->n_sections; ++i) {
    const CertSection* s = &elf->sections[i];
    if (vaddr < s->addr || vaddr - s->addr >= s->size) continue;
    size_t into = (size_t)(vaddr - s->addr);
    size_t left = s->size - into;
    *bytes = elf->image + s->offset + into;
    return left < max ? left : max;
  }
  return 0;
}

static int is_exported(const GElf_Sym* sym) {
  int bind = GELF_ST_BIND(sym->st_info);
  int vis = GELF_ST_VISIBILITY(sym->st_other);
  return sym->st_shndx != SHN_UNDEF &&
         (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
         (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

/* One .dynsym entry into exports or imports; locals and hidden ones are
 * neither. */
int cert_elf_add_symbol(CertElf* out, const GElf_Sym* sym, size_t index, const char* name,
                        size_t* cap_exp, size_t* cap_imp) {
  if (name == NULL || name[0] == '\0') return 0;
  int bind = GELF_ST_BIND(sym->st_info);
  int type = GELF_ST_TYPE(sym->st_info);
  int undefined = sym->st_shndx == SHN_UNDEF;
  if (!undefined && !is_exported(sym)) return 0;
  if (undefined && bind == STB_LOCAL) return 0;
  CertSymbol s = {0};
  s.name = strdup(name);
  if (s.name == NULL) return -1;
  s.is_function = type == STT_FUNC || type == STT_GNU_IFUNC;
  s.size = (size_t)sym->st_size;
  s.is_weak = bind == STB_WEAK;
  s.value = sym->st_value;
  s.index = index;
  if (!undefined && sym->st_shndx != SHN_ABS && sym->st_shndx < SHN_LORESERVE) {
    const unsigned char* bytes = NULL;
    size_t n = cert_elf_bytes_at(out, sym->st_value, s.size, &bytes);
    if (bytes != NULL) {
      s.file_offset = (size_t)(bytes - out->image);
      s.file_bytes = n;
    }
  }
  int rc = undefined ? symbols_push(&out->imports, cap_imp, &s)
                     : symbols_push(&out->exports, cap_exp, &s);
  if (rc != 0) free(s.name);
  return rc;
}

int cert_elf_add_needed(CertElf* out, size_t* cap, const char* name) {
  if (tffi_vec_reserve(&out->needed, cap, out->n_needed + 1, sizeof *out->needed) != 0) return -1;
  char* copy = strdup(name);
  if (copy == NULL) return -1;
  out->needed[out->n_needed++] = copy;
  return 0;
}

/* A string-valued dynamic entry, kept once (the first one wins, as ld.so's). */
int cert_elf_keep_string(char** slot, const char* value) {
  if (*slot != NULL) return 0;
  *slot = strdup(value);
  return *slot == NULL ? -1 : 0;
}

/* A library that asks for immediate binding has every import looked up at
 * load, whatever host loads it. */
void cert_elf_note_bind_now(CertElf* out, const GElf_Dyn* dyn) {
  if (dyn->d_tag == DT_BIND_NOW) out->bind_now = 1;
  if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_BIND_NOW)) out->bind_now = 1;
  if (dyn->d_tag == DT_FLAGS_1 && (dyn->d_un.d_val & DF_1_NOW)) out->bind_now = 1;
}
