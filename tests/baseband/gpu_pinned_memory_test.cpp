// Page-locked host memory (cuda::pinned_buffer): below PINNED_REGISTER_FROM it is the
// driver's (cudaMallocHost), from it on anonymous memory registered with the driver.
// Either way the driver must see page-locked host memory, and bytes must cross to the
// device and back unchanged, at odd sizes and through moves.
#include <whd/transport/cuda.hpp>

#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace {

namespace cuda = whd::cuda;

/// A pattern no two nearby bytes share, so a shifted or partial copy shows.
uint8_t pattern(std::size_t i) { return uint8_t((i * 2654435761u) >> 13); }

void expect_page_locked(const void* p)
{
  cudaPointerAttributes a{};
  WHD_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
  EXPECT_EQ(a.type, cudaMemoryTypeHost) << "the driver does not see page-locked host memory";
}

/// Host -> device -> another pinned buffer, asynchronously on a stream, as the receiver copies.
void expect_round_trip(const cuda::pinned_buffer<uint8_t>& src)
{
  cuda::device_buffer<uint8_t> dev(src.size());
  cuda::pinned_buffer<uint8_t> back(src.size());
  expect_page_locked(back.data());
  cuda::stream s;
  WHD_CUDA_CHECK(cudaMemcpyAsync(dev.data(), src.data(), src.size(), cudaMemcpyHostToDevice, s.get()));
  WHD_CUDA_CHECK(cudaMemcpyAsync(back.data(), dev.data(), src.size(), cudaMemcpyDeviceToHost, s.get()));
  s.synchronize();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < src.size(); ++i) {
    wrong += back[i] != pattern(i);
  }
  EXPECT_EQ(wrong, 0u) << "of " << src.size() << " bytes";
}

} // namespace

TEST(gpu_pinned_memory, either_way_of_making_it_is_page_locked_and_crosses_unchanged)
{
  WHD_REQUIRE_GPU();
  WHD_CUDA_CHECK(cudaSetDevice(0));
  for (const std::size_t bytes : {std::size_t(1) << 20, cuda::PINNED_REGISTER_FROM - 1, cuda::PINNED_REGISTER_FROM,
                                  (std::size_t(37) << 20) + 123}) {
    SCOPED_TRACE(bytes);
    cuda::pinned_buffer<uint8_t> buf(bytes);
    ASSERT_EQ(buf.size(), bytes);
    expect_page_locked(buf.data());
    expect_page_locked(buf.data() + bytes - 1);
    for (std::size_t i = 0; i < bytes; ++i) {
      buf[i] = pattern(i);
    }
    expect_round_trip(buf);
  }
}

TEST(gpu_pinned_memory, moves_hand_over_the_memory_and_free_it_once)
{
  WHD_REQUIRE_GPU();
  WHD_CUDA_CHECK(cudaSetDevice(0));
  const std::size_t big = cuda::PINNED_REGISTER_FROM * 3;
  cuda::pinned_buffer<uint8_t> a(big);
  for (std::size_t i = 0; i < big; ++i) {
    a[i] = pattern(i);
  }
  const uint8_t* p = a.data();
  cuda::pinned_buffer<uint8_t> b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  // Assigned over a buffer of the other kind: that one is freed, this one kept.
  cuda::pinned_buffer<uint8_t> c(4096);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(b.data(), nullptr);
  expect_page_locked(c.data());
  expect_round_trip(c);
  // And the other way: a small buffer moved over a registered one.
  cuda::pinned_buffer<uint8_t> d(big);
  cuda::pinned_buffer<uint8_t> e(4096);
  const uint8_t* q = e.data();
  d = std::move(e);
  EXPECT_EQ(d.data(), q);
  expect_page_locked(d.data());
}
