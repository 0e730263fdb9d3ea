/* The layout guard (layout_guard.h) on made-up reported versions: the
 * verdict and the exact message, against the table generated from the
 * releases' own headers (spec/layouts.md has the same numbers). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "impl.h"

static char msg[1024];

static const char* const kept = "kind message backtrace update_backtrace";

static ConfLayoutVerdict compare(ConfLayoutPart part, const char* fields, const char* version) {
  return conf_layout_compare(part, fields, version, msg, sizeof msg);
}

Test(layout_guard, error_cell_read_on_0_1_7_says_mismatch) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain extra_context", "0.1.7"),
               CONF_LAYOUT_DIFFERS);
  cr_assert_str_eq(msg,
                   "layout mismatch: error cell is 56 bytes in 0.1.7, 72 in the headers used; "
                   "error cell has no cause_chain in 0.1.7 (offset 56 in the headers used); "
                   "error cell has no extra_context in 0.1.7 (offset 64 in the headers used)");
}

Test(layout_guard, whole_error_cell_on_0_1_7_says_mismatch) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, NULL, "0.1.7"), CONF_LAYOUT_DIFFERS);
  const char* head = "layout mismatch: error cell is 56 bytes in 0.1.7, 72 in the headers used; ";
  cr_assert_eq(strncmp(msg, head, strlen(head)), 0, "got: %s", msg);
}

Test(layout_guard, fields_that_kept_their_place_are_the_same) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, kept, "0.1.7"), CONF_LAYOUT_SAME, "got: %s",
               msg);
  cr_assert_str_eq(msg, "");
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, NULL, "0.1.8"), CONF_LAYOUT_SAME, "got: %s",
               msg);
}

Test(layout_guard, struct_absent_in_the_release) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFISeqCell, "data size", "0.1.8"), CONF_LAYOUT_DIFFERS);
  cr_assert_str_eq(msg,
                   "layout mismatch: sequence cell (TVMFFISeqCell) does not exist in 0.1.8, "
                   "32 bytes in the headers used");
}

Test(layout_guard, field_width_and_rename) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFITypeAttrColumn, "data size", "0.1.8"),
               CONF_LAYOUT_DIFFERS);
  cr_assert_str_eq(msg,
                   "layout mismatch: type attribute column field size is 8 bytes in 0.1.8, "
                   "4 in the headers used");
  /* 0.1.8 calls it default_value, at the same offset and size. */
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIFieldInfo, "name default_value_or_factory", "0.1.8"),
               CONF_LAYOUT_SAME, "got: %s", msg);
}

Test(layout_guard, releases_reporting_one_version_that_disagree_are_uncertain) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFISeqCell, NULL, "0.1.9"), CONF_LAYOUT_UNCERTAIN);
  cr_assert_str_eq(msg,
                   "layout uncertain: the releases reporting 0.1.9 (0.1.8.post0, 0.1.8.post1, "
                   "0.1.9) disagree on the sequence cell (TVMFFISeqCell)");
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, NULL, "0.1.9"), CONF_LAYOUT_SAME, "got: %s",
               msg);
}

Test(layout_guard, unknown_release_and_unknown_field) {
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, NULL, "9.9.9"), CONF_LAYOUT_UNKNOWN);
  cr_assert_str_eq(msg, "no layout is recorded for release 9.9.9");
  cr_assert_eq(compare(CONF_LAYOUT_TVMFFIErrorCell, "kind cause", "0.1.7"), CONF_LAYOUT_BAD_FIELD);
  cr_assert_str_eq(msg,
                   "conformance_layout_guard: error cell (TVMFFIErrorCell) has no field "
                   "`cause` in the headers used");
}

/* The release the headers used describe is recorded with exactly their
 * layout, and every row of the table is whole. */
Test(layout_guard, the_headers_own_release_matches_them) {
  char own[32];
  snprintf(own, sizeof own, "%d.%d.%d", TVM_FFI_VERSION_MAJOR, TVM_FFI_VERSION_MINOR,
           TVM_FFI_VERSION_PATCH);
  cr_assert(conf_layout_table_is_whole(), "a row of layout_releases.inc is short");
  cr_assert_gt(conf_layout_fact_count(), 100u);
  for (int part = 0; part < CONF_LAYOUT_PARTS; ++part)
    cr_expect_eq(compare((ConfLayoutPart)part, NULL, own), CONF_LAYOUT_SAME, "%s: %s", own, msg);
}
