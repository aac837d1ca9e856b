#include <whd/fft/tune_cache.hpp>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace whd::fft {

namespace {

constexpr int CACHE_VERSION = 1;
constexpr input_type TYPES[] = {input_type::cf32, input_type::cf16, input_type::ci8};

std::string env(const char* name)
{
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

tuned_choice defaults_because(std::string reason)
{
  tuned_choice c;
  c.source = "default (" + std::move(reason) + ")";
  return c;
}

} // namespace

std::filesystem::path tune_cache_path()
{
  if (auto p = env("WHD_FFT_TUNE_CACHE"); !p.empty()) {
    return p;
  }
  if (auto p = env("XDG_CACHE_HOME"); !p.empty()) {
    return std::filesystem::path(p) / "whd-rx" / "fft-tune.json";
  }
  if (auto p = env("HOME"); !p.empty()) {
    return std::filesystem::path(p) / ".cache" / "whd-rx" / "fft-tune.json";
  }
  return "fft-tune.json";
}

std::string current_device_name()
{
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError(); // no device: clear the error so later calls start clean
    return {};
  }
  return prop.name;
}

tuned_choice load_tuned_choice(const std::filesystem::path& file, std::string_view device_name)
{
  std::ifstream in(file);
  if (!in) {
    return defaults_because("no tune cache at " + file.string());
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return defaults_because("tune cache " + file.string() + " is not JSON: " + e.what());
  }
  try {
    if (j.at("version").get<int>() != CACHE_VERSION) {
      return defaults_because("tune cache " + file.string() + " has another version");
    }
    const auto device = j.at("device").get<std::string>();
    if (device.empty() || device != device_name) {
      return defaults_because("tune cache " + file.string() + " is for '" + device + "', this GPU is '" +
                              std::string(device_name) + "'");
    }
    tuned_choice c;
    c.device_name = device;
    c.batch = j.at("batch").get<std::size_t>();
    for (auto t : TYPES) {
      const auto& entry = j.at("choice").at(std::string(to_string(t)));
      const auto v = parse_variant(entry.at("variant").get<std::string>());
      if (!v) {
        return defaults_because("tune cache " + file.string() + " names an unknown variant");
      }
      c[t] = *v;
      c.ns_per_fft[static_cast<std::size_t>(t)] = entry.at("ns_per_fft").get<double>();
    }
    c.source = "tune cache " + file.string();
    return c;
  } catch (const nlohmann::json::exception& e) {
    return defaults_because("tune cache " + file.string() + " is malformed: " + e.what());
  }
}

tuned_choice load_tuned_choice() { return load_tuned_choice(tune_cache_path(), current_device_name()); }

void save_tuned_choice(const std::filesystem::path& file, const tuned_choice& choice, std::string_view date)
{
  nlohmann::json j;
  j["version"] = CACHE_VERSION;
  j["device"] = choice.device_name;
  j["date"] = std::string(date);
  j["batch"] = choice.batch;
  for (auto t : TYPES) {
    j["choice"][std::string(to_string(t))] = {{"variant", to_string(choice[t])},
                                              {"ns_per_fft", choice.ns_per_fft[static_cast<std::size_t>(t)]}};
  }
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
  }
  std::ofstream out(file);
  if (!out) {
    throw std::runtime_error("cannot write the FFT tune cache " + file.string() +
                             " (set WHD_FFT_TUNE_CACHE to a writable path)");
  }
  out << j.dump(2) << '\n';
  if (!out) {
    throw std::runtime_error("error writing the FFT tune cache " + file.string());
  }
}

} // namespace whd::fft
