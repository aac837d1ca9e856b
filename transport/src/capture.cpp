#include <whd/transport/capture.hpp>

#include "capture_fail.hpp"
#include "sigmf_meta.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace whd::transport {

namespace {

namespace fs = std::filesystem;
using detail::fail;

constexpr std::string_view META_EXT = ".sigmf-meta";
constexpr std::string_view DATA_EXT = ".sigmf-data";
constexpr std::string_view ARCHIVE_EXT = ".sigmf";

constexpr const char* RAW_FORMS = ".cf32/.cfile (cf32_le), .ci16/.sc16 (ci16_le), .ci8/.sc8 (ci8)";

std::string lower(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The raw format an extension names, if any.
std::optional<datatype> raw_format_of(const std::string& ext)
{
  if (ext == ".cf32" || ext == ".cfile") {
    return datatype::cf32_le;
  }
  if (ext == ".ci16" || ext == ".sc16") {
    return datatype::ci16_le;
  }
  if (ext == ".ci8" || ext == ".sc8") {
    return datatype::ci8;
  }
  return std::nullopt;
}

fs::path with_suffix(fs::path base, std::string_view suffix)
{
  base += suffix;
  return base;
}

fs::path strip_extension(const fs::path& p)
{
  fs::path out = p;
  out.replace_extension();
  return out;
}

bool present(const fs::path& p)
{
  std::error_code ec;
  return fs::exists(p, ec);
}

/// `path` must be an existing file, not a directory.
void require_file(const fs::path& path, const std::string& what, const std::string& remedy)
{
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) {
    fail(path, what + " does not exist; " + remedy);
  }
  if (ec) {
    fail(path, what + " cannot be examined: " + ec.message() + "; check the path and its permissions");
  }
  if (st.type() == fs::file_type::directory) {
    fail(path, "is a directory, not a " + what + "; pass a capture file (NAME.sigmf-meta, NAME.sigmf-data or a "
                                                  "raw " + RAW_FORMS + " file)");
  }
}

/// Fill nof_samples from the data file's size, which must hold whole samples.
void count_samples(capture_info& info)
{
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(info.data_path, ec);
  if (ec) {
    fail(info.data_path, "size cannot be read: " + ec.message() + "; check the file and its permissions");
  }
  const std::uintmax_t bps = bytes_per_sample(info.type);
  if (size % bps != 0) {
    fail(info.data_path, "holds " + std::to_string(size) + " bytes, not a whole number of " + std::to_string(bps) +
                             "-byte " + std::string(to_string(info.type)) + " samples (" +
                             std::to_string(size % bps) +
                             " bytes left over): the file is cut short or its format is not " +
                             std::string(to_string(info.type)) + "; check the format or record it again");
  }
  info.nof_samples = size / bps;
}

capture_info open_sigmf(const fs::path& base, std::optional<datatype> format, annotation_use annotations)
{
  capture_info info;
  info.meta_path = with_suffix(base, META_EXT);
  info.data_path = with_suffix(base, DATA_EXT);
  const fs::path archive = with_suffix(base, ARCHIVE_EXT);
  std::error_code ec;
  if (!present(info.meta_path) && fs::is_regular_file(archive, ec)) {
    fail(archive, "is a SigMF archive (a tar file); archives are not read directly: extract it (tar xf) and pass "
                  "the NAME.sigmf-meta inside");
  }
  require_file(info.meta_path, "SigMF meta file",
               "a SigMF recording needs NAME.sigmf-meta beside NAME.sigmf-data (for a raw file, use a raw "
               "extension " + std::string(RAW_FORMS) + " or pass the format)");
  require_file(info.data_path, "SigMF data file",
               "its meta " + info.meta_path.filename().string() +
                   " is there but the samples are not; copy NAME.sigmf-data beside NAME.sigmf-meta");
  detail::sigmf_meta meta = detail::read_sigmf_meta(info.meta_path, annotations == annotation_use::keep);
  if (format && *format != meta.type) {
    fail(info.meta_path, "the format given (" + std::string(to_string(*format)) + ") disagrees with the meta's "
                         "core:datatype (" + std::string(to_string(meta.type)) +
                         "); drop the format option for SigMF recordings or fix the meta");
  }
  info.type = meta.type;
  info.sample_rate_sps = meta.sample_rate_sps;
  info.annotations = std::move(meta.annotations);
  info.annotations_reach = meta.annotations_reach;
  count_samples(info);
  return info;
}

capture_info open_raw(const fs::path& path, datatype type)
{
  require_file(path, "capture file", "check the path");
  capture_info info;
  info.data_path = path;
  info.type = type;
  count_samples(info);
  return info;
}

} // namespace

capture_info open_capture(const std::filesystem::path& path, std::optional<datatype> format, annotation_use annotations)
{
  if (path.empty()) {
    throw capture_error("no capture file given: pass NAME.sigmf-meta, NAME.sigmf-data or a raw " +
                        std::string(RAW_FORMS) + " file");
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fail(path, "is a directory; pass a capture file (NAME.sigmf-meta, NAME.sigmf-data or a raw " +
                   std::string(RAW_FORMS) + " file)");
  }
  // SigMF names its extensions in lower case; raw extensions are matched in any case.
  const std::string ext = path.extension().string();
  if (ext == META_EXT || ext == DATA_EXT || ext == ARCHIVE_EXT) {
    return open_sigmf(strip_extension(path), format, annotations);
  }
  if (const auto raw = raw_format_of(lower(ext))) {
    return open_raw(path, format.value_or(*raw));
  }
  // A bare NAME: a SigMF pair beside it comes first, then a raw file of the given format.
  if (present(with_suffix(path, META_EXT)) || present(with_suffix(path, DATA_EXT))) {
    return open_sigmf(path, format, annotations);
  }
  if (format) {
    return open_raw(path, *format);
  }
  if (!present(path)) {
    fail(path, "does not exist, and neither does " + with_suffix(path, META_EXT).filename().string() +
                   "; check the path");
  }
  fail(path, "the extension \"" + path.extension().string() + "\" does not name a sample format; pass the format (" +
                 detail::supported_datatypes() + ") or name the file " + RAW_FORMS);
}

} // namespace whd::transport
