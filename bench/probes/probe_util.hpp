// What the standalone CUDA probes in scripts/ share (they are built alone with nvcc,
// outside the project's CMake): a status check that exits, and a clock.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);     \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

/// Seconds on the steady clock.
inline double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
