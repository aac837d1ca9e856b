#include "launch.hpp"
#include "variant_index.hpp"

#include <whd/fft/fft512.hpp>
#include <whd/fft/tune_cache.hpp>

#include <stdexcept>
#include <string>

namespace whd::fft {

namespace {

const detail::launch_fn* table_of(input_type t)
{
  switch (t) {
  case input_type::cf32: return detail::launch_table_cf32();
  case input_type::cf16: return detail::launch_table_cf16();
  case input_type::ci8: return detail::launch_table_ci8();
  }
  throw std::invalid_argument("fft512: unknown input type");
}

/// Checks the arguments of every entry point and launches (count == 0: nothing).
void run(input_type type, const variant& v, detail::launch_args a, std::size_t count, launch_options options)
{
  const int index = detail::variant_index(v);
  if (index < 0) {
    throw std::invalid_argument("fft512: " + std::to_string(v.groups) +
                                " transforms per block is not a variant (use 1, 2, 4 or 8)");
  }
  if (count > MAX_BATCH) {
    throw std::invalid_argument("fft512: batch of " + std::to_string(count) + " exceeds MAX_BATCH (2^31)");
  }
  if (count == 0) {
    return;
  }
  if (a.d_in == nullptr || a.d_out == nullptr) {
    throw std::invalid_argument("fft512: null device pointer");
  }
  if (type == input_type::ci8 && (a.d_scale == nullptr || a.per_scale == 0)) {
    throw std::invalid_argument("fft512: int8 input needs scales and nof_per_scale >= 1");
  }
  a.count = static_cast<std::uint32_t>(count);
  a.max_blocks = options.max_blocks;
  table_of(type)[index](a);
}

std::uint32_t per_scale_of(std::size_t nof_per_scale)
{
  // Larger groups than the batch itself share one scale anyway.
  return static_cast<std::uint32_t>(std::min<std::size_t>(nof_per_scale, MAX_BATCH));
}

} // namespace

void fft512_variant(const variant& v, const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream,
                    launch_options options)
{
  run(input_type::cf32, v, {d_in, nullptr, 1, d_out, 0, 0, stream}, count, options);
}

void fft512_variant(const variant& v, const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream,
                    launch_options options)
{
  run(input_type::cf16, v, {d_in, nullptr, 1, d_out, 0, 0, stream}, count, options);
}

void fft512_variant(const variant& v, const ci8* d_in, const float* d_scale, std::size_t nof_per_scale,
                    cf32* d_out, std::size_t count, stream_handle stream, launch_options options)
{
  run(input_type::ci8, v, {d_in, d_scale, per_scale_of(nof_per_scale), d_out, 0, 0, stream}, count, options);
}

void fft512(const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream)
{
  fft512_variant(default_variant(input_type::cf32), d_in, d_out, count, stream);
}

void fft512(const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream)
{
  fft512_variant(default_variant(input_type::cf16), d_in, d_out, count, stream);
}

void fft512(const ci8* d_in, const float* d_scale, std::size_t nof_per_scale, cf32* d_out, std::size_t count,
            stream_handle stream)
{
  fft512_variant(default_variant(input_type::ci8), d_in, d_scale, nof_per_scale, d_out, count, stream);
}

void fft512_plan::run(const cf32* d_in, cf32* d_out, std::size_t count, stream_handle stream) const
{
  fft512_variant(choice_[input_type::cf32], d_in, d_out, count, stream);
}

void fft512_plan::run(const cf16* d_in, cf32* d_out, std::size_t count, stream_handle stream) const
{
  fft512_variant(choice_[input_type::cf16], d_in, d_out, count, stream);
}

void fft512_plan::run(const ci8* d_in, const float* d_scale, std::size_t nof_per_scale, cf32* d_out,
                      std::size_t count, stream_handle stream) const
{
  fft512_variant(choice_[input_type::ci8], d_in, d_scale, nof_per_scale, d_out, count, stream);
}

} // namespace whd::fft
