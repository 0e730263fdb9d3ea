/*
 * What the CPU scale kernel's two halves share: the portable body
 * (scale_cpu.c) and the x86-64 AVX2 body with non-temporal stores
 * (scale_cpu_x86.c), plus the tuning the tests must know about.
 */
#ifndef KERNELS_SCALE_CPU_H_
#define KERNELS_SCALE_CPU_H_

#include <stdint.h>

/* Outputs of at least this many bytes are written with non-temporal
 * (streaming) stores, which skip the read-for-ownership of every output
 * line and leave the caches to the input. Smaller outputs use ordinary
 * stores: they probably fit in cache, where ordinary stores are faster, and
 * the caller probably reads them again soon. 16 MiB is where scale_bench
 * shows the streaming loop overtaking the cached one on the build machines
 * (input and output together then fill their 32 MiB L3); see
 * spec/kernels.md. */
#define KERN_SCALE_STREAM_BYTES ((int64_t)16 << 20)

/* Environment variables read once, at the first call, mostly for tests and
 * measurements:
 *   KERN_SCALE_CPU_ISA=portable     the plain C loops every CPU can run,
 *                                   even where AVX2 is present (it never
 *                                   raises the instruction set);
 *   KERN_SCALE_CPU_STREAM_BYTES=N   stream from N bytes of output instead of
 *                                   KERN_SCALE_STREAM_BYTES (decimal, > 0). */
#define KERN_SCALE_ISA_ENV "KERN_SCALE_CPU_ISA"
#define KERN_SCALE_STREAM_ENV "KERN_SCALE_CPU_STREAM_BYTES"

/* Which body a call takes. */
typedef enum { KERN_ISA_PORTABLE = 1, KERN_ISA_AVX2 = 2 } KernScaleIsa;

/* The x86-64 body: computes n elements of the dtype with bit `dtype_bit`
 * (KERN_SCALE_*), with streaming stores when `stream` is non-zero. Both
 * pointers must be aligned to the element size. Defined only on x86-64. */
void kern_scale_cpu_avx2(void* out, const void* in, int dtype_bit, double factor, int64_t n,
                         int stream);

/* 1 when this CPU can run kern_scale_cpu_avx2 (AVX2 and F16C), else 0. */
int kern_scale_cpu_has_avx2(void);

#endif
