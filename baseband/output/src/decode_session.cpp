#include <whd/baseband/decode_session.hpp>

#include <whd/baseband/profile.hpp>

#include <utility>

namespace whd::baseband {

decode_session::decode_session(decode_options options) : options_(std::move(options))
{
  // Of the annotations (one a frame) only their reach, for cut_short_warning.
  info_ = transport::open_capture(options_.path, options_.format, transport::annotation_use::reach_only);
  if (const auto problem = unusable_capture_size(info_)) {
    const std::string name = options_.name.empty() ? info_.data_path.string() : options_.name;
    throw transport::capture_error("'" + name + "': " + *problem);
  }
  if (const auto warning = cut_short_warning(info_); warning && options_.warn) {
    options_.warn(*warning);
  }
  reader_ = std::make_unique<transport::capture_reader>(info_);
  if (options_.truth) {
    try {
      checker_ = std::make_unique<truth_checker>(*options_.truth);
    } catch (const std::runtime_error& e) {
      throw unusable_file(e.what());
    }
  }
  cfg_.stop = options_.stop;
  cfg_.nof_threads = options_.nof_threads;
  cfg_.sample_rate_sps = options_.sample_rate_sps.value_or(info_.sample_rate_sps.value_or(profile::SAMPLE_RATE_SPS));
  cfg_.llr = options_.llr;
}

decode_session::~decode_session() = default;

made_receiver decode_session::make_receiver(const receiver_request& req, const choice_fn& chosen) const
{
  return baseband::make_receiver(req, cfg_, info_.type, options_.warn, chosen);
}

void decode_session::open_payload()
{
  if (!options_.payload || file_ != nullptr) {
    return;
  }
  try {
    file_ = std::make_unique<payload_file_sink>(*options_.payload, 0, options_.payload_way);
  } catch (const std::runtime_error& e) {
    throw unusable_file(e.what());
  }
}

const receive_result& decode_session::run(receiver& rx, payload_sink* otherwise, const progress_fn& progress)
{
  open_payload();
  tee_sink sink(file_ != nullptr ? file_.get() : otherwise, checker_.get());
  soft_output_ = cfg_.llr.sink != nullptr;
  result_ = rx.run(*reader_, sink, progress);
  backend_ = rx.backend();
  if (file_ != nullptr) {
    file_->close();
  }
  if (checker_ != nullptr) {
    truth_ = checker_->result();
    truth_->path = *options_.truth;
    if (const auto warning = truth_shift_warning(result_, *truth_); warning && options_.warn) {
      options_.warn(*warning);
    }
  }
  if (const auto warning = bad_samples_warning(result_); warning && options_.warn) {
    options_.warn(*warning);
  }
  return result_;
}

nlohmann::json decode_session::report(double seconds, const std::optional<run_seconds>& split) const
{
  const std::string& name = options_.name.empty() ? options_.path : options_.name;
  auto r = make_run_report(name, info_, result_, backend_, seconds, truth_, split, cfg_.sample_rate_sps, false);
  if (soft_output_) {
    r["llr"] = llr_report(cfg_.llr, result_, options_.llr_name);
  }
  return r;
}

} // namespace whd::baseband
