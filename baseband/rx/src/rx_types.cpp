#include <whd/baseband/rx_types.hpp>

#include <sys/resource.h>

namespace whd::baseband {

uint64_t peak_rss_bytes() noexcept
{
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) {
    return 0;
  }
  return uint64_t(u.ru_maxrss) * 1024; // kilobytes on Linux
}

} // namespace whd::baseband
