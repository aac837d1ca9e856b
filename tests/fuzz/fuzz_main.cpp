// libFuzzer's entry point for one target, named at compile time (WHD_FUZZ_TARGET).
#include "fuzz_targets.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
  return whd::fuzz::WHD_FUZZ_TARGET(data, size);
}
