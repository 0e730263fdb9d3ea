/* What loading a library registered: the runtime's global function names
 * and type keys, asked of the runtime itself. */
#ifndef CERT_PROBE_REGISTRY_H_
#define CERT_PROBE_REGISTRY_H_

/* `tag` on the first line, then "G name" per global function ("G?" when
 * the runtime cannot list them) and "T key" per type; malloc'd, NULL when
 * out of memory. */
char* cert_registry_text(const char* tag);

#endif
