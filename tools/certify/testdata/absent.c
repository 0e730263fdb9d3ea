/* Built as libcert_absent.so beside, never on the search path of, the
 * library that needs it (the way a DSL's runtime library, such as CuTe
 * DSL's libcute_dsl_runtime.so, is found only when its package loads it):
 * it defines all twelve functions libcst_needs_absent.so calls. */
#define ABSENT(k) \
  int cert_absent_fn##k(int x) { return x + k; }
ABSENT(0)
ABSENT(1)
ABSENT(2)
ABSENT(3)
ABSENT(4)
ABSENT(5)
ABSENT(6)
ABSENT(7)
ABSENT(8)
ABSENT(9)
ABSENT(10)
ABSENT(11)
