/// @file gpu_guard.hpp
/// GPU tests skip, with the reason, where no CUDA device is usable (CI).
#pragma once

#include <gtest/gtest.h>

#include <whd/transport/cuda.hpp>

/// Skip the current test with a visible reason when no CUDA device is usable.
#define WHD_REQUIRE_GPU()                                                                                              \
  do {                                                                                                                 \
    if (::whd::cuda::device_count() == 0) {                                                                            \
      GTEST_SKIP() << "GPU test skipped: " << ::whd::cuda::no_device_reason();                                         \
    }                                                                                                                  \
  } while (0)
