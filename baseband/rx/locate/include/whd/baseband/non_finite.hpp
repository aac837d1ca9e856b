/// @file non_finite.hpp
/// Samples whose I or Q is NaN or infinite, taken as 0 wherever the receiver reads
/// them (the search's blocks, the locator's windows, the data symbols).
#pragma once

#include <whd/transport/sample_types.hpp>

#include <cstddef>
#include <span>

namespace whd::baseband {

/// Replaces every sample whose I or Q is NaN or infinite by 0.
/// @param[in,out] x samples, any length
/// @return the number of samples replaced
std::size_t zero_non_finite(std::span<cf32> x);

} // namespace whd::baseband
