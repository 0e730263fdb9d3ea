#include "elf_symbol.h"

#include <elf.h>
#include <string.h>

int libbin_is_elf(const uint8_t* data, size_t size) {
  return size >= 4 && memcmp(data, ELFMAG, SELFMAG) == 0;
}

/* 1 when [off, off + len) lies inside [0, size), without overflow. */
static int libbin_in_file(size_t size, uint64_t off, uint64_t len) {
  return off <= size && len <= size - off;
}

/* Copies a header out of the image: the file offsets need not be aligned
 * for the struct types, so no casting of interior pointers. */
static int libbin_read_at(const uint8_t* data, size_t size, uint64_t off, void* out, size_t len) {
  if (!libbin_in_file(size, off, len)) return -1;
  memcpy(out, data + off, len);
  return 0;
}

static int libbin_section(const uint8_t* data, size_t size, const Elf64_Ehdr* eh, size_t index,
                          Elf64_Shdr* out) {
  if (index >= eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr)) return -1;
  return libbin_read_at(data, size, eh->e_shoff + (uint64_t)index * sizeof(Elf64_Shdr), out,
                        sizeof *out);
}

/* Maps a symbol's address to file bytes through the section it names. */
static int libbin_symbol_bytes(const uint8_t* data, size_t size, const Elf64_Ehdr* eh,
                               const Elf64_Sym* sym, const uint8_t** bytes, size_t* nbytes,
                               const char** why) {
  Elf64_Shdr sec;
  if (sym->st_shndx == SHN_UNDEF || libbin_section(data, size, eh, sym->st_shndx, &sec) != 0) {
    *why = "symbol is not defined in a section of this file";
    return -1;
  }
  if (sec.sh_type == SHT_NOBITS) {
    *why = "symbol lives in a zero-filled section (.bss): its bytes are not in the file";
    return -1;
  }
  if (sym->st_value < sec.sh_addr || sym->st_value - sec.sh_addr > sec.sh_size ||
      sym->st_size > sec.sh_size - (sym->st_value - sec.sh_addr)) {
    *why = "symbol extends past its section";
    return -1;
  }
  uint64_t off = sec.sh_offset + (sym->st_value - sec.sh_addr);
  if (!libbin_in_file(size, off, sym->st_size)) {
    *why = "symbol extends past the end of the file";
    return -1;
  }
  *bytes = data + off;
  *nbytes = (size_t)sym->st_size;
  return 0;
}

/* Searches one symbol table section (SHT_DYNSYM or SHT_SYMTAB). Returns 1
 * when found, 0 when absent, -1 on a malformed table. */
static int libbin_search_table(const uint8_t* data, size_t size, const Elf64_Ehdr* eh,
                               const Elf64_Shdr* tab, const char* name, Elf64_Sym* found) {
  Elf64_Shdr strtab;
  if (tab->sh_entsize != sizeof(Elf64_Sym) ||
      libbin_section(data, size, eh, tab->sh_link, &strtab) ||
      !libbin_in_file(size, tab->sh_offset, tab->sh_size) ||
      !libbin_in_file(size, strtab.sh_offset, strtab.sh_size)) {
    return -1;
  }
  size_t want = strlen(name);
  for (uint64_t i = 0; i < tab->sh_size / sizeof(Elf64_Sym); ++i) {
    Elf64_Sym sym;
    memcpy(&sym, data + tab->sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
    /* The name must fit, NUL included, inside the string table. */
    if (sym.st_name >= strtab.sh_size || strtab.sh_size - sym.st_name <= want) continue;
    const char* s = (const char*)data + strtab.sh_offset + sym.st_name;
    if (memcmp(s, name, want) == 0 && s[want] == '\0') {
      *found = sym;
      return 1;
    }
  }
  return 0;
}

int libbin_elf_find_symbol(const uint8_t* data, size_t size, const char* name,
                           const uint8_t** bytes, size_t* nbytes, const char** why) {
  Elf64_Ehdr eh;
  if (!libbin_is_elf(data, size) || libbin_read_at(data, size, 0, &eh, sizeof eh) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    *why = "not a little-endian ELF64 file";
    return -1;
  }
  const uint32_t kinds[2] = {SHT_DYNSYM, SHT_SYMTAB};
  for (int k = 0; k < 2; ++k) {
    for (size_t i = 0; i < eh.e_shnum; ++i) {
      Elf64_Shdr sec;
      if (libbin_section(data, size, &eh, i, &sec) != 0) {
        *why = "section header table lies outside the file";
        return -1;
      }
      if (sec.sh_type != kinds[k]) continue;
      Elf64_Sym sym;
      int rc = libbin_search_table(data, size, &eh, &sec, name, &sym);
      if (rc < 0) {
        *why = "malformed symbol table";
        return -1;
      }
      if (rc == 1) return libbin_symbol_bytes(data, size, &eh, &sym, bytes, nbytes, why);
    }
  }
  *why = "the file does not define the symbol";
  return -1;
}
