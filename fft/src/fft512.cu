#include <whd/fft/fft512.hpp>
