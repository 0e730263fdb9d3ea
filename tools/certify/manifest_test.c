/* The manifest parser: our manifests load with the fields they say, and
 * malformed ones are refused with a reason that names the key. */
#include <criterion/criterion.h>
#include <string.h>

#include "tools/certify/manifest.h"

static void refused(const char* json, const char* part) {
  CertManifest m;
  char err[512] = "";
  cr_expect_eq(cert_manifest_parse(json, strlen(json), &m, err, sizeof err), -1, "accepted: %s", json);
  cr_expect_not_null(strstr(err, part), "%s: reason '%s' lacks '%s'", json, err, part);
}

Test(manifest, CDY_023_scale_cpu_manifest_loads) {
  CertManifest m;
  char err[512];
  cr_assert_eq(cert_manifest_load("kernels/scale_cpu.manifest.json", &m, err, sizeof err), 0, "%s", err);
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
  refused("{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": [1]}]}}}",
          "dtypes");
  refused("{\"functions\": {\"f\": {\"dtypes\": [\"float7x\"], \"args\": []}}}", "not a dtype");
  refused("{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"int\"}, {\"name\": \"x\", \"kind\": \"int\"}]}}}",
          "duplicate");
  refused("{\"functions\": {\"f\": {\"dtypes\": [\"float32\"], \"args\": [{\"name\": \"y\", \"kind\": \"tensor\", "
          "\"shape\": [\"n\"]}], \"reference\": \"y = z * 2\"}}}",
          "unknown name");
  refused("{\"functions\": {\"f\": {\"device\": \"cuda\", \"dtypes\": [\"float32\"], \"args\": [{\"name\": \"y\", "
          "\"kind\": \"tensor\", \"shape\": [\"n\"]}], \"reference\": \"y = y\"}}}",
          "CPU functions only");
  refused("{\"functions\": {\"f\": {\"args\": [], \"errors\": {\"weird\": \"TypeError\"}}}}", "unknown case");
  refused("{\"functions\": {\"f\": {\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": [1,2,3,4,5]}]}}}",
          "at most 4");
  refused("{\"functions\": {\"f\": {\"args\": [], \"returns\": \"int\"}}}", "returns");
}
