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

#include "elf_segments.h"
#include "reference/vec.h"
#include "symbol_names.h"

/* No library certify meets is bigger; refusing larger files bounds memory. */
#define CERT_ELF_MAX_FILE ((size_t)1 << 31)

static void symbols_free(CertSymbols* list) {
  for (size_t i = 0; i < list->n; ++i) free(list->items[i].name);
  free(list->items);
  list->items = NULL;
  list->n = 0;
}

/* Allocated sections with contents, for mapping addresses to file bytes. */
static int read_sections(Elf* elf, CertElf* out) {
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

static Elf_Scn* find_section(Elf* elf, Elf64_Word type, GElf_Shdr* sh) {
  for (Elf_Scn* scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    if (gelf_getshdr(scn, sh) != NULL && sh->sh_type == type) return scn;
  }
  return NULL;
}

/* Returns the section's data when it has real file contents, else NULL. */
static Elf_Data* section_data(Elf_Scn* scn, const GElf_Shdr* sh) {
  if (sh->sh_type == SHT_NOBITS) return NULL;
  Elf_Data* data = elf_getdata(scn, NULL);
  if (data == NULL || data->d_buf == NULL) return NULL;
  return data;
}

static int read_dynsym(Elf* elf, CertElf* out, char* err, size_t errlen) {
  GElf_Shdr sh;
  Elf_Scn* scn = find_section(elf, SHT_DYNSYM, &sh);
  if (scn == NULL) return 0; /* a file with no dynamic symbols exports nothing */
  Elf_Data* data = section_data(scn, &sh);
  if (data == NULL)
    return cert_elf_fail(err, errlen, ".dynsym has no contents: %s", elf_errmsg(-1));
  size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return cert_elf_fail(err, errlen, "unknown ELF class");
  size_t count = data->d_size / entsize;
  size_t cap_exp = 0, cap_imp = 0;
  for (size_t i = 1; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, (int)i, &sym) == NULL) break;
    /* elf_strptr refuses offsets outside the table and unterminated strings. */
    const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (cert_elf_add_symbol(out, &sym, i, name, &cap_exp, &cap_imp) != 0)
      return cert_elf_fail(err, errlen, "out of memory reading .dynsym");
  }
  return 0;
}

static int read_dynamic(Elf* elf, CertElf* out, char* err, size_t errlen) {
  GElf_Shdr sh;
  Elf_Scn* scn = find_section(elf, SHT_DYNAMIC, &sh);
  if (scn == NULL) return 0;
  Elf_Data* data = section_data(scn, &sh);
  if (data == NULL)
    return cert_elf_fail(err, errlen, ".dynamic has no contents: %s", elf_errmsg(-1));
  size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
  if (entsize == 0) return cert_elf_fail(err, errlen, "unknown ELF class");
  size_t count = data->d_size / entsize, cap = 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(data, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL) break;
    cert_elf_note_bind_now(out, &dyn);
    if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH &&
        dyn.d_tag != DT_SONAME)
      continue;
    const char* value = elf_strptr(elf, sh.sh_link, (size_t)dyn.d_un.d_val);
    if (value == NULL) continue; /* an entry whose string is not in the table says nothing */
    int rc = 0;
    if (dyn.d_tag == DT_NEEDED) rc = cert_elf_add_needed(out, &cap, value);
    if (dyn.d_tag == DT_RPATH) rc = cert_elf_keep_string(&out->rpath, value);
    if (dyn.d_tag == DT_RUNPATH) rc = cert_elf_keep_string(&out->runpath, value);
    if (dyn.d_tag == DT_SONAME) rc = cert_elf_keep_string(&out->soname, value);
    if (rc != 0) return cert_elf_fail(err, errlen, "out of memory reading .dynamic");
  }
  return 0;
}

static int is_relative(int machine, unsigned type) {
  switch (machine) {
    case EM_X86_64: return type == R_X86_64_RELATIVE;
    case EM_386: return type == R_386_RELATIVE;
    case EM_AARCH64: return type == R_AARCH64_RELATIVE;
    case EM_PPC64: return type == R_PPC64_RELATIVE;
    default: return 0;
  }
}

static int compare_u64(const void* a, const void* b) {
  unsigned long long x = *(const unsigned long long*)a, y = *(const unsigned long long*)b;
  return (x > y) - (x < y);
}

static int push_relative(CertElf* out, size_t* cap, unsigned long long offset,
                         unsigned long long addend) {
  /* Two arrays of one length: each grows with its own copy of the
   * capacity, and the smaller is what both hold. */
  size_t cap_o = *cap, cap_a = *cap;
  if (tffi_vec_reserve(&out->relative_offsets, &cap_o, out->n_relative + 1,
                       sizeof *out->relative_offsets) != 0 ||
      tffi_vec_reserve(&out->relative_addends, &cap_a, out->n_relative + 1,
                       sizeof *out->relative_addends) != 0) {
    return -1;
  }
  *cap = cap_o < cap_a ? cap_o : cap_a;
  out->relative_offsets[out->n_relative] = offset;
  out->relative_addends[out->n_relative] = addend;
  out->n_relative++;
  return 0;
}

static int compare_symbol_index(const void* a, const void* b) {
  size_t x = ((const CertSymbol*)a)->index, y = ((const CertSymbol*)b)->index;
  return (x > y) - (x < y);
}

static int is_plt_slot(int machine, unsigned type) {
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
static void mark_referenced(CertElf* out, size_t index, int plt_slot) {
  if (index == 0 || out->imports.n == 0) return;
  CertSymbol key;
  key.index = index;
  CertSymbol* hit =
      bsearch(&key, out->imports.items, out->imports.n, sizeof key, compare_symbol_index);
  if (hit == NULL) return;
  hit->is_lazy = hit->is_referenced ? hit->is_lazy && plt_slot : plt_slot;
  hit->is_referenced = 1;
}

/* The dynamic relocations: which imports the loader must resolve, and the
 * RELATIVE entries (with SHT_RELA addends), enough to follow a `const char*`
 * variable (a metadata string) to the bytes it points at. */
static int read_relocations(Elf* elf, CertElf* out) {
  size_t cap = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC)) continue;
    if (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) continue;
    Elf_Data* data = section_data(scn, &sh);
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
      mark_referenced(out, (size_t)GELF_R_SYM(r.r_info),
                      is_plt_slot(out->machine, (unsigned)GELF_R_TYPE(r.r_info)));
      if (!rela || !is_relative(out->machine, (unsigned)GELF_R_TYPE(r.r_info))) continue;
      if (push_relative(out, &cap, r.r_offset, (unsigned long long)r.r_addend) != 0) return -1;
    }
  }
  /* Pairs sorted by offset: sort the offsets with their addends alongside. */
  unsigned long long* pairs = malloc((out->n_relative ? out->n_relative : 1) * 2 * sizeof *pairs);
  if (pairs == NULL) return -1;
  for (size_t i = 0; i < out->n_relative; ++i) {
    pairs[2 * i] = out->relative_offsets[i];
    pairs[2 * i + 1] = out->relative_addends[i];
  }
  qsort(pairs, out->n_relative, 2 * sizeof *pairs, compare_u64);
  for (size_t i = 0; i < out->n_relative; ++i) {
    out->relative_offsets[i] = pairs[2 * i];
    out->relative_addends[i] = pairs[2 * i + 1];
  }
  free(pairs);
  return 0;
}

static void derive_flags(CertElf* out) {
  static const char* const kCudaLaunches[] = {"cudaLaunchKernel",
                                              "cudaLaunchKernelExC",
                                              "cuLaunchKernel",
                                              "cudaLaunchCooperativeKernel",
                                              "__cudaRegisterFatBinary",
                                              "cudaGraphLaunch",
                                              NULL};
  out->has_library_bin = cert_elf_find(out, CERT_RESERVED_PREFIX "library_bin", 0) != NULL;
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

static int read_elf(Elf* elf, CertElf* out, char* err, size_t errlen) {
  if (elf_kind(elf) != ELF_K_ELF) return cert_elf_fail(err, errlen, "not an ELF file");
  GElf_Ehdr eh;
  if (gelf_getehdr(elf, &eh) == NULL)
    return cert_elf_fail(err, errlen, "unreadable ELF header: %s", elf_errmsg(-1));
  out->is_shared_object = eh.e_type == ET_DYN;
  out->machine = eh.e_machine;
  out->elf_class = gelf_getclass(elf);
  if (read_sections(elf, out) != 0)
    return cert_elf_fail(err, errlen, "unreadable section headers: %s", elf_errmsg(-1));
  if (out->n_sections == 0) {
    if (cert_elf_read_segments(elf, out, err, errlen) != 0) return -1;
    derive_flags(out);
    return 0;
  }
  if (read_dynsym(elf, out, err, errlen) != 0) return -1;
  if (read_dynamic(elf, out, err, errlen) != 0) return -1;
  if (read_relocations(elf, out) != 0)
    return cert_elf_fail(err, errlen, "out of memory reading relocations");
  for (size_t i = 0; out->bind_now && i < out->imports.n; ++i) out->imports.items[i].is_lazy = 0;
  derive_flags(out);
  return 0;
}

/* Takes ownership of `image` (`size` bytes, mmap'd when `mapped`, else
 * malloc'd). */
static int read_image(unsigned char* image, size_t size, int mapped, const char* path, CertElf* out,
                      char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->image = image;
  out->image_size = size;
  out->image_mapped = mapped;
  out->path = strdup(path);
  if (out->path == NULL) {
    cert_elf_free(out);
    return cert_elf_fail(err, errlen, "out of memory");
  }
  if (elf_version(EV_CURRENT) == EV_NONE) {
    cert_elf_free(out);
    return cert_elf_fail(err, errlen, "libelf is out of date: %s", elf_errmsg(-1));
  }
  Elf* elf = elf_memory((char*)image, size);
  if (elf == NULL) {
    cert_elf_free(out);
    return cert_elf_fail(err, errlen, "%s: not readable as ELF: %s", path, elf_errmsg(-1));
  }
  int rc = read_elf(elf, out, err, errlen);
  elf_end(elf);
  if (rc != 0) cert_elf_free(out);
  return rc;
}

int cert_elf_read_memory(const void* image, size_t size, CertElf* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (size > CERT_ELF_MAX_FILE) return cert_elf_fail(err, errlen, "file larger than 2 GiB");
  unsigned char* copy = malloc(size ? size : 1);
  if (copy == NULL) return cert_elf_fail(err, errlen, "out of memory copying %zu bytes", size);
  if (size) memcpy(copy, image, size);
  return read_image(copy, size, 0, "<memory>", out, err, errlen);
}

int cert_elf_read(const char* path, CertElf* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  /* O_NONBLOCK: opening a FIFO must not hang certify before fstat refuses it. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cert_elf_fail(err, errlen, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return cert_elf_fail(err, errlen, "%s: not a regular file", path);
  }
  if ((unsigned long long)st.st_size > CERT_ELF_MAX_FILE) {
    close(fd);
    return cert_elf_fail(err, errlen, "%s: larger than 2 GiB", path);
  }
  size_t size = (size_t)st.st_size;
  if (size == 0) {
    close(fd);
    unsigned char* empty = malloc(1);
    if (empty == NULL) return cert_elf_fail(err, errlen, "out of memory");
    return read_image(empty, 0, 0, path, out, err, errlen);
  }
  /* Private and writable: libelf may convert data in place, and a write
   * must never reach the file. Pages cost memory only once read. */
  void* image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED)
    return cert_elf_fail(err, errlen, "%s: cannot map: %s", path, strerror(errno));
  return read_image(image, size, 1, path, out, err, errlen);
}

void cert_elf_free(CertElf* elf) {
  free(elf->path);
  symbols_free(&elf->exports);
  symbols_free(&elf->imports);
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
  size_t prefix = strlen(CERT_EXPORT_PREFIX);
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!s->is_function || !cert_starts_with(s->name, CERT_EXPORT_PREFIX)) continue;
    if (cert_starts_with(s->name, CERT_RESERVED_PREFIX) || s->name[prefix] == '\0') continue;
    if (names != NULL && n == max) break;
    if (names != NULL) names[n] = s->name + prefix;
    n++;
  }
  return n;
}
