/* The symbol-version floor of a library: the versions it needs from glibc,
 * libstdc++ and libgcc (its .gnu.version_r: GLIBC_*, GLIBCXX_*, CXXABI_*,
 * GCC_*), and the oldest manylinux policy whose symbol versions cover them,
 * judged with the policy data auditwheel ships (manylinux-policy.json,
 * pinned in WORKSPACE). A library that needs more than the policy hosts are
 * promised (manylinux_2_28 unless told otherwise: the floor apache-tvm-ffi's
 * own wheels are built for) fails to load on older systems that run the
 * runtime itself: a warning naming the versions, never a MUST failure. */
#ifndef CERT_VERSION_NEEDS_H_
#define CERT_VERSION_NEEDS_H_

#include <stddef.h>

#include "elf_facts.h"
#include "finding.h"

#define CERT_MANYLINUX_DEFAULT "manylinux_2_28"

typedef struct {
  char file[64]; /* the library that must provide it, "libc.so.6" */
  char name[48]; /* "GLIBC_2.14" */
} CertVersionNeed;

typedef struct {
  CertVersionNeed* items;
  size_t n;
} CertVersionNeeds;

/* Every version the library's .gnu.version_r asks for, in file order.
 * 0, or -1 when the section is malformed or memory ran out (nothing kept). */
int cert_version_needs(const CertElf* elf, CertVersionNeeds* out);
void cert_version_needs_free(CertVersionNeeds* n);

/* The finding `static.manylinux` (clause CST-030): PASS with the oldest
 * policy met when the needs fit `claimed` (a policy name or alias, NULL:
 * CERT_MANYLINUX_DEFAULT), WARN naming the versions beyond it otherwise,
 * SKIP with the reason when the policy data cannot be read (`policy_path`
 * NULL, missing or malformed; `unavailable`, when not NULL, says why).
 * Returns 0, or -1 when out of memory. */
int cert_check_manylinux(const CertElf* elf, const char* policy_path, const char* unavailable,
                         const char* claimed, CertFindings* out);

#endif
