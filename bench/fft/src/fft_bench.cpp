/// @file fft_bench.cpp
#include "bench_kernels.hpp"

#include <whd/fft/fft512.hpp>
#include <whd/fft_bench/fft_bench.hpp>
#include <whd/transport/cuda.hpp>

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cufftXt.h>
#include <library_types.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace whd::fft::bench {

namespace {

namespace wc = whd::cuda;

constexpr double FLOPS_PER_FFT = 5.0 * N * LOG2_N;
constexpr input_type TYPES[] = {input_type::cf32, input_type::cf16, input_type::ci8};

void check_cufft(cufftResult r, const char* what)
{
  if (r != CUFFT_SUCCESS) {
    throw std::runtime_error(std::string("cuFFT: ") + what + " failed (cufftResult " + std::to_string(int(r)) + ")");
  }
}

/// A cuFFT plan of `batch` forward 512-point transforms, single or half precision.
class cufft_plan {
public:
  cufft_plan(std::size_t batch, bool half, stream_handle s)
  {
    check_cufft(cufftCreate(&h_), "cufftCreate");
    long long n = N;
    std::size_t work = 0;
    const cudaDataType t = half ? CUDA_C_16F : CUDA_C_32F;
    check_cufft(cufftXtMakePlanMany(h_, 1, &n, nullptr, 1, N, t, nullptr, 1, N, t, static_cast<long long>(batch), &work,
                                    t),
                "cufftXtMakePlanMany");
    check_cufft(cufftSetStream(h_, s), "cufftSetStream");
  }
  ~cufft_plan() { cufftDestroy(h_); }
  cufft_plan(const cufft_plan&) = delete;
  cufft_plan& operator=(const cufft_plan&) = delete;
  void exec(const void* in, void* out) const
  {
    check_cufft(cufftXtExec(h_, const_cast<void*>(in), out, CUFFT_FORWARD), "cufftXtExec");
  }

private:
  cufftHandle h_{};
};

device_info read_device_info()
{
  device_info d;
  int dev = 0;
  WHD_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  WHD_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.memory_bytes = p.totalGlobalMem;
  d.memory_bus_bits = p.memoryBusWidth;
  // Clocks are optional: a driver that does not report them leaves zeros.
  if (cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
    cudaGetLastError();
  }
  if (cudaDeviceGetAttribute(&d.memory_clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) {
    cudaGetLastError();
  }
  d.datasheet_gbps = 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_bits / 8.0) / 1e9;
  WHD_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  WHD_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  check_cufft(cufftGetVersion(&d.cufft_version), "cufftGetVersion");
  return d;
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// Times `op(slice)` (one launch or a short sequence on `s`): warm-up, then `repeats`
/// samples of back-to-back launches (rotating over `nof_slices` input slices so that
/// repeated launches do not read from L2), each sample about sample_ms long.
/// Returns time per launch divided by `per`, in ns.
timing time_op(const std::function<void(std::size_t)>& op, std::size_t nof_slices, int warmup, int repeats,
               double sample_ms, const wc::stream& s, double per)
{
  std::size_t slice = 0;
  auto next = [&] { return slice++ % nof_slices; };
  for (int i = 0; i < warmup; ++i) {
    op(next());
  }
  wc::event start, stop;
  start.record(s);
  op(next());
  stop.record(s);
  stop.synchronize();
  const double one_ms = std::max(1e-4, static_cast<double>(stop.elapsed_ms_since(start)));
  const int launches = static_cast<int>(std::clamp(std::ceil(sample_ms / one_ms), 1.0, 4096.0));
  std::vector<double> ns;
  for (int r = 0; r < repeats; ++r) {
    start.record(s);
    for (int l = 0; l < launches; ++l) {
      op(next());
    }
    stop.record(s);
    stop.synchronize();
    ns.push_back(static_cast<double>(stop.elapsed_ms_since(start)) * 1e6 / launches / per);
  }
  timing t;
  t.median_ns = median(ns);
  t.min_ns = *std::min_element(ns.begin(), ns.end());
  t.max_ns = *std::max_element(ns.begin(), ns.end());
  t.samples = repeats;
  t.launches_per_sample = launches;
  return t;
}

/// All device memory of the run, sized for the largest batch.
struct buffers {
  explicit buffers(std::size_t capacity, std::size_t nof_per_scale)
      : transforms(capacity), in32(capacity * N), in16(capacity * N), in8(capacity * N),
        scale((capacity + nof_per_scale - 1) / nof_per_scale), conv(capacity * N), out(capacity * N)
  {
  }
  std::size_t transforms;
  wc::device_buffer<cf32> in32;
  wc::device_buffer<cf16> in16;
  wc::device_buffer<ci8> in8;
  wc::device_buffer<float> scale;
  wc::device_buffer<cf32> conv; ///< cuFFT's converted input for half and int8
  wc::device_buffer<cf32> out;
};

copy_ceiling measure_ceiling(const buffers& b, const fft_bench_config& c, const wc::stream& s)
{
  copy_ceiling cc;
  const std::size_t n = b.transforms * N;
  cc.bytes = n * sizeof(cf32);
  const double moved = 2.0 * static_cast<double>(cc.bytes); // read + write
  auto gbps = [&](const std::function<void(std::size_t)>& op) {
    const timing t = time_op(op, 1, c.warmup, c.repeats, c.sample_ms, s, 1.0);
    return moved / t.median_ns;
  };
  cc.memcpy_gbps = gbps([&](std::size_t) {
    WHD_CUDA_CHECK(cudaMemcpyAsync(b.out.data(), b.in32.data(), cc.bytes, cudaMemcpyDeviceToDevice, s.get()));
  });
  cc.kernel8_gbps = gbps([&](std::size_t) { detail::copy8(b.in32.data(), b.out.data(), n, s.get()); });
  cc.kernel16_gbps = gbps([&](std::size_t) { detail::copy16(b.in32.data(), b.out.data(), n, s.get()); });
  cc.ceiling_gbps = std::max({cc.memcpy_gbps, cc.kernel8_gbps, cc.kernel16_gbps});
  return cc;
}

double bytes_per_fft(input_type t, std::size_t nof_per_scale)
{
  switch (t) {
  case input_type::cf32: return 8.0 * N + 8.0 * N;
  case input_type::cf16: return 4.0 * N + 8.0 * N;
  case input_type::ci8: return 2.0 * N + 8.0 * N + 4.0 / static_cast<double>(nof_per_scale);
  }
  return 0.0;
}

/// Launches variant `v` on slice `k` of batch `batch` for input type `t`.
void launch_ours(const buffers& b, input_type t, const variant& v, std::size_t batch, std::size_t k,
                 std::size_t nof_per_scale, stream_handle s)
{
  const std::size_t off = k * batch * N;
  cf32* out = b.out.data() + off;
  switch (t) {
  case input_type::cf32: fft512_variant(v, b.in32.data() + off, out, batch, s); break;
  case input_type::cf16: fft512_variant(v, b.in16.data() + off, out, batch, s); break;
  case input_type::ci8:
    // each slice starts at a whole scale group: batch is a power of two, as is the slice
    fft512_variant(v, b.in8.data() + off, b.scale.data() + (k * batch) / nof_per_scale, nof_per_scale, out, batch, s);
    break;
  }
}

/// cuFFT on slice k: C2C for cf32; conversion + C2C for cf16 and ci8.
void launch_cufft(const buffers& b, const cufft_plan& plan, input_type t, std::size_t batch, std::size_t k,
                  std::size_t nof_per_scale, stream_handle s)
{
  const std::size_t off = k * batch * N;
  switch (t) {
  case input_type::cf32: plan.exec(b.in32.data() + off, b.out.data() + off); break;
  case input_type::cf16:
    detail::convert_cf16(b.in16.data() + off, b.conv.data() + off, batch * N, s);
    plan.exec(b.conv.data() + off, b.out.data() + off);
    break;
  case input_type::ci8:
    detail::convert_ci8(b.in8.data() + off, b.scale.data() + (k * batch) / nof_per_scale, nof_per_scale * N,
                        b.conv.data() + off, batch * N, s);
    plan.exec(b.conv.data() + off, b.out.data() + off);
    break;
  }
}

bench_row make_row(std::string impl, input_type t, std::size_t batch, const timing& tm, double bytes,
                   const copy_ceiling& c)
{
  bench_row r;
  r.impl = std::move(impl);
  r.input = t;
  r.batch = batch;
  r.t = tm;
  r.bytes_per_fft = bytes;
  r.gflops = FLOPS_PER_FFT / tm.median_ns;
  r.gbps = bytes / tm.median_ns;
  r.pct_of_ceiling = 100.0 * r.gbps / c.ceiling_gbps;
  return r;
}

/// Relative L2 difference of two device vectors of n samples.
double rel_l2(const cf32* d_a, const cf32* d_b, std::size_t n)
{
  std::vector<cf32> a(n), b(n);
  WHD_CUDA_CHECK(cudaMemcpy(a.data(), d_a, n * sizeof(cf32), cudaMemcpyDeviceToHost));
  WHD_CUDA_CHECK(cudaMemcpy(b.data(), d_b, n * sizeof(cf32), cudaMemcpyDeviceToHost));
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::complex<double> x(a[i]), y(b[i]);
    num += std::norm(x - y);
    den += std::norm(y);
  }
  return std::isfinite(num) && den > 0.0 ? std::sqrt(num / den) : INFINITY;
}

std::string fmt(double v, int prec)
{
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

} // namespace

std::string utc_now()
{
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream o;
  o << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return o.str();
}

fft_bench_result run_fft_bench(const fft_bench_config& c, const std::function<void(std::string_view)>& progress)
{
  if (wc::device_count() == 0) {
    throw std::runtime_error("no GPU: " + wc::no_device_reason());
  }
  if (c.log2_batches.empty() || c.repeats < 1 || c.nof_per_scale < 1) {
    throw std::invalid_argument("fft bench: need batches, repeats >= 1 and nof_per_scale >= 1");
  }
  fft_bench_result r;
  r.date = utc_now();
  r.commit = c.commit;
  r.command = c.command;
  r.device = read_device_info();
  progress("device: " + r.device.name);

  int max_log2 = *std::max_element(c.log2_batches.begin(), c.log2_batches.end());
  if (c.tune) {
    max_log2 = std::max(max_log2, c.tune_log2_batch);
  }
  const std::size_t capacity = std::size_t{1} << max_log2;
  wc::stream s;
  const buffers b(capacity, c.nof_per_scale);
  detail::fill_cf32(b.in32.data(), capacity * N, c.seed, s.get());
  detail::fill_cf16(b.in16.data(), capacity * N, c.seed + 1, s.get());
  detail::fill_ci8(b.in8.data(), capacity * N, c.seed + 2, s.get());
  detail::fill_scales(b.scale.data(), b.scale.size(), c.seed + 3, s.get());
  s.synchronize();

  r.ceiling = measure_ceiling(b, c, s);
  progress("copy ceiling: " + fmt(r.ceiling.ceiling_gbps, 1) + " GB/s (memcpy " + fmt(r.ceiling.memcpy_gbps, 1) +
           ", 8-byte kernel " + fmt(r.ceiling.kernel8_gbps, 1) + ", 16-byte kernel " +
           fmt(r.ceiling.kernel16_gbps, 1) + ")");

  r.choice = load_tuned_choice(c.tune_cache, r.device.name);
  if (c.tune) {
    const std::size_t batch = std::size_t{1} << c.tune_log2_batch;
    const std::size_t slices = capacity / batch;
    tuned_choice best;
    best.device_name = r.device.name;
    best.batch = batch;
    for (auto t : TYPES) {
      double best_ns = INFINITY;
      for (const variant& v : all_variants()) {
        const timing tm = time_op(
            [&](std::size_t k) { launch_ours(b, t, v, batch, k, c.nof_per_scale, s.get()); }, slices, c.warmup,
            c.tune_repeats, c.sample_ms, s, static_cast<double>(batch));
        r.tune.push_back({t, v, tm.median_ns});
        if (tm.median_ns < best_ns) {
          best_ns = tm.median_ns;
          best[t] = v;
          best.ns_per_fft[static_cast<std::size_t>(t)] = tm.median_ns;
        }
      }
      progress("tuned " + std::string(to_string(t)) + ": " + to_string(best[t]) + " " + fmt(best_ns, 3) + " ns/FFT");
    }
    save_tuned_choice(c.tune_cache, best, r.date);
    best.source = "tuned in this run, saved to " + c.tune_cache.string();
    r.choice = best;
  }

  // Sanity check: ours against cuFFT on the same inputs (smallest batch, slice 0).
  {
    const std::size_t batch = std::size_t{1} << *std::min_element(c.log2_batches.begin(), c.log2_batches.end());
    const cufft_plan plan(batch, false, s.get());
    wc::device_buffer<cf32> ours(batch * N);
    for (auto t : TYPES) {
      launch_ours(b, t, r.choice[t], batch, 0, c.nof_per_scale, s.get());
      WHD_CUDA_CHECK(cudaMemcpyAsync(ours.data(), b.out.data(), ours.size_bytes(), cudaMemcpyDeviceToDevice, s.get()));
      launch_cufft(b, plan, t, batch, 0, c.nof_per_scale, s.get());
      s.synchronize();
      r.checks.emplace_back(std::string(to_string(t)) + " " + to_string(r.choice[t]) + " vs cufft",
                            rel_l2(ours.data(), b.out.data(), batch * N));
    }
  }

  for (int lb : c.log2_batches) {
    const std::size_t batch = std::size_t{1} << lb;
    const std::size_t slices = capacity / batch;
    const auto per = static_cast<double>(batch);
    const cufft_plan plan(batch, false, s.get());
    const cufft_plan plan_half(batch, true, s.get());
    for (auto t : TYPES) {
      const double bytes = bytes_per_fft(t, c.nof_per_scale);
      const variant v = r.choice[t];
      const timing ours = time_op([&](std::size_t k) { launch_ours(b, t, v, batch, k, c.nof_per_scale, s.get()); },
                                  slices, c.warmup, c.repeats, c.sample_ms, s, per);
      r.rows.push_back(make_row("whd " + to_string(v), t, batch, ours, bytes, r.ceiling));
      const timing cu = time_op([&](std::size_t k) { launch_cufft(b, plan, t, batch, k, c.nof_per_scale, s.get()); },
                                slices, c.warmup, c.repeats, c.sample_ms, s, per);
      r.rows.push_back(make_row(t == input_type::cf32 ? "cufft" : "cufft convert+c2c", t, batch, cu, bytes, r.ceiling));
      if (t == input_type::cf16) {
        const timing hn = time_op(
            [&](std::size_t k) {
              const std::size_t off = k * batch * N;
              plan_half.exec(b.in16.data() + off, reinterpret_cast<cf16*>(b.out.data()) + off);
            },
            slices, c.warmup, c.repeats, c.sample_ms, s, per);
        r.rows.push_back(make_row("cufft half-native (half out)", t, batch, hn, 8.0 * N, r.ceiling));
      }
    }
    progress("batch 2^" + std::to_string(lb) + " done");
  }
  return r;
}

std::string to_json(const fft_bench_result& r)
{
  nlohmann::json j;
  const auto& d = r.device;
  j["device"] = {{"name", d.name},
                 {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                 {"sm_count", d.sm_count},
                 {"l2_bytes", d.l2_bytes},
                 {"memory_bytes", d.memory_bytes},
                 {"sm_clock_khz_peak", d.sm_clock_khz},
                 {"memory_clock_khz_peak", d.memory_clock_khz},
                 {"memory_bus_bits", d.memory_bus_bits},
                 {"datasheet_gbps", d.datasheet_gbps},
                 {"driver_version", d.driver_version},
                 {"runtime_version", d.runtime_version},
                 {"cufft_version", d.cufft_version}};
  j["date"] = r.date;
  j["commit"] = r.commit;
  j["command"] = r.command;
  j["flops_per_fft"] = FLOPS_PER_FFT;
  j["ceiling"] = {{"bytes", r.ceiling.bytes},
                  {"memcpy_gbps", r.ceiling.memcpy_gbps},
                  {"copy_kernel_8byte_gbps", r.ceiling.kernel8_gbps},
                  {"copy_kernel_16byte_gbps", r.ceiling.kernel16_gbps},
                  {"ceiling_gbps", r.ceiling.ceiling_gbps}};
  j["choice"] = {{"source", r.choice.source}};
  for (auto t : TYPES) {
    j["choice"][std::string(to_string(t))] = to_string(r.choice[t]);
  }
  j["tune"] = nlohmann::json::array();
  for (const auto& e : r.tune) {
    j["tune"].push_back({{"input", to_string(e.input)}, {"variant", to_string(e.v)}, {"ns_per_fft", e.ns_per_fft}});
  }
  j["checks"] = nlohmann::json::array();
  for (const auto& [what, err] : r.checks) {
    j["checks"].push_back({{"what", what}, {"rel_l2", err}});
  }
  j["rows"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    j["rows"].push_back({{"impl", row.impl},
                         {"input", to_string(row.input)},
                         {"batch", row.batch},
                         {"ns_per_fft_median", row.t.median_ns},
                         {"ns_per_fft_min", row.t.min_ns},
                         {"ns_per_fft_max", row.t.max_ns},
                         {"samples", row.t.samples},
                         {"launches_per_sample", row.t.launches_per_sample},
                         {"bytes_per_fft", row.bytes_per_fft},
                         {"gflops", row.gflops},
                         {"gbps", row.gbps},
                         {"pct_of_ceiling", row.pct_of_ceiling}});
  }
  return j.dump(2);
}

std::string to_markdown(const fft_bench_result& r)
{
  std::ostringstream o;
  const auto& d = r.device;
  o << "- device: " << d.name << " (cc " << d.cc_major << "." << d.cc_minor << ", " << d.sm_count << " SMs, L2 "
    << d.l2_bytes / (1024 * 1024) << " MiB, peak SM clock " << d.sm_clock_khz / 1000 << " MHz, memory "
    << d.memory_clock_khz / 1000 << " MHz x " << d.memory_bus_bits << " bit = " << fmt(d.datasheet_gbps, 0)
    << " GB/s datasheet)\n";
  o << "- driver " << d.driver_version << ", runtime " << d.runtime_version << ", cuFFT " << d.cufft_version << "\n";
  o << "- date: " << r.date << ", commit: " << r.commit << "\n";
  o << "- command: `" << r.command << "`\n";
  o << "- copy ceiling (read + write): " << fmt(r.ceiling.ceiling_gbps, 1) << " GB/s (cudaMemcpy D2D "
    << fmt(r.ceiling.memcpy_gbps, 1) << ", copy kernel 8-byte " << fmt(r.ceiling.kernel8_gbps, 1) << ", 16-byte "
    << fmt(r.ceiling.kernel16_gbps, 1) << "; " << r.ceiling.bytes / (1024 * 1024) << " MiB copied)\n";
  o << "- ours: cf32 " << to_string(r.choice[input_type::cf32]) << ", cf16 " << to_string(r.choice[input_type::cf16])
    << ", ci8 " << to_string(r.choice[input_type::ci8]) << " (" << r.choice.source << ")\n";
  for (const auto& [what, err] : r.checks) {
    o << "- check " << what << ": relative L2 " << std::scientific << std::setprecision(2) << err << std::defaultfloat
      << "\n";
  }
  o << "\n| batch | input | implementation | ns/FFT median | min..max | GFLOPS | GB/s | % ceiling |\n";
  o << "|---:|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows) {
    o << "| 2^" << static_cast<int>(std::log2(static_cast<double>(row.batch))) << " | " << to_string(row.input)
      << " | " << row.impl << " | " << fmt(row.t.median_ns, 3) << " | " << fmt(row.t.min_ns, 3) << ".."
      << fmt(row.t.max_ns, 3) << " | " << fmt(row.gflops, 0) << " | " << fmt(row.gbps, 0) << " | "
      << fmt(row.pct_of_ceiling, 1) << " |\n";
  }
  if (!r.tune.empty()) {
    o << "\n### Tuner (ns/FFT, median)\n\n| variant | cf32 | cf16 | ci8 |\n|---|---:|---:|---:|\n";
    for (const variant& v : all_variants()) {
      o << "| " << to_string(v);
      for (auto t : TYPES) {
        for (const auto& e : r.tune) {
          if (e.input == t && e.v == v) {
            o << " | " << fmt(e.ns_per_fft, 3);
          }
        }
      }
      o << " |\n";
    }
  }
  return o.str();
}

} // namespace whd::fft::bench
