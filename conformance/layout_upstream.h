/* Layout facts as upstream's own c_api.h states them (layout_upstream.c).
 * Plain types only: this header is shared by translation units compiled
 * against two different c_api.h files. */
#ifndef CONFORMANCE_LAYOUT_UPSTREAM_H_
#define CONFORMANCE_LAYOUT_UPSTREAM_H_

#include <stddef.h>

typedef struct {
  const char* expr; /* the expression, as written in layout_facts.inc */
  long long value;
} ConfLayoutFact;

/* The facts in layout_facts.inc order; *count receives how many. */
const ConfLayoutFact* conf_upstream_layout(size_t* count);

#endif
