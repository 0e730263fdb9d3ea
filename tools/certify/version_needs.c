#include "version_needs.h"

#include <elf.h>
#include <gelf.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"

/* ---- .gnu.version_r ------------------------------------------------------ */

static int add_need(CertVersionNeeds* out, const char* file, const char* name) {
  if (TFFI_VEC_RESERVE(out, out->n + 1) != 0) return -1;
  snprintf(out->items[out->n].file, sizeof out->items[0].file, "%s", file ? file : "?");
  snprintf(out->items[out->n].name, sizeof out->items[0].name, "%s", name ? name : "?");
  out->n++;
  return 0;
}

/* Walks one SHT_GNU_verneed section; each offset is checked against the
 * section's size, and the walk is bounded by its entry counts. */
static int read_verneed(Elf* e, Elf_Scn* scn, const GElf_Shdr* sh, CertVersionNeeds* out) {
  Elf_Data* data = elf_getdata(scn, NULL);
  if (data == NULL) return -1;
  size_t off = 0;
  for (GElf_Word k = 0; k < sh->sh_info && k < 4096; ++k) {
    GElf_Verneed vn;
    if (off + sizeof(Elf64_Verneed) > data->d_size || gelf_getverneed(data, (int)off, &vn) == NULL)
      return -1;
    const char* file = elf_strptr(e, sh->sh_link, vn.vn_file);
    size_t aux = off + vn.vn_aux;
    for (GElf_Half a = 0; a < vn.vn_cnt && a < 4096; ++a) {
      GElf_Vernaux va;
      if (aux + sizeof(Elf64_Vernaux) > data->d_size ||
          gelf_getvernaux(data, (int)aux, &va) == NULL)
        return -1;
      if (add_need(out, file, elf_strptr(e, sh->sh_link, va.vna_name)) != 0) return -1;
      if (va.vna_next == 0) break;
      aux += va.vna_next;
    }
    if (vn.vn_next == 0) break;
    off += vn.vn_next;
  }
  return 0;
}

int cert_version_needs(const CertElf* elf, CertVersionNeeds* out) {
  memset(out, 0, sizeof *out);
  elf_version(EV_CURRENT);
  Elf* e = elf_memory((char*)elf->image, elf->image_size);
  if (e == NULL) return -1;
  int rc = 0;
  for (Elf_Scn* scn = elf_nextscn(e, NULL); scn && rc == 0; scn = elf_nextscn(e, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_GNU_verneed)
      rc = read_verneed(e, scn, &sh, out);
  }
  elf_end(e);
  if (rc != 0) cert_version_needs_free(out);
  return rc;
}

void cert_version_needs_free(CertVersionNeeds* n) {
  free(n->items);
  memset(n, 0, sizeof *n);
}

/* ---- the policies ------------------------------------------------------------ */

/* auditwheel's name for the library's machine. */
static const char* arch_of(const CertElf* elf) {
  switch (elf->machine) {
    case EM_X86_64: return "x86_64";
    case EM_386: return "i686";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return "ppc64le";
    case EM_S390: return "s390x";
    case EM_ARM: return "armv7l";
    case EM_RISCV: return "riscv64";
    default: return "";
  }
}

/* "GLIBCXX_3.4.26" -> prefix "GLIBCXX", version "3.4.26", for the four
 * families a manylinux policy bounds; 0 for any other name. */
static int split_need(const char* name, char* prefix, size_t psize, const char** version) {
  static const char* const kFamilies[] = {"GLIBCXX", "GLIBC", "CXXABI", "GCC"};
  for (size_t k = 0; k < 4; ++k) {
    size_t n = strlen(kFamilies[k]);
    if (strncmp(name, kFamilies[k], n) == 0 && name[n] == '_') {
      snprintf(prefix, psize, "%s", kFamilies[k]);
      *version = name + n + 1;
      return 1;
    }
  }
  return 0;
}

static int policy_allows(json_t* policy, const char* arch, const char* prefix,
                         const char* version) {
  json_t* list =
      json_object_get(json_object_get(json_object_get(policy, "symbol_versions"), arch), prefix);
  size_t i;
  json_t* v;
  json_array_foreach(list, i, v) {
    if (json_is_string(v) && strcmp(json_string_value(v), version) == 0) return 1;
  }
  return 0;
}

static int policy_named(json_t* policy, const char* name) {
  if (strcmp(json_string_value(json_object_get(policy, "name")) ?: "", name) == 0) return 1;
  size_t i;
  json_t* alias;
  json_array_foreach(json_object_get(policy, "aliases"), i, alias) {
    if (json_is_string(alias) && strcmp(json_string_value(alias), name) == 0) return 1;
  }
  return 0;
}

/* The needs a policy does not cover, as "GLIBCXX_3.4.26, ..." (empty when
 * it covers them all). */
static void beyond(json_t* policy, const char* arch, const CertVersionNeeds* needs, char* out,
                   size_t size) {
  out[0] = '\0';
  for (size_t k = 0; k < needs->n; ++k) {
    char prefix[16];
    const char* version;
    if (!split_need(needs->items[k].name, prefix, sizeof prefix, &version)) continue;
    if (policy_allows(policy, arch, prefix, version) || strstr(out, needs->items[k].name)) continue;
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s", len ? ", " : "", needs->items[k].name);
  }
}

/* The needs of the four families, newest last, for the evidence. */
static void list_needs(const CertVersionNeeds* needs, char* out, size_t size) {
  out[0] = '\0';
  for (size_t k = 0; k < needs->n; ++k) {
    char prefix[16];
    const char* version;
    if (!split_need(needs->items[k].name, prefix, sizeof prefix, &version) ||
        strstr(out, needs->items[k].name)) {
      continue;
    }
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s (%s)", len ? ", " : "", needs->items[k].name,
             needs->items[k].file);
  }
  if (out[0] == '\0') snprintf(out, size, "no GLIBC, GLIBCXX, CXXABI or GCC symbol versions");
}

static int skip(CertFindings* out, const char* why) {
  return cert_findings_add(out, "", "static.manylinux", "", "", CERT_SKIP, "", "",
                           "The manylinux policy could not be judged: %s.", why);
}

int cert_check_manylinux(const CertElf* elf, const char* policy_path, const char* unavailable,
                         const char* claimed, CertFindings* out) {
  if (policy_path == NULL)
    return skip(out, unavailable ? unavailable : "no policy data (manylinux-policy.json)");
  json_error_t jerr;
  json_t* policies = json_load_file(policy_path, 0, &jerr);
  if (!json_is_array(policies)) {
    json_decref(policies);
    char why[400];
    snprintf(why, sizeof why, "%s does not read as auditwheel's policy list (%s)", policy_path,
             jerr.text);
    return skip(out, why);
  }
  const char* arch = arch_of(elf);
  CertVersionNeeds needs;
  if (cert_version_needs(elf, &needs) != 0) {
    json_decref(policies);
    return skip(out, "its .gnu.version_r section does not read");
  }
  if (claimed == NULL) claimed = CERT_MANYLINUX_DEFAULT;
  /* The oldest policy that covers every need: the highest priority. */
  json_t* oldest = NULL;
  json_t* claim = NULL;
  size_t i;
  json_t* p;
  char gap[1024];
  json_array_foreach(policies, i, p) {
    const char* name = json_string_value(json_object_get(p, "name"));
    if (name == NULL || strcmp(name, "linux") == 0) continue;
    if (policy_named(p, claimed)) claim = p;
    beyond(p, arch, &needs, gap, sizeof gap);
    if (gap[0] == '\0' && json_object_get(json_object_get(p, "symbol_versions"), arch) &&
        (oldest == NULL || json_integer_value(json_object_get(p, "priority")) >
                               json_integer_value(json_object_get(oldest, "priority")))) {
      oldest = p;
    }
  }
  char ev[2048];
  list_needs(&needs, ev, sizeof ev);
  const char* met = oldest ? json_string_value(json_object_get(oldest, "name")) : NULL;
  int rc;
  if (claim == NULL) {
    char why[200];
    snprintf(why, sizeof why, "the policy data names no policy '%.64s'", claimed);
    rc = skip(out, why);
  } else if (arch[0] == '\0' ||
             json_object_get(json_object_get(claim, "symbol_versions"), arch) == NULL) {
    rc = skip(out, "the policy data covers no policy for this machine");
  } else {
    beyond(claim, arch, &needs, gap, sizeof gap);
    if (gap[0] == '\0') {
      rc = cert_findings_add(
          out, "", "static.manylinux", "CST-030", "", CERT_PASS, ev, "",
          "Its symbol versions meet %s at the oldest, within %s (symbol versions only).",
          met ? met : claimed, claimed);
    } else {
      char oldest_met[160];
      if (met) {
        snprintf(oldest_met, sizeof oldest_met, "the oldest policy its symbol versions meet is %s",
                 met);
      } else {
        snprintf(oldest_met, sizeof oldest_met, "no manylinux policy covers them");
      }
      rc = cert_findings_add(
          out, "", "static.manylinux", "CST-030", "", CERT_WARN, ev, "",
          "Needs %s, beyond %s: it does not load on the older systems that policy "
          "promises (and that run apache-tvm-ffi's own wheels); %s.",
          gap, claimed, oldest_met);
    }
  }
  cert_version_needs_free(&needs);
  json_decref(policies);
  return rc;
}
