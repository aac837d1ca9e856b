/// @file sigmf_meta_scan.hpp
/// A quick read of a meta's annotations in the form whd-tx writes them (profile §6),
/// without nlohmann's lexer: a capture of many frames has an annotation a frame, and
/// lexing 100 000 of them into tokens took most of a 20 MB meta's read. Private to the
/// transport library; read_sigmf_meta parses the rest of the document as before.
#pragma once

#include <whd/transport/capture.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace whd::transport::detail {

/// What scan_annotations read of a meta's top-level "annotations" array.
struct annotations_scan {
  std::size_t begin = 0;               ///< offset of the array's '[' in the text
  std::size_t end = 0;                 ///< offset one past its ']'
  std::vector<annotation> annotations; ///< its elements in order, when asked to keep them
  uint64_t reach = 0;                  ///< largest sample_start + sample_count (saturated), 0 for none
};

/// Find the first top-level member "annotations" of `text` (the members before it
/// walked, their strings checked as JSON) and read its value, when that value is an
/// array of objects whose "core:sample_start"/"core:sample_count" are non-negative
/// integers below 2^64 and whose "core:label"/"core:comment" are strings, every byte of
/// it valid JSON (strings, numbers finite as doubles, literals, nesting up to 32 deep).
/// The text after the array is not read.
/// @param keep_annotations fill annotations_scan::annotations (else only the reach)
/// @return nullopt where the text is in any other form, valid or not (no top-level
///   object, no "annotations", an element SigMF refuses, a fault): the caller then
///   reads it with the full parser, which says what is wrong. Never throws but bad_alloc.
std::optional<annotations_scan> scan_annotations(std::string_view text, bool keep_annotations);

} // namespace whd::transport::detail
