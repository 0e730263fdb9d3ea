#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build step: every harness of fuzz/, built with
# $CC $CFLAGS, linked with $CXX and $LIB_FUZZING_ENGINE, into $OUT (with a
# seed corpus zip, a dictionary and an options file beside each). See
# fuzz/build.sh for the variables it reads, RUNTIME_SO and KERNEL_SO among
# them (fuzz your own libtvm_ffi.so or kernel library).
exec "${SRC:?}/tvm-ffi-conformance/fuzz/build.sh"
