// Faults of the GPU backend: device memory too short at start (the batch is
// halved until the buffers fit, a notice says so, and the bits are the truth's);
// a stop raised while a frame is being decoded (that frame is finished and no
// other is started, as on the CPU).
#include <whd/baseband/generator.hpp>
#include <whd/baseband/gpu_receiver.hpp>
#include <whd/baseband/payload_sinks.hpp>
#include <whd/transport/capture.hpp>
#include <whd/transport/cuda.hpp>

#include "gpu_guard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

namespace {

namespace bb = whd::baseband;
namespace p = whd::profile;
namespace tr = whd::transport;

/// Holds all but `leave` bytes of device 0's free memory.
class memory_hog {
public:
  explicit memory_hog(std::size_t leave)
  {
    WHD_CUDA_CHECK(cudaSetDevice(0));
    std::size_t free = 0, total = 0;
    WHD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    // Large blocks first; whatever cannot be had in one piece is taken in smaller ones.
    for (std::size_t block = std::size_t(1) << 34; block >= (std::size_t(1) << 21); block /= 2) {
      while (free > leave + block) {
        void* ptr = nullptr;
        if (cudaMalloc(&ptr, block) != cudaSuccess) {
          (void)cudaGetLastError();
          break;
        }
        blocks_.push_back(ptr);
        WHD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      }
    }
    free_ = free;
  }
  ~memory_hog()
  {
    for (void* ptr : blocks_) {
      WHD_CUDA_CHECK_NOTHROW(cudaFree(ptr));
    }
  }
  memory_hog(const memory_hog&) = delete;
  memory_hog& operator=(const memory_hog&) = delete;
  std::size_t free_bytes() const noexcept { return free_; }

private:
  std::vector<void*> blocks_;
  std::size_t free_ = 0;
};

TEST(gpu_faults, short_device_memory_at_start_halves_the_batch_and_decodes_the_truth)
{
  WHD_REQUIRE_GPU();
  // One frame of 70 000 QPSK symbols: enough for a batch of 2^16 (1 GiB of f32
  // link buffers over 4 streams) to be asked for and not clamped to the capture.
  bb::capture_config cc;
  cc.nof_frames = 1;
  cc.nds = {70000};
  cc.mods = {p::modulation::qpsk};
  cc.seed = 31;
  bb::memory_capture cap;
  bb::generate_capture(cc, cap);
  const tr::memory_source src(cap.samples());

  bb::gpu_config g;
  g.link = tr::link_format::f32;
  g.symbols_per_batch = std::size_t(1) << 16;
  g.nof_streams = 4;
  std::vector<std::string> notices;
  g.notice = [&](const std::string& line) { notices.push_back(line); };
  bb::memory_sink sink;
  bb::receive_result res;
  std::size_t left = 0;
  {
    // 384 MiB left: the asked batch needs ~1.1 GB, one of 2^14 ~0.27 GB.
    const memory_hog hog(std::size_t(384) << 20);
    left = hog.free_bytes();
    auto rx = bb::make_gpu_receiver(bb::rx_config{}, g);
    res = rx->run(src, sink);
  }
  SCOPED_TRACE("device memory left free by the hog: " + std::to_string(left >> 20) + " MiB");
  ASSERT_EQ(notices.size(), 1u) << "one log line for the fallback";
  EXPECT_NE(notices[0].find(std::to_string(res.resources.symbols_per_batch)), std::string::npos) << notices[0];
  EXPECT_LT(res.resources.symbols_per_batch, g.symbols_per_batch);
  EXPECT_GE(res.resources.symbols_per_batch, std::size_t(64));
  EXPECT_LE(res.resources.device_bytes, left);
  ASSERT_EQ(res.frames.size(), 1u);
  EXPECT_EQ(res.frames[0].symbols, 70000u);
  EXPECT_EQ(sink.bytes(), cap.truth()) << "a noiseless frame decodes to its payload exactly";
}

TEST(gpu_faults, memory_is_not_reduced_when_it_suffices)
{
  WHD_REQUIRE_GPU();
  bb::capture_config cc;
  cc.nof_frames = 2;
  cc.nds = {300};
  cc.seed = 32;
  bb::memory_capture cap;
  bb::generate_capture(cc, cap);
  const tr::memory_source src(cap.samples());
  bb::gpu_config g;
  g.symbols_per_batch = 128;
  int notices = 0;
  g.notice = [&](const std::string&) { ++notices; };
  bb::memory_sink sink;
  const auto res = bb::make_gpu_receiver(bb::rx_config{}, g)->run(src, sink);
  EXPECT_EQ(notices, 0);
  EXPECT_EQ(res.resources.symbols_per_batch, 128u);
  EXPECT_GT(res.resources.device_bytes, 0u);
  EXPECT_GT(res.resources.pinned_bytes, 0u);
  EXPECT_GE(res.resources.device_used_bytes, res.resources.device_bytes);
  EXPECT_GT(res.resources.peak_rss_bytes, 0u);
  EXPECT_EQ(sink.bytes(), cap.truth());
}

/// A sink that raises the stop flag on its first write.
class stopping_sink final : public bb::payload_sink {
public:
  explicit stopping_sink(std::atomic<bool>& stop) : stop_(stop) {}
  void write(std::span<const uint8_t> bytes) override
  {
    stop_.store(true);
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }

private:
  std::atomic<bool>& stop_;
  std::vector<uint8_t> bytes_;
};

TEST(gpu_faults, stop_during_a_frame_finishes_it_and_starts_no_other)
{
  WHD_REQUIRE_GPU();
  bb::capture_config cc;
  cc.nof_frames = 3;
  cc.nds = {100, 20};
  cc.mods = {p::modulation::qam16};
  cc.seed = 921;
  cc.impairments.snr_dB = 30.0;
  cc.impairments.cfo_Hz = 0.5e6;
  bb::memory_capture cap;
  bb::generate_capture(cc, cap);
  const tr::memory_source src(cap.samples());
  std::atomic<bool> stop{false};
  bb::rx_config rc;
  rc.stop = &stop;
  // One slot of 5 symbols: the caller cannot pass the first write by more than a
  // batch, so the stop is raised while the first frame is still being queued.
  bb::gpu_config g;
  g.symbols_per_batch = 5;
  g.nof_streams = 1;
  stopping_sink sink(stop);
  const auto res = bb::make_gpu_receiver(rc, g)->run(src, sink);
  EXPECT_TRUE(res.interrupted);
  ASSERT_EQ(res.frames.size(), 1u);
  const auto& f = res.frames[0];
  EXPECT_EQ(f.symbols, 100u);
  EXPECT_FALSE(f.truncated);
  EXPECT_EQ(res.payload_bytes, f.payload_bytes);
  ASSERT_EQ(sink.bytes().size(), f.payload_bytes);
  EXPECT_TRUE(std::equal(sink.bytes().begin(), sink.bytes().end(), cap.truth().begin()));
}

} // namespace
