/* Files without section headers, read as the loader reads them:
 * ld.so never reads section headers; a stripped file may lack them. Then
 * the PT_LOAD segments map addresses to file bytes and PT_DYNAMIC gives the
 * symbol table (its count from DT_HASH or DT_GNU_HASH), the strings and
 * DT_NEEDED. Every address and count is checked against the file here. */
#include "elf_segments.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_build.h"

static int read_segments(Elf* elf, CertElf* out) {
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
    if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD || ph.p_filesz == 0)
      continue;
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
static const char* dyn_string(const CertElf* out, const CertDynTags* t, unsigned long long off) {
  const unsigned char* bytes = NULL;
  size_t n = cert_elf_bytes_at(out, t->strtab, (size_t)(t->strsz < SIZE_MAX ? t->strsz : SIZE_MAX),
                               &bytes);
  if (bytes == NULL || off >= n) return NULL;
  const char* s = (const char*)bytes + off;
  return strnlen(s, n - (size_t)off) < n - (size_t)off ? s : NULL;
}

/* File offset of an address whose `need` bytes are all in the file. */
static int offset_of(const CertElf* out, unsigned long long vaddr, size_t need, size_t* off) {
  const unsigned char* bytes = NULL;
  size_t n = cert_elf_bytes_at(out, vaddr, need, &bytes);
  if (bytes == NULL || n < need) return -1;
  *off = (size_t)(bytes - out->image);
  return 0;
}

/* The 32-bit word of the file at `vaddr`, in the file's byte order. */
static int u32_at(const CertElf* out, int msb, unsigned long long vaddr, uint32_t* v) {
  const unsigned char* b = NULL;
  if (cert_elf_bytes_at(out, vaddr, 4, &b) < 4) return -1;
  *v = msb ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
           : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
  return 0;
}

/* The number of dynamic symbols, as ld.so's hash tables imply it. */
static size_t dynsym_count(const CertElf* out, const CertDynTags* t) {
  uint32_t v = 0;
  if (t->has_hash) return u32_at(out, t->msb, t->hash + 4, &v) == 0 ? v : 0;
  if (!t->has_gnu_hash) return 0;
  uint32_t nbuckets = 0, symoffset = 0, bloom = 0;
  if (u32_at(out, t->msb, t->gnu_hash, &nbuckets) != 0 ||
      u32_at(out, t->msb, t->gnu_hash + 4, &symoffset) != 0 ||
      u32_at(out, t->msb, t->gnu_hash + 8, &bloom) != 0)
    return 0;
  size_t word = out->elf_class == ELFCLASS64 ? 8 : 4;
  if (nbuckets == 0 || bloom > out->image_size / word || nbuckets > out->image_size / 4) return 0;
  unsigned long long buckets_at = t->gnu_hash + 16 + (unsigned long long)bloom * word;
  uint32_t last = 0;
  for (uint32_t i = 0; i < nbuckets; ++i) {
    if (u32_at(out, t->msb, buckets_at + (unsigned long long)i * 4, &v) != 0) return 0;
    if (v > last) last = v;
  }
  if (last < symoffset) return symoffset;
  unsigned long long chains_at = buckets_at + (unsigned long long)nbuckets * 4;
  /* Follow the last bucket's chain to its end (low bit set), within the file. */
  for (size_t steps = 0; steps < out->image_size / 4 && last < UINT32_MAX; ++steps, ++last) {
    if (u32_at(out, t->msb, chains_at + (unsigned long long)(last - symoffset) * 4, &v) != 0)
      return 0;
    if (v & 1) return (size_t)last + 1;
  }
  return 0;
}

static int read_dynamic_segment(Elf* elf, CertElf* out, char* err, size_t errlen) {
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
    cert_elf_note_bind_now(out, &dyn);
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
    const char* value = dyn_string(out, &t, dyn.d_un.d_val);
    if (value == NULL) continue;
    int rc = 0;
    if (dyn.d_tag == DT_NEEDED) rc = cert_elf_add_needed(out, &cap, value);
    if (dyn.d_tag == DT_RPATH) rc = cert_elf_keep_string(&out->rpath, value);
    if (dyn.d_tag == DT_RUNPATH) rc = cert_elf_keep_string(&out->runpath, value);
    if (dyn.d_tag == DT_SONAME) rc = cert_elf_keep_string(&out->soname, value);
    if (rc != 0) return cert_elf_fail(err, errlen, "out of memory reading PT_DYNAMIC");
  }
  size_t symsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
  if (!t.has_symtab || symsize == 0 || (t.syment != 0 && t.syment != symsize)) return 0;
  size_t nsyms = dynsym_count(out, &t);
  if (nsyms > out->image_size / symsize) nsyms = out->image_size / symsize;
  size_t off = 0;
  while (nsyms > 0 && offset_of(out, t.symtab, nsyms * symsize, &off) != 0) nsyms /= 2;
  if (nsyms == 0) return 0;
  Elf_Data* syms = elf_getdata_rawchunk(elf, (int64_t)off, nsyms * symsize, ELF_T_SYM);
  if (syms == NULL) return 0;
  size_t cap_exp = 0, cap_imp = 0;
  for (size_t i = 1; i < nsyms; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(syms, (int)i, &sym) == NULL) break;
    if (cert_elf_add_symbol(out, &sym, i, dyn_string(out, &t, sym.st_name), &cap_exp, &cap_imp) !=
        0)
      return cert_elf_fail(err, errlen, "out of memory reading the dynamic symbols");
  }
  /* Without section headers the relocations are not read: every import
   * counts as one the loader must resolve. */
  for (size_t i = 0; i < out->imports.n; ++i) out->imports.items[i].is_referenced = 1;
  return 0;
}

int cert_elf_read_segments(Elf* elf, CertElf* out, char* err, size_t errlen) {
  if (read_segments(elf, out) != 0) return cert_elf_fail(err, errlen, "out of memory");
  return read_dynamic_segment(elf, out, err, errlen);
}
