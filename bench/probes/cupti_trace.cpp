// A timeline of a CUDA program's copies and kernels, for machines without Nsight
// Systems: loaded by the driver through CUDA_INJECTION64_PATH, it records every
// memcpy and kernel with CUPTI's activity API and writes them, one line each, to
// the CSV file named by WHD_TRACE_OUT when the program exits.
//
//   g++ -std=c++20 -O2 -shared -fPIC -I/usr/local/cuda/include bench/probes/cupti_trace.cpp
//       -L/usr/local/cuda/lib64 -lcupti -o cupti_trace.so
//   CUDA_INJECTION64_PATH=$PWD/cupti_trace.so WHD_TRACE_OUT=trace.csv PROGRAM ...
//
// Columns: kind (H2D, D2H, D2D, other copy kinds as numbers, or K for a kernel),
// start and end (ns, GPU clock), stream, bytes (copies), the copy's hardware
// channel and its type, and the kernel's name.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr std::size_t BUFFER = 8u << 20;

std::mutex lines_m;
std::vector<std::string> lines;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records)
{
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, BUFFER));
  *size = BUFFER;
  *max_records = 0;
}

const char* copy_kind(uint8_t k)
{
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "H2D";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "D2H";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "D2D";
  default:
    return nullptr;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid)
{
  CUpti_Activity* rec = nullptr;
  std::vector<std::string> out;
  char line[512];
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      const char* k = copy_kind(m->copyKind);
      std::snprintf(line, sizeof line, "%s%s,%llu,%llu,%u,%llu,%u,%d,", k ? k : "copy", k ? "" : std::to_string(m->copyKind).c_str(),
                    static_cast<unsigned long long>(m->start), static_cast<unsigned long long>(m->end), m->streamId,
                    static_cast<unsigned long long>(m->bytes), m->channelID, static_cast<int>(m->channelType));
      out.emplace_back(line);
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      std::snprintf(line, sizeof line, "K,%llu,%llu,%u,0,%u,%d,%.200s", static_cast<unsigned long long>(k->start),
                    static_cast<unsigned long long>(k->end), k->streamId, k->channelID, static_cast<int>(k->channelType),
                    k->name != nullptr ? k->name : "");
      out.emplace_back(line);
    }
  }
  std::free(buffer);
  std::lock_guard lk(lines_m);
  lines.insert(lines.end(), out.begin(), out.end());
}

void write_out()
{
  cuptiActivityFlushAll(1);
  const char* path = std::getenv("WHD_TRACE_OUT");
  std::FILE* f = std::fopen(path != nullptr ? path : "cupti-trace.csv", "w");
  if (f == nullptr) {
    return;
  }
  std::fputs("kind,start_ns,end_ns,stream,bytes,channel,channel_type,name\n", f);
  std::lock_guard lk(lines_m);
  for (const auto& l : lines) {
    std::fputs(l.c_str(), f);
    std::fputc('\n', f);
  }
  std::fclose(f);
}

} // namespace

extern "C" int InitializeInjection()
{
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fputs("cupti_trace: CUPTI activity tracing could not be enabled\n", stderr);
    return 0;
  }
  std::atexit(write_out);
  return 1;
}
