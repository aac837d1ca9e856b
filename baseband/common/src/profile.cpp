// The profile is header-only; this unit makes the header compile on its own.
#include <whd/baseband/profile.hpp>
