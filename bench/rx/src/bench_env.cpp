#include <whd/rx_bench/bench_env.hpp>

#include <whd/baseband/profile.hpp>
#include <whd/transport/cuda.hpp>

#include <complex>
#include <liquid/liquid.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace whd::rx_bench {

namespace {

std::string utc_now()
{
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string cpu_model()
{
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      return line.substr(line.find(':') + 2);
    }
  }
  return "unknown";
}

} // namespace

bench_env collect_env(const std::string& commit, const std::string& command, bool allow_gpu)
{
  bench_env e;
  e.commit = commit;
  e.command = command;
  e.date = utc_now();
  e.cpu = cpu_model();
  e.host_threads = std::max(1u, std::thread::hardware_concurrency());
  e.liquid_version = liquid_libversion();
  if (cuda::device_count() == 0) {
    e.no_gpu_reason = "GPU rows skipped: " + cuda::no_device_reason();
    return e;
  }
  cudaDeviceProp prop{};
  WHD_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  WHD_CUDA_CHECK(cudaDriverGetVersion(&driver));
  e.device = prop.name;
  e.driver = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  e.gpu = allow_gpu;
  if (!allow_gpu) {
    e.no_gpu_reason = "GPU rows skipped on request (--no-gpu)";
  }
  return e;
}

nlohmann::json to_json(const bench_env& e)
{
  nlohmann::json j{{"device", e.device}, {"driver", e.driver},     {"gpu", e.gpu},         {"cpu", e.cpu},
                   {"host_threads", e.host_threads}, {"liquid_dsp", e.liquid_version}, {"commit", e.commit},
                   {"date", e.date},     {"command", e.command}};
  if (!e.gpu) {
    j["gpu_skipped_reason"] = e.no_gpu_reason;
  }
  return j;
}

std::string to_markdown(const bench_env& e)
{
  std::ostringstream o;
  if (e.device != "none") {
    o << "- device: " << e.device << ", driver " << e.driver << (e.gpu ? "" : " (" + e.no_gpu_reason + ")") << "\n";
  } else {
    o << "- device: none (" << e.no_gpu_reason << ")\n";
  }
  o << "- host: " << e.cpu << ", " << e.host_threads << " threads; liquid-dsp " << e.liquid_version << "\n";
  o << "- date: " << e.date << "\n- commit: " << e.commit << "\n- command: `" << e.command << "`\n";
  return o.str();
}

timing_summary summarise(std::vector<double> seconds)
{
  if (seconds.empty()) {
    throw std::invalid_argument("summarise: no timings");
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], seconds.front(), seconds.back(), int(seconds.size())};
}

nlohmann::json throughput_json(const timing_summary& t, uint64_t symbols, int bits_per_symbol)
{
  const double n = double(std::max<uint64_t>(symbols, 1));
  const double ns = t.median_s * 1e9 / n;
  return {{"symbols", symbols},
          {"repeats", t.repeats},
          {"median_s", t.median_s},
          {"ns_per_symbol", ns},
          {"ns_per_symbol_min", t.min_s * 1e9 / n},
          {"ns_per_symbol_max", t.max_s * 1e9 / n},
          {"x_realtime", profile::SYMBOL_PERIOD_NS / ns},
          {"raw_gbps", double(bits_per_symbol) / ns}};
}

} // namespace whd::rx_bench
