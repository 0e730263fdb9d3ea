/* The ELF facts of a library file, read with elfutils' libelf from a
 * private copy of the file. libelf checks every section's extent against
 * the image; what it cannot know (a string table that is not terminated, a
 * symbol whose size runs past its section, counts that would be absurd) is
 * checked here. Nothing a file holds makes this code abort. */
#include "elf_facts.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* No library certify meets is bigger; refusing larger files bounds memory. */
#define CERT_ELF_MAX_FILE ((size_t)1 << 31)
#define CERT_TVM_FFI_PREFIX "__tvm_ffi_"
#define CERT_TVM_FFI_RESERVED "__tvm_ffi__"

static int cert_fail(char* err, size_t errlen, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cert_fail(char* err, size_t errlen, const char* fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int cert_symbols_push(CertSymbols* list, size_t* cap, const CertSymbol* sym) {
  if (list->n == *cap) {
    size_t grown_cap = *cap ? *cap * 2 : 16;
    CertSymbol* grown = realloc(list->items, grown_cap * sizeof *grown);
    if (grown == NULL) return -1;
    list->items = grown;
    *cap = grown_cap;
  }
  list->items[list->n++] = *sym;
  return 0;
}

static void cert_symbols_free(CertSymbols* list) {
  for (size_t i = 0; i < list->n; ++i) free(list->items[i].name);
  free(list->items);
  list->items = NULL;
  list->n = 0;
}

/* Allocated sections with contents, for mapping addresses to file bytes. */
static int cert_read_sections(Elf* elf, CertElf* out) {
  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0) return -1;
  if (shnum > out->image_size / sizeof(Elf32_Shdr) + 1) return -1;
  out->sections = calloc(shnum ? shnum : 1, sizeof *out->sections);
  if (out->sections == NULL) return -1;
  for (Elf_Scn* scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == NULL) continue;
    if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0) continue;
    if (sh.sh_offset > out->image_size || sh.sh_size > out->image_size - sh.sh_offset) continue;
    if (out->n_sections >= shnum) break;
    CertSection* s = &out->sections[out->n_sections++];
    s->addr = sh.sh_addr;
    s->offset = (size_t)sh.sh_offset;
    s->size = (size_t)sh.sh_size;
  }
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

static int cert_is_exported(const GElf_Sym* sym) {
  int bind = GELF_ST_BIND(sym->st_info);
  int vis = GELF_ST_VISIBILITY(sym->st_other);
  return sym->st_shndx != SHN_UNDEF &&
         (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
         (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

/* One .dynsym entry into exports or imports; locals and hidden ones are
 * neither. */
static int cert_add_symbol(CertElf* out, const GElf_Sym* sym, size_t index, const char* name,
                           size_t* cap_exp, size_t* cap_imp) {
  if (name == NULL || name[0] == '\0') return 0;
  int bind = GELF_ST_BIND(sym->st_info);
  int type = GELF_ST_TYPE(sym->st_info);
  int undefined = sym->st_shndx == SHN_UNDEF;
  if (!undefined && !cert_is_exported(sym)) return 0;
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
  int rc = undefined ? cert_symbols_push(&out->imports, cap_imp, &s)
                     : cert_symbols_push(&out->exports, cap_exp, &s);
  if (rc != 0) free(s.name);
  return rc;
}

static Elf_Scn* cert_find_section(Elf* elf, Elf64_Word type, GElf_Shdr* sh) {
  for (Elf_Scn* scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    if (gelf_getshdr(scn, sh) != NULL && sh->sh_type == type) return scn;
  }
  return NULL;
}

/* Returns the section's data when it has real file contents, else NULL. */
static Elf_Data* cert_section_data(Elf_Scn* scn, const GElf_Shdr* sh) {
  if (sh->sh_type == SHT_NOBITS) return NULL;
  Elf_Data* data = elf_getdata(scn, NULL);
  if (data == NULL || data->d_buf == NULL) return NULL;
  return data;
}

static int cert_read_dynsym(Elf* elf, CertElf* out, char* err, size_t errlen) {
  GElf_Shdr sh;
  Elf_Scn* scn = cert_find_section(elf, SHT_DYNSYM, &sh);
  if (scn == NULL) return 0; /* a file with no dynamic symbols exports nothing */
  Elf_Data* data = cert_section_data(scn, &sh);
  if (data == NULL) return cert_fail(err, errlen, ".dynsym has no contents: %s", elf_errmsg(-1));
  size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return cert_fail(err, errlen, "unknown ELF class");
  size_t count = data->d_size / entsize;
  size_t cap_exp = 0, cap_imp = 0;
  for (size_t i = 1; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, (int)i, &sym) == NULL) break;
    /* elf_strptr refuses offsets outside the table and unterminated strings. */
    const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (cert_add_symbol(out, &sym, i, name, &cap_exp, &cap_imp) != 0)
      return cert_fail(err, errlen, "out of memory reading .dynsym");
  }
  return 0;
}

static int cert_push_needed(CertElf* out, size_t* cap, const char* name) {
  if (out->n_needed == *cap) {
    size_t grown_cap = *cap ? *cap * 2 : 8;
    char** grown = realloc(out->needed, grown_cap * sizeof *grown);
    if (grown == NULL) return -1;
    out->needed = grown;
    *cap = grown_cap;
  }
  char* copy = strdup(name);
  if (copy == NULL) return -1;
  out->needed[out->n_needed++] = copy;
  return 0;
}

/* A string-valued dynamic entry, kept once (the first one wins, as ld.so's). */
static int cert_keep_string(char** slot, const char* value) {
  if (*slot != NULL) return 0;
  *slot = strdup(value);
  return *slot == NULL ? -1 : 0;
}

/* A library that asks for immediate binding has every import looked up at
 * load, whatever host loads it. */
static void cert_note_bind_now(CertElf* out, const GElf_Dyn* dyn) {
  if (dyn->d_tag == DT_BIND_NOW) out->bind_now = 1;
  if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_BIND_NOW)) out->bind_now = 1;
  if (dyn->d_tag == DT_FLAGS_1 && (dyn->d_un.d_val & DF_1_NOW)) out->bind_now = 1;
}

static int cert_read_dynamic(Elf* elf, CertElf* out, char* err, size_t errlen) {
  GElf_Shdr sh;
  Elf_Scn* scn = cert_find_section(elf, SHT_DYNAMIC, &sh);
  if (scn == NULL) return 0;
  Elf_Data* data = cert_section_data(scn, &sh);
  if (data == NULL) return cert_fail(err, errlen, ".dynamic has no contents: %s", elf_errmsg(-1));
  size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
  if (entsize == 0) return cert_fail(err, errlen, "unknown ELF class");
  size_t count = data->d_size / entsize, cap = 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(data, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL) break;
    cert_note_bind_now(out, &dyn);
    if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH &&
        dyn.d_tag != DT_SONAME)
      continue;
    const char* value = elf_strptr(elf, sh.sh_link, (size_t)dyn.d_un.d_val);
    if (value == NULL) continue; /* an entry whose string is not in the table says nothing */
    int rc = 0;
    if (dyn.d_tag == DT_NEEDED) rc = cert_push_needed(out, &cap, value);
    if (dyn.d_tag == DT_RPATH) rc = cert_keep_string(&out->rpath, value);
    if (dyn.d_tag == DT_RUNPATH) rc = cert_keep_string(&out->runpath, value);
    if (dyn.d_tag == DT_SONAME) rc = cert_keep_string(&out->soname, value);
    if (rc != 0) return cert_fail(err, errlen, "out of memory reading .dynamic");
  }
  return 0;
}

static int cert_is_relative(int machine, unsigned type) {
  switch (machine) {
    case EM_X86_64: return type == R_X86_64_RELATIVE;
    case EM_386: return type == R_386_RELATIVE;
    case EM_AARCH64: return type == R_AARCH64_RELATIVE;
    case EM_PPC64: return type == R_PPC64_RELATIVE;
    default: return 0;
  }
}

static int cert_compare_u64(const void* a, const void* b) {
  unsigned long long x = *(const unsigned long long*)a, y = *(const unsigned long long*)b;
  return (x > y) - (x < y);
}

static int cert_push_relative(CertElf* out, size_t* cap, unsigned long long offset,
                              unsigned long long addend) {
  if (out->n_relative == *cap) {
    size_t grown_cap = *cap ? *cap * 2 : 64;
    unsigned long long* o = realloc(out->relative_offsets, grown_cap * sizeof *o);
    if (o == NULL) return -1;
    out->relative_offsets = o;
    unsigned long long* a = realloc(out->relative_addends, grown_cap * sizeof *a);
    if (a == NULL) return -1;
    out->relative_addends = a;
    *cap = grown_cap;
  }
  out->relative_offsets[out->n_relative] = offset;
  out->relative_addends[out->n_relative] = addend;
  out->n_relative++;
  return 0;
}

static int cert_compare_symbol_index(const void* a, const void* b) {
  size_t x = ((const CertSymbol*)a)->index, y = ((const CertSymbol*)b)->index;
  return (x > y) - (x < y);
}

static int cert_is_plt_slot(int machine, unsigned type) {
  switch (machine) {
    case EM_X86_64: return type == R_X86_64_JUMP_SLOT;
    case EM_386: return type == R_386_JMP_SLOT;
    case EM_AARCH64: return type == R_AARCH64_JUMP_SLOT;
    case EM_PPC64: return type == R_PPC64_JMP_SLOT;
    default: return 0;
  }
}

/* Marks the import with .dynsym index `index` as referenced (imports are
 * in index order, so a binary search finds it); it stays lazy only while
 * every relocation naming it is a PLT slot. */
static void cert_mark_referenced(CertElf* out, size_t index, int plt_slot) {
  if (index == 0 || out->imports.n == 0) return;
  CertSymbol key;
  key.index = index;
  CertSymbol* hit = bsearch(&key, out->imports.items, out->imports.n, sizeof key,
                            cert_compare_symbol_index);
  if (hit == NULL) return;
  hit->is_lazy = hit->is_referenced ? hit->is_lazy && plt_slot : plt_slot;
  hit->is_referenced = 1;
}

/* The dynamic relocations: which imports the loader must resolve, and the
 * RELATIVE entries (with SHT_RELA addends), enough to follow a `const char*`
 * variable (a metadata string) to the bytes it points at. */
static int cert_read_relocations(Elf* elf, CertElf* out) {
  size_t cap = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC)) continue;
    if (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) continue;
    Elf_Data* data = cert_section_data(scn, &sh);
    if (data == NULL) continue;
    int rela = sh.sh_type == SHT_RELA;
    size_t entsize = gelf_fsize(elf, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
    if (entsize == 0) continue;
    size_t count = data->d_size / entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Rela r;
      if (rela) {
        if (gelf_getrela(data, (int)i, &r) == NULL) break;
      } else {
        GElf_Rel rel;
        if (gelf_getrel(data, (int)i, &rel) == NULL) break;
        r.r_offset = rel.r_offset;
        r.r_info = rel.r_info;
        r.r_addend = 0;
      }
      cert_mark_referenced(out, (size_t)GELF_R_SYM(r.r_info),
                           cert_is_plt_slot(out->machine, (unsigned)GELF_R_TYPE(r.r_info)));
      if (!rela || !cert_is_relative(out->machine, (unsigned)GELF_R_TYPE(r.r_info))) continue;
      if (cert_push_relative(out, &cap, r.r_offset, (unsigned long long)r.r_addend) != 0)
        return -1;
    }
  }
  /* Pairs sorted by offset: sort the offsets with their addends alongside. */
  unsigned long long* pairs = malloc((out->n_relative ? out->n_relative : 1) * 2 * sizeof *pairs);
  if (pairs == NULL) return -1;
  for (size_t i = 0; i < out->n_relative; ++i) {
    pairs[2 * i] = out->relative_offsets[i];
    pairs[2 * i + 1] = out->relative_addends[i];
  }
  qsort(pairs, out->n_relative, 2 * sizeof *pairs, cert_compare_u64);
  for (size_t i = 0; i < out->n_relative; ++i) {
    out->relative_offsets[i] = pairs[2 * i];
    out->relative_addends[i] = pairs[2 * i + 1];
  }
  free(pairs);
  return 0;
}

static int cert_starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void cert_derive_flags(CertElf* out) {
  static const char* const kCudaLaunches[] = {
      "cudaLaunchKernel",         "cudaLaunchKernelExC",      "cuLaunchKernel",
      "cudaLaunchCooperativeKernel", "__cudaRegisterFatBinary", "cudaGraphLaunch", NULL};
  out->has_library_bin = cert_elf_find(out, "__tvm_ffi__library_bin", 0) != NULL;
  out->imports_env_get_stream = cert_elf_find(out, "TVMFFIEnvGetStream", 1) != NULL;
  for (const char* const* name = kCudaLaunches; *name != NULL; ++name) {
    if (cert_elf_find(out, *name, 1) != NULL) out->uses_cuda = 1;
  }
  for (size_t i = 0; i < out->n_needed; ++i) {
    if (cert_starts_with(out->needed[i], "libcudart.so") ||
        cert_starts_with(out->needed[i], "libcuda.so"))
      out->uses_cuda = 1;
  }
}


/* ---- files without section headers: the loader's own view ----
 * ld.so never reads section headers; a stripped file may lack them. Then
 * the PT_LOAD segments map addresses to file bytes and PT_DYNAMIC gives the
 * symbol table (its count from DT_HASH or DT_GNU_HASH), the strings and
 * DT_NEEDED. Every address and count is checked against the file here. */

static int cert_read_segments(Elf* elf, CertElf* out) {
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0) return 0;
  if (phnum > out->image_size / sizeof(Elf32_Phdr) + 1) return 0;
  CertSection* spans = calloc(phnum, sizeof *spans);
  if (spans == NULL) return -1;
  free(out->sections);
  out->sections = spans;
  out->n_sections = 0;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD || ph.p_filesz == 0) continue;
    if (ph.p_offset > out->image_size || ph.p_filesz > out->image_size - ph.p_offset) continue;
    CertSection* s = &out->sections[out->n_sections++];
    s->addr = ph.p_vaddr;
    s->offset = (size_t)ph.p_offset;
    s->size = (size_t)ph.p_filesz;
  }
  return 0;
}

typedef struct {
  unsigned long long strtab, strsz, symtab, syment, hash, gnu_hash;
  int has_strtab, has_symtab, has_hash, has_gnu_hash;
  int msb; /* big-endian file */
} CertDynTags;

/* A string of the dynamic string table, or NULL unless it is inside the
 * table and terminated there. */
static const char* cert_dyn_string(const CertElf* out, const CertDynTags* t, unsigned long long off) {
  const unsigned char* bytes = NULL;
  size_t n = cert_elf_bytes_at(out, t->strtab, (size_t)(t->strsz < SIZE_MAX ? t->strsz : SIZE_MAX),
                               &bytes);
  if (bytes == NULL || off >= n) return NULL;
  const char* s = (const char*)bytes + off;
  return strnlen(s, n - (size_t)off) < n - (size_t)off ? s : NULL;
}

/* File offset of an address whose `need` bytes are all in the file. */
static int cert_offset_of(const CertElf* out, unsigned long long vaddr, size_t need, size_t* off) {
  const unsigned char* bytes = NULL;
  size_t n = cert_elf_bytes_at(out, vaddr, need, &bytes);
  if (bytes == NULL || n < need) return -1;
  *off = (size_t)(bytes - out->image);
  return 0;
}

/* The 32-bit word of the file at `vaddr`, in the file's byte order. */
static int cert_u32_at(const CertElf* out, int msb, unsigned long long vaddr, uint32_t* v) {
  const unsigned char* b = NULL;
  if (cert_elf_bytes_at(out, vaddr, 4, &b) < 4) return -1;
  *v = msb ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
           : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
  return 0;
}

/* The number of dynamic symbols, as ld.so's hash tables imply it. */
static size_t cert_dynsym_count(const CertElf* out, const CertDynTags* t) {
  uint32_t v = 0;
  if (t->has_hash) return cert_u32_at(out, t->msb, t->hash + 4, &v) == 0 ? v : 0;
  if (!t->has_gnu_hash) return 0;
  uint32_t nbuckets = 0, symoffset = 0, bloom = 0;
  if (cert_u32_at(out, t->msb, t->gnu_hash, &nbuckets) != 0 ||
      cert_u32_at(out, t->msb, t->gnu_hash + 4, &symoffset) != 0 ||
      cert_u32_at(out, t->msb, t->gnu_hash + 8, &bloom) != 0)
    return 0;
  size_t word = out->elf_class == ELFCLASS64 ? 8 : 4;
  if (nbuckets == 0 || bloom > out->image_size / word || nbuckets > out->image_size / 4) return 0;
  unsigned long long buckets_at = t->gnu_hash + 16 + (unsigned long long)bloom * word;
  uint32_t last = 0;
  for (uint32_t i = 0; i < nbuckets; ++i) {
    if (cert_u32_at(out, t->msb, buckets_at + (unsigned long long)i * 4, &v) != 0) return 0;
    if (v > last) last = v;
  }
  if (last < symoffset) return symoffset;
  unsigned long long chains_at = buckets_at + (unsigned long long)nbuckets * 4;
  /* Follow the last bucket's chain to its end (low bit set), within the file. */
  for (size_t steps = 0; steps < out->image_size / 4 && last < UINT32_MAX; ++steps, ++last) {
    if (cert_u32_at(out, t->msb, chains_at + (unsigned long long)(last - symoffset) * 4, &v) != 0)
      return 0;
    if (v & 1) return (size_t)last + 1;
  }
  return 0;
}

static int cert_read_dynamic_segment(Elf* elf, CertElf* out, char* err, size_t errlen) {
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return 0;
  GElf_Phdr ph;
  int found = 0;
  for (size_t i = 0; i < phnum && i <= out->image_size / sizeof(Elf32_Phdr); ++i) {
    if (gelf_getphdr(elf, (int)i, &ph) != NULL && ph.p_type == PT_DYNAMIC) {
      found = 1;
      break;
    }
  }
  if (!found || ph.p_offset > out->image_size || ph.p_filesz > out->image_size - ph.p_offset)
    return 0;
  Elf_Data* d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, (size_t)ph.p_filesz, ELF_T_DYN);
  size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
  if (d == NULL || entsize == 0) return 0;
  size_t count = d->d_size / entsize;
  CertDynTags t = {0};
  GElf_Ehdr eh;
  t.msb = gelf_getehdr(elf, &eh) != NULL && eh.e_ident[EI_DATA] == ELFDATA2MSB;
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(d, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL) break;
    unsigned long long v = dyn.d_un.d_val;
    cert_note_bind_now(out, &dyn);
    if (dyn.d_tag == DT_STRTAB) t.strtab = v, t.has_strtab = 1;
    if (dyn.d_tag == DT_STRSZ) t.strsz = v;
    if (dyn.d_tag == DT_SYMTAB) t.symtab = v, t.has_symtab = 1;
    if (dyn.d_tag == DT_SYMENT) t.syment = v;
    if (dyn.d_tag == DT_HASH) t.hash = v, t.has_hash = 1;
    if (dyn.d_tag == DT_GNU_HASH) t.gnu_hash = v, t.has_gnu_hash = 1;
  }
  if (!t.has_strtab) return 0;
  size_t cap = 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(d, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH &&
        dyn.d_tag != DT_SONAME)
      continue;
    const char* value = cert_dyn_string(out, &t, dyn.d_un.d_val);
    if (value == NULL) continue;
    int rc = 0;
    if (dyn.d_tag == DT_NEEDED) rc = cert_push_needed(out, &cap, value);
    if (dyn.d_tag == DT_RPATH) rc = cert_keep_string(&out->rpath, value);
    if (dyn.d_tag == DT_RUNPATH) rc = cert_keep_string(&out->runpath, value);
    if (dyn.d_tag == DT_SONAME) rc = cert_keep_string(&out->soname, value);
    if (rc != 0) return cert_fail(err, errlen, "out of memory reading PT_DYNAMIC");
  }
  size_t symsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (!t.has_symtab || symsize == 0 || (t.syment != 0 && t.syment != symsize)) return 0;
  size_t nsyms = cert_dynsym_count(out, &t);
  if (nsyms > out->image_size / symsize) nsyms = out->image_size / symsize;
  size_t off = 0;
  while (nsyms > 0 && cert_offset_of(out, t.symtab, nsyms * symsize, &off) != 0) nsyms /= 2;
  if (nsyms == 0) return 0;
  Elf_Data* syms = elf_getdata_rawchunk(elf, (int64_t)off, nsyms * symsize, ELF_T_SYM);
  if (syms == NULL) return 0;
  size_t cap_exp = 0, cap_imp = 0;
  for (size_t i = 1; i < nsyms; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(syms, (int)i, &sym) == NULL) break;
    if (cert_add_symbol(out, &sym, i, cert_dyn_string(out, &t, sym.st_name), &cap_exp,
                        &cap_imp) != 0)
      return cert_fail(err, errlen, "out of memory reading the dynamic symbols");
  }
  /* Without section headers the relocations are not read: every import
   * counts as one the loader must resolve. */
  for (size_t i = 0; i < out->imports.n; ++i) out->imports.items[i].is_referenced = 1;
  return 0;
}

static int cert_read_elf(Elf* elf, CertElf* out, char* err, size_t errlen) {
  if (elf_kind(elf) != ELF_K_ELF) return cert_fail(err, errlen, "not an ELF file");
  GElf_Ehdr eh;
  if (gelf_getehdr(elf, &eh) == NULL)
    return cert_fail(err, errlen, "unreadable ELF header: %s", elf_errmsg(-1));
  out->is_shared_object = eh.e_type == ET_DYN;
  out->machine = eh.e_machine;
  out->elf_class = gelf_getclass(elf);
  if (cert_read_sections(elf, out) != 0)
    return cert_fail(err, errlen, "unreadable section headers: %s", elf_errmsg(-1));
  if (out->n_sections == 0) {
    if (cert_read_segments(elf, out) != 0) return cert_fail(err, errlen, "out of memory");
    if (cert_read_dynamic_segment(elf, out, err, errlen) != 0) return -1;
    cert_derive_flags(out);
    return 0;
  }
  if (cert_read_dynsym(elf, out, err, errlen) != 0) return -1;
  if (cert_read_dynamic(elf, out, err, errlen) != 0) return -1;
  if (cert_read_relocations(elf, out) != 0)
    return cert_fail(err, errlen, "out of memory reading relocations");
  for (size_t i = 0; out->bind_now && i < out->imports.n; ++i) out->imports.items[i].is_lazy = 0;
  cert_derive_flags(out);
  return 0;
}

/* Takes ownership of `image` (`size` bytes, mmap'd when `mapped`, else
 * malloc'd). */
static int cert_read_image(unsigned char* image, size_t size, int mapped, const char* path,
                           CertElf* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->image = image;
  out->image_size = size;
  out->image_mapped = mapped;
  out->path = strdup(path);
  if (out->path == NULL) {
    cert_elf_free(out);
    return cert_fail(err, errlen, "out of memory");
  }
  if (elf_version(EV_CURRENT) == EV_NONE) {
    cert_elf_free(out);
    return cert_fail(err, errlen, "libelf is out of date: %s", elf_errmsg(-1));
  }
  Elf* elf = elf_memory((char*)image, size);
  if (elf == NULL) {
    cert_elf_free(out);
    return cert_fail(err, errlen, "%s: not readable as ELF: %s", path, elf_errmsg(-1));
  }
  int rc = cert_read_elf(elf, out, err, errlen);
  elf_end(elf);
  if (rc != 0) cert_elf_free(out);
  return rc;
}

int cert_elf_read_memory(const void* image, size_t size, CertElf* out, char* err,
                         size_t errlen) {
  memset(out, 0, sizeof *out);
  if (size > CERT_ELF_MAX_FILE) return cert_fail(err, errlen, "file larger than 2 GiB");
  unsigned char* copy = malloc(size ? size : 1);
  if (copy == NULL) return cert_fail(err, errlen, "out of memory copying %zu bytes", size);
  if (size) memcpy(copy, image, size);
  return cert_read_image(copy, size, 0, "<memory>", out, err, errlen);
}

int cert_elf_read(const char* path, CertElf* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  /* O_NONBLOCK: opening a FIFO must not hang certify before fstat refuses it. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cert_fail(err, errlen, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return cert_fail(err, errlen, "%s: not a regular file", path);
  }
  if ((unsigned long long)st.st_size > CERT_ELF_MAX_FILE) {
    close(fd);
    return cert_fail(err, errlen, "%s: larger than 2 GiB", path);
  }
  size_t size = (size_t)st.st_size;
  if (size == 0) {
    close(fd);
    unsigned char* empty = malloc(1);
    if (empty == NULL) return cert_fail(err, errlen, "out of memory");
    return cert_read_image(empty, 0, 0, path, out, err, errlen);
  }
  /* Private and writable: libelf may convert data in place, and a write
   * must never reach the file. Pages cost memory only once read. */
  void* image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) return cert_fail(err, errlen, "%s: cannot map: %s", path, strerror(errno));
  return cert_read_image(image, size, 1, path, out, err, errlen);
}

void cert_elf_free(CertElf* elf) {
  free(elf->path);
  cert_symbols_free(&elf->exports);
  cert_symbols_free(&elf->imports);
  for (size_t i = 0; i < elf->n_needed; ++i) free(elf->needed[i]);
  free(elf->needed);
  free(elf->rpath);
  free(elf->runpath);
  free(elf->soname);
  if (elf->image_mapped) {
    munmap(elf->image, elf->image_size);
  } else {
    free(elf->image);
  }
  free(elf->relative_offsets);
  free(elf->relative_addends);
  free(elf->sections);
  memset(elf, 0, sizeof *elf);
}

const CertSymbol* cert_elf_find(const CertElf* elf, const char* name, int imports) {
  const CertSymbols* list = imports ? &elf->imports : &elf->exports;
  for (size_t i = 0; i < list->n; ++i) {
    if (strcmp(list->items[i].name, name) == 0) return &list->items[i];
  }
  return NULL;
}

int cert_is_upstream_cxx_symbol(const char* name) {
  /* Nested names (N..E) of namespace tvm::ffi, in functions, vtables,
   * typeinfo and their names: _ZN3tvm3ffi, _ZNK3tvm3ffi, _ZTVN3tvm3ffi, ... */
  if (strncmp(name, "_Z", 2) != 0) return 0;
  const char* at = strstr(name, "3tvm3ffi");
  return at != NULL && at - name <= 6;
}

size_t cert_elf_callable(const CertElf* elf, const char** names, size_t max) {
  size_t n = 0;
  size_t prefix = strlen(CERT_TVM_FFI_PREFIX);
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!s->is_function || !cert_starts_with(s->name, CERT_TVM_FFI_PREFIX)) continue;
    if (cert_starts_with(s->name, CERT_TVM_FFI_RESERVED) || s->name[prefix] == '\0') continue;
    if (names != NULL && n == max) break;
    if (names != NULL) names[n] = s->name + prefix;
    n++;
  }
  return n;
}
