/// @file fuzz_targets.hpp
/// The fuzz targets: each takes one input of any bytes, drives a reader or the
/// receiver with it, and aborts (with a message on stderr) when a property that
/// must hold for every input fails. libFuzzer calls them through fuzz_main.cpp;
/// the corpus test (corpus_replay_test.cpp) replays data/fuzz/<target>/ through
/// them in the ordinary and the sanitizer builds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace whd::fuzz {

/// SigMF meta reader: byte 0 is the data file's size in bytes, the rest the meta.
int sigmf_meta_one(const uint8_t* data, std::size_t size);

/// Capture reader over a raw or SigMF file: byte 0 picks the format and layout,
/// bytes 1..2 the reads' offsets and lengths, the rest is the data file.
int capture_reader_one(const uint8_t* data, std::size_t size);

/// Frame location and decoding (CPU receiver): byte 0 picks the sample format,
/// byte 1 the symbols per batch, the rest are the samples.
int frame_decoder_one(const uint8_t* data, std::size_t size);
/// Profile 2's FEC decoder: bytes 0..5 a received header (its mode field parsed),
/// byte 6 the MCS, bytes 7..8 Nd (1..64), the rest the frame's soft values, repeated.
int coded_decoder_one(const uint8_t* data, std::size_t size);

} // namespace whd::fuzz
