/* The manifest parser: our manifests load with the fields they say, and
 * malformed ones are refused with a reason that names the key. */
#include <criterion/criterion.h>
#include <string.h>

#include "tools/certify/manifest.h"

static void refused(const char* json, const char* part) {
  CertManifest m;
  char err[512] = "";
  cr_expect_eq(cert_manifest_parse(json, strlen(json), &m, err, sizeof err), -1, "accepted: %s",
               json);
  cr_expect_not_null(strstr(err, part), "%s: reason '%s' lacks '%s'", json, err, part);
}

Test(manifest, CDY_023_scale_cpu_manifest_loads) {
  CertManifest m;
  char err[512];
  cr_assert_eq(cert_manifest_load("kernels/scale_cpu.manifest.json", &m, err, sizeof err), 0, "%s",
               err);
  const CertManifestFunction* f = cert_manifest_find(&m, "scale");
  cr_assert_not_null(f);
  cr_expect_eq(f->nargs, 3);
  cr_expect_str_eq(f->args[0].name, "output");
  cr_expect_eq(f->args[2].kind, CERT_MKIND_FLOAT);
  cr_expect_eq(f->ndtypes, 4);
  cr_expect(f->has_reference);
  cr_expect_eq(f->reference.out_arg, 0);
  cr_expect_eq(f->reference.nterms, 2);
  cr_expect_eq(f->reference.ops[0], '*');
  cr_expect_str_eq(f->errors[CERT_ERR_SHAPE].kind, "ValueError");
  cr_expect_str_eq(f->errors[CERT_ERR_DTYPE].names, "input");
  cr_expect(f->returns_none);
  cr_expect(f->errors_name_argument);
  cert_manifest_free(&m);
}

Test(manifest, CDY_023_malformed_manifests_are_refused) {
  refused("", "not JSON");
  refused("[]", "\"functions\"");
  refused("{\"functions\": {}, \"extra\": 1}", "unknown key \"extra\"");
  refused("{\"functions\": {\"f\": {\"args\": [], \"color\": 1}}}", "unknown key \"color\"");
  refused("{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"blob\"}]}}}", "kind");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": "
      "[1]}]}}}",
      "dtypes");
  refused("{\"functions\": {\"f\": {\"dtypes\": [\"float7x\"], \"args\": []}}}", "not a dtype");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"int\"}, {\"name\": \"x\", "
      "\"kind\": \"int\"}]}}}",
      "duplicate");
  refused(
      "{\"functions\": {\"f\": {\"dtypes\": [\"float32\"], \"args\": [{\"name\": \"y\", \"kind\": "
      "\"tensor\", "
      "\"shape\": [\"n\"]}], \"reference\": \"y = z * 2\"}}}",
      "unknown name");
  refused(
      "{\"functions\": {\"f\": {\"device\": \"cuda\", \"dtypes\": [\"float32\"], \"args\": "
      "[{\"name\": \"y\", "
      "\"kind\": \"tensor\", \"shape\": [\"n\"]}], \"reference\": \"y = y\"}}}",
      "CPU functions only");
  refused("{\"functions\": {\"f\": {\"args\": [], \"errors\": {\"weird\": \"TypeError\"}}}}",
          "unknown case");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": "
      "[1,2,3,4,5]}]}}}",
      "at most 4");
  refused("{\"functions\": {\"f\": {\"args\": [], \"returns\": \"int\"}}}", "returns");
}

/* The signatures of DSL kernels (CuTe DSL's TVM-FFI export): tuples,
 * streams, raw data pointers and their lengths, aligned data, extents that
 * must divide, byte_offset refused. */
Test(manifest, CDY_020_dsl_signatures_load) {
  CertManifest m;
  char err[512];
  cr_assert_eq(cert_manifest_load("tools/certify/testdata/dsl.manifest.json", &m, err, sizeof err),
               0, "%s", err);
  const CertManifestFunction* add = cert_manifest_find(&m, "add_one_checked");
  cr_assert_not_null(add);
  cr_expect_eq(add->ndivisible, 1);
  cr_expect_str_eq(add->divisible[0].name, "n");
  cr_expect_eq(cert_manifest_divisor(add, "n"), 16);
  cr_expect_eq(cert_manifest_divisor(add, "m"), 1);
  cr_expect_eq(add->args[0].align, 16);
  cr_expect(add->errors[CERT_ERR_DIVISIBILITY].documented);
  cr_expect(add->refuses_byte_offset);
  const CertManifestFunction* sc = cert_manifest_find(&m, "scale_tuple");
  cr_assert_not_null(sc);
  cr_expect_eq(sc->args[2].kind, CERT_MKIND_TUPLE);
  cr_expect_eq(sc->args[2].nitems, 2);
  cr_expect_eq(sc->args[2].items[0].kind, CERT_MKIND_FLOAT);
  cr_expect_eq(sc->args[2].items[1].kind, CERT_MKIND_INT);
  cr_expect_eq(sc->args[3].kind, CERT_MKIND_STREAM);
  cr_expect_eq(sc->reference.nterms, 3);
  cr_expect_eq(sc->reference.term_arg[1], 2);
  cr_expect_eq(sc->reference.term_item[1], 0);
  cr_expect_eq(sc->reference.term_item[2], 1);
  const CertManifestFunction* cp = cert_manifest_find(&m, "copy_ptr");
  cr_assert_not_null(cp);
  cr_expect_eq(cp->args[0].kind, CERT_MKIND_POINTER);
  cr_expect_str_eq(cp->args[0].dims[0], "n");
  cr_expect_str_eq(cp->args[2].extent, "n");
  cert_manifest_free(&m);
}

Test(manifest, CDY_020_malformed_dsl_signatures_are_refused) {
  refused("{\"functions\": {\"f\": {\"args\": [{\"name\": \"t\", \"kind\": \"tuple\"}]}}}",
          "a tuple needs items");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"int\", \"items\": []}]}}}",
      "only tuples have items");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"t\", \"kind\": \"tuple\", \"items\": "
      "[{\"kind\": \"tuple\"}]}]}}}",
      "a tuple holds");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"int\", \"align\": 16}]}}}",
      "only tensors and pointers have an alignment");
  refused(
      "{\"functions\": {\"f\": {\"dtypes\": [\"float32\"], \"args\": [{\"name\": \"x\", \"kind\": "
      "\"tensor\", \"shape\": [\"n\"], \"align\": 12}]}}}",
      "a power of two");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"p\", \"kind\": \"pointer\", \"shape\": "
      "[\"n\"]}]}}}",
      "needed for tensor and pointer arguments");
  refused(
      "{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"float\", \"extent\": "
      "\"n\"}]}}}",
      "only ints are passed an extent");
  refused("{\"functions\": {\"f\": {\"args\": [], \"divisible\": {\"n\": 0}}}}",
          "a number from 1 to 4096");
  refused("{\"functions\": {\"f\": {\"args\": [], \"byte_offset\": 0}}}",
          "byte_offset: expected a bool");
  refused(
      "{\"functions\": {\"f\": {\"dtypes\": [\"float32\"], \"args\": [{\"name\": \"y\", \"kind\": "
      "\"tensor\", \"shape\": [\"n\"]}, {\"name\": \"t\", \"kind\": \"tuple\", \"items\": "
      "[{\"kind\": "
      "\"int\"}]}], \"reference\": \"y = t[3]\"}}}",
      "bad item");
}
