/* The child's side of the record pipe (the records of probe_child.h): what
 * a worker and its batch processes tell the parent, each record tagged with
 * the command it is about. */
#ifndef CERT_PROBE_RECORDS_H_
#define CERT_PROBE_RECORDS_H_

#include <stddef.h>
#include <stdint.h>

/* Records go to `fd` from now on. */
void cert_record_open(int fd);
int cert_record_fd(void);

/* Tags the records that follow with command `index` (-1: none); returns
 * the index they carried before. */
int32_t cert_record_index(int32_t index);

/* Writes all n bytes unless the descriptor fails (a write cut by a signal
 * goes on). */
void cert_write_all(int fd, const void* p, size_t n);

void cert_send_record(int32_t type, const void* payload, uint32_t len);

/* A text record, cut at CERT_TEXT_MAX bytes. */
void cert_send_text(int32_t type, const char* text);

#endif
