/* CERT_SANITIZED: 1 when this file is built under ASan or TSan, whose
 * shadow memory makes an address-space cap meaningless. */
#ifndef CERT_SANITIZED_H_
#define CERT_SANITIZED_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CERT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CERT_SANITIZED 1
#endif
#endif
#ifndef CERT_SANITIZED
#define CERT_SANITIZED 0
#endif

#endif
