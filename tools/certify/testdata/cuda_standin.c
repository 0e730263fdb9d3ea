/* Linked against in place of the NVIDIA driver (soname libcuda.so.1) and
 * never shipped: the library that needs it loads against the real driver,
 * or, where there is none, against the CUDA toolkit's driver stub. */
int cuInit(unsigned flags) { return (int)flags; }
int cuDeviceGetCount(int* count) { return *count = 0; }
int cuGetErrorName(int error, const char** name) { return *name = "", error; }
