#include <whd/baseband/generator_files.hpp>

#include <whd/transport/capture.hpp>

#include <nlohmann/json.hpp>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace whd::baseband {

namespace {

std::filesystem::path with_suffix(const std::filesystem::path& base, const std::string& suffix)
{
  return std::filesystem::path(base.string() + suffix);
}

/// Raw interleaved I/Q, little-endian, in one of the profile's datatypes (§6).
/// Conversion as transport::sigmf_writer: round(sample * scale), saturated.
class raw_writer {
public:
  raw_writer(const std::filesystem::path& path, datatype type) : path_(path), type_(type)
  {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) {
      throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
    }
  }
  ~raw_writer()
  {
    if (file_ != nullptr) {
      std::fclose(file_);
    }
  }
  raw_writer(const raw_writer&) = delete;
  raw_writer& operator=(const raw_writer&) = delete;

  void write(std::span<const cf32> samples, float scale)
  {
    bytes_.resize(samples.size() * bytes_per_sample(type_));
    std::byte* o = bytes_.data();
    auto put_le = [&o](uint32_t v, int nof_bytes) {
      for (int i = 0; i < nof_bytes; ++i) {
        *o++ = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);
      }
    };
    for (const cf32& x : samples) {
      for (float c : {x.real(), x.imag()}) {
        switch (type_) {
        case datatype::cf32_le: put_le(std::bit_cast<uint32_t>(c), 4); break;
        case datatype::ci16_le: put_le(static_cast<uint16_t>(saturate(c * scale, 32767.0f)), 2); break;
        case datatype::ci8: put_le(static_cast<uint8_t>(saturate(c * scale, 127.0f)), 1); break;
        }
      }
    }
    if (std::fwrite(bytes_.data(), 1, bytes_.size(), file_) != bytes_.size()) {
      throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
    }
  }

  void close()
  {
    if (file_ != nullptr) {
      const int rc = std::fclose(file_);
      file_ = nullptr;
      if (rc != 0) {
        throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
      }
    }
  }

private:
  static int32_t saturate(float v, float full)
  {
    const float r = std::nearbyint(v);
    return static_cast<int32_t>(std::fmax(-full - 1.0f, std::fmin(full, r)));
  }

  std::filesystem::path path_;
  datatype type_;
  std::FILE* file_ = nullptr;
  std::vector<std::byte> bytes_;
};

/// The sink that writes the samples and the sidecars.
class file_sink final : public capture_sink {
public:
  file_sink(const output_config& out, output_summary& summary) : out_(out), summary_(summary) {}

  void begin(const capture_plan& plan) override
  {
    summary_.plan = plan;
    summary_.scale = output_scale(out_.type, plan);
    full_scale_ = integer_full_scale(out_.type);
    if (plan.noise_power > 0.0) {
      snr_text_ = ", SNR " + format_dB(plan.signal_power / plan.noise_power);
    }
    if (out_.raw) {
      summary_.data_path = with_suffix(out_.base, raw_extension(out_.type));
      raw_ = std::make_unique<raw_writer>(summary_.data_path, out_.type);
    } else {
      summary_.data_path = with_suffix(out_.base, ".sigmf-data");
      summary_.meta_path = with_suffix(out_.base, ".sigmf-meta");
      sigmf_ = std::make_unique<transport::sigmf_writer>(out_.base, out_.type, out_.sample_rate_sps, out_.description);
    }
    summary_.truth_path = with_suffix(out_.base, ".truth");
    summary_.frames_path = with_suffix(out_.base, ".frames.json");
    truth_.open(summary_.truth_path, std::ios::binary | std::ios::trunc);
    frames_.open(summary_.frames_path, std::ios::trunc);
    if (!truth_ || !frames_) {
      throw std::runtime_error("cannot create " + summary_.truth_path.string() + " or " +
                               summary_.frames_path.string());
    }
    frames_ << '[';
  }

  void samples(uint64_t, std::span<const cf32> block) override
  {
    const float scale = summary_.scale;
    // A component clips when it rounds past full scale.
    const double clip = full_scale_ > 0.0 ? full_scale_ + 0.5 : std::numeric_limits<double>::infinity();
    double peak = summary_.peak;
    for (const cf32& x : block) {
      const double m = std::max(std::fabs(static_cast<double>(x.real()) * scale),
                                std::fabs(static_cast<double>(x.imag()) * scale));
      peak = std::max(peak, m);
      summary_.nof_clipped += m >= clip ? 1u : 0u;
    }
    summary_.peak = peak;
    if (raw_) {
      raw_->write(block, scale);
    } else {
      sigmf_->write(block, scale);
    }
  }

  void frame(const frame_record& rec) override
  {
    nlohmann::ordered_json j;
    j["start"] = rec.start;
    j["nd"] = rec.nd;
    j["mod"] = profile::to_string(rec.mod);
    j["seq"] = rec.seq;
    j["header_ok"] = rec.header_ok;
    if (rec.mcs != profile::NO_MCS) {
      j["mcs"] = rec.mcs;
      j["payload_bytes"] = rec.payload_bytes;
    }
    frames_ << (nof_frames_++ == 0 ? "\n " : ",\n ") << j.dump();
    if (sigmf_) {
      transport::annotation a;
      a.sample_start = rec.start;
      a.sample_count = rec.samples_present;
      a.label = std::string(profile::to_string(rec.mod)) + (rec.mcs != profile::NO_MCS ? "-mcs" + std::to_string(rec.mcs) : "");
      a.comment = "seq " + std::to_string(rec.seq) + ", nd " + std::to_string(rec.nd) +
                  (rec.header_ok ? ", header ok" : ", header corrupted (CRC fails)") +
                  (rec.samples_present < frame_samples(rec.nd) ? ", cut off" : "") + snr_text_;
      sigmf_->add_annotation(std::move(a));
    }
  }

  void truth(std::span<const uint8_t> bytes) override
  {
    truth_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    summary_.nof_truth_bytes += bytes.size();
  }

  void end() override
  {
    frames_ << (nof_frames_ == 0 ? "]\n" : "\n]\n");
    frames_.close();
    truth_.close();
    if (!frames_ || !truth_) {
      throw std::runtime_error("cannot write " + summary_.truth_path.string() + " or " +
                               summary_.frames_path.string());
    }
    if (raw_) {
      raw_->close();
    } else {
      sigmf_->close();
    }
  }

private:
  static std::string format_dB(double ratio)
  {
    std::ostringstream s;
    s.precision(4);
    s << 10.0 * std::log10(ratio) << " dB";
    return s.str();
  }

  const output_config& out_;
  output_summary& summary_;
  double full_scale_ = 0.0;
  std::string snr_text_;
  std::unique_ptr<raw_writer> raw_;
  std::unique_ptr<transport::sigmf_writer> sigmf_;
  std::ofstream truth_;
  std::ofstream frames_;
  uint64_t nof_frames_ = 0;
};

} // namespace

double integer_full_scale(datatype t)
{
  switch (t) {
  case datatype::ci16_le: return 32767.0;
  case datatype::ci8: return 127.0;
  case datatype::cf32_le: return 0.0;
  }
  return 0.0;
}

float output_scale(datatype t, const capture_plan& plan)
{
  const double full = integer_full_scale(t);
  const double power = plan.signal_power + plan.noise_power;
  if (full == 0.0 || !(power > 0.0)) {
    return 1.0f;
  }
  const double sigma = std::sqrt(power / 2.0);
  return static_cast<float>(full / (INTEGER_HEADROOM * sigma));
}

std::string raw_extension(datatype t)
{
  switch (t) {
  case datatype::cf32_le: return ".cf32";
  case datatype::ci16_le: return ".ci16";
  case datatype::ci8: return ".ci8";
  }
  return ".raw";
}

output_summary write_capture(const capture_config& cfg, const output_config& out)
{
  if (out.base.empty()) {
    throw std::invalid_argument("no output path given");
  }
  // A base given with a capture's extension names the same capture: the sidecars
  // go beside it as BASE.truth, not BASE.sigmf-meta.truth.
  output_config o = out;
  const std::string base = o.base.string();
  for (const std::string ext : {".sigmf-meta", ".sigmf-data", ".sigmf", ".cf32", ".ci16", ".ci8"}) {
    if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0) {
      o.base = base.substr(0, base.size() - ext.size());
      break;
    }
  }
  output_summary summary;
  file_sink sink(o, summary);
  generate_capture(cfg, sink);
  return summary;
}

} // namespace whd::baseband
