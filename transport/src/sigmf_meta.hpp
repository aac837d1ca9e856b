/// @file sigmf_meta.hpp
/// The SigMF 1.x core fields the project reads and writes (profile §6). Private to
/// the transport library: open_capture reads with it, sigmf_writer writes with it.
#pragma once

#include <whd/transport/capture.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace whd::transport::detail {

/// What a `.sigmf-meta` says about its recording.
struct sigmf_meta {
  datatype type = datatype::cf32_le;
  std::optional<double> sample_rate_sps;
  std::vector<annotation> annotations; ///< empty unless asked to keep them
  uint64_t annotations_reach = 0;      ///< largest sample_start + sample_count (saturated), 0 for none
};

/// Read and check `meta_path`: JSON, `global` with a supported `core:datatype`, a
/// positive `core:sample_rate` if any, well-typed annotations, no header bytes.
/// Annotations in the form whd-tx writes are read without nlohmann's lexer
/// (sigmf_meta_scan.hpp); any other meta, and every faulty one, by nlohmann whole.
/// @param keep_annotations keep each annotation (else only their reach): both check them all
/// @throws capture_error naming `meta_path`, the problem and what to do.
sigmf_meta read_sigmf_meta(const std::filesystem::path& meta_path, bool keep_annotations);

/// The `.sigmf-meta` text of a recording written by whd-tx: global (datatype, sample
/// rate, version 1.0.0, description unless empty, recorder), one capture segment at
/// sample 0, `annotations` sorted by sample_start (empty label/comment omitted).
std::string sigmf_meta_text(datatype type, double sample_rate_sps, const std::string& description,
                            std::vector<annotation> annotations);

/// "cf32_le, ci16_le, ci8": the datatypes a recording may have, for messages.
std::string supported_datatypes();

} // namespace whd::transport::detail
