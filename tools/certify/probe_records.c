#include "probe_records.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "probe_protocol.h"

static int record_fd = -1;
static int32_t record_index = -1;

void cert_record_open(int fd) { record_fd = fd; }

int cert_record_fd(void) { return record_fd; }

int32_t cert_record_index(int32_t index) {
  int32_t was = record_index;
  record_index = index;
  return was;
}

void cert_write_all(int fd, const void* p, size_t n) {
  const char* c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= (size_t)w;
  }
}

/* One write per record when it fits a pipe's atomic size, so a record is
 * never torn by the signal handler's own. */
void cert_send_record(int32_t type, const void* payload, uint32_t len) {
  char buf[4096];
  CertRecordHeader h = {type, record_index, len};
  if (sizeof h + len <= sizeof buf) {
    memcpy(buf, &h, sizeof h);
    if (len) memcpy(buf + sizeof h, payload, len);
    cert_write_all(record_fd, buf, sizeof h + len);
  } else {
    cert_write_all(record_fd, &h, sizeof h);
    cert_write_all(record_fd, payload, len);
  }
}

void cert_send_text(int32_t type, const char* text) {
  size_t n = strlen(text);
  if (n > CERT_TEXT_MAX) n = CERT_TEXT_MAX;
  cert_send_record(type, text, (uint32_t)n);
}
