/* Text from an untrusted library (error messages, symbol names) made safe
 * for every report: valid UTF-8, no control characters that a terminal, an
 * XML parser or a browser would act on, and the escapers XML and HTML need. */
#ifndef CERT_TEXT_H_
#define CERT_TEXT_H_

#include <stdio.h>

/* A copy of `s` that is valid UTF-8: each byte of an invalid sequence, and
 * each control character other than tab and newline (C0, DEL, C1), becomes
 * the four characters `\xNN` (C1 characters: `\u0080`..`\u009f`). NULL when
 * out of memory; NULL `s` counts as "". */
char* cert_text_clean(const char* s);

/* Writes `s` (already clean) with &, <, >, " and ' escaped: the escaping
 * both XML attribute/element text and HTML need. */
void cert_text_put_markup(FILE* out, const char* s);

/* Cleans then escapes: the one call the XML and HTML writers use for any
 * string that came from a finding. */
void cert_text_put_untrusted(FILE* out, const char* s);

/* Writes `s` as one POSIX shell word: as is when no character in it is
 * special to a shell, else single-quoted (' becomes '\''). */
void cert_text_put_shell(FILE* out, const char* s);

#endif
