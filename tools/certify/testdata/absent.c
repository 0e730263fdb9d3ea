/* Built as libcert_absent.so and never shipped beside the library that needs it. */
int cert_absent_fn(int x) { return x + 1; }
