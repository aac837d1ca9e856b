// The payload file sink at the edges of what the system gives it: a file system
// that fills up under mapped writes (a small tmpfs mounted for the test: the copy
// into a mapping past the free space would raise SIGBUS, so the sink must refuse
// the write with an error naming the file), and a mapping the system refuses (an
// address-space limit in a child process: the sink falls back to pwrite and the
// bytes still come back whole).
#include "file_bytes.hpp"
#include <whd/baseband/payload_sinks.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace bb = whd::baseband;
namespace fs = std::filesystem;

constexpr std::size_t MiB = std::size_t(1) << 20;

std::vector<uint8_t> read_all(const fs::path& p)
{
  return whd::test::file_bytes(p);
}

std::vector<uint8_t> random_bytes(std::size_t n, unsigned seed)
{
  std::mt19937 g(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) {
    b = static_cast<uint8_t>(g());
  }
  return bytes;
}

/// The message of what `f` throws as std::runtime_error ("" when it throws nothing).
template <class F>
std::string thrown(F&& f)
{
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

/// Runs `f` (returning a message) in a child process: its message, or why the child
/// did not give one (a signal: SIGBUS when a copy into a mapping met a full file
/// system). The parent lives on to unmount what it mounted.
template <class F>
std::string in_child(F&& f)
{
  int fds[2];
  if (::pipe(fds) != 0) {
    return std::string("pipe: ") + std::strerror(errno);
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::string m = f();
    (void)!::write(fds[1], m.data(), m.size());
    std::_Exit(0);
  }
  ::close(fds[1]);
  std::string m;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) {
    m.append(buf, std::size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    return "the child was ended by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return m;
}

/// A tmpfs of `size_mib` MiB mounted on a fresh folder for the test's life (root
/// only: CI runs as root; elsewhere the test skips, saying why).
class small_tmpfs {
public:
  explicit small_tmpfs(int size_mib)
  {
    std::string dir = (fs::path(testing::TempDir()) / "whd-small-tmpfs-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
      error_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    dir_ = dir;
    const std::string opts = "size=" + std::to_string(size_mib) + "m";
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      error_ = "mount -t tmpfs -o " + opts + ": " + std::strerror(errno) + " (needs root)";
      return;
    }
    mounted_ = true;
  }
  ~small_tmpfs()
  {
    if (mounted_) {
      ::umount2(dir_.c_str(), MNT_DETACH);
    }
    std::error_code ec;
    fs::remove(dir_, ec);
  }
  small_tmpfs(const small_tmpfs&) = delete;
  small_tmpfs& operator=(const small_tmpfs&) = delete;

  bool mounted() const noexcept { return mounted_; }
  const std::string& error() const noexcept { return error_; }
  fs::path operator/(const std::string& name) const { return dir_ / name; }

private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

TEST(payload_file_limits, a_file_system_filled_by_mapped_writes_is_an_error_not_sigbus)
{
  // 80 MiB of tmpfs. A first mapped write of 1 MiB grows the file ahead to 64 MiB,
  // sparse (ftruncate): those pages are not allocated yet. A second write of 100 MiB
  // needs 100 MiB of pages with 79 free, so it must be refused before its copy into
  // the mapping meets the full file system (SIGBUS: the writes run in a child
  // process, so that the test reports it and unmounts). Both mapped ways.
  small_tmpfs fs80(80);
  if (!fs80.mounted()) {
    GTEST_SKIP() << fs80.error();
  }
  const fs::path path = fs80 / "payload.bin";
  std::vector<uint8_t> bytes(100 * MiB);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  }
  const auto first = std::span<const uint8_t>(bytes).first(MiB);
  for (const auto way : {bb::payload_write::map, bb::payload_write::split}) {
    const std::string name(bb::to_string(way));
    const std::string what = in_child([&] {
      bb::payload_file_sink sink(path.string(), 2, way);
      if (const auto e = thrown([&] { sink.write(first); }); !e.empty()) {
        return "1 MiB into 80 MiB of tmpfs failed: " + e;
      }
      std::string m = thrown([&] { sink.write(bytes); });
      const std::string at_close = thrown([&] { sink.close(); });
      return m.empty() ? at_close : m;
    });
    EXPECT_NE(what.find(path.string()), std::string::npos) << name << ": " << what;
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << name << ": " << what;
    // What was written before the refusal is in the file, whole.
    const auto back = read_all(path);
    ASSERT_GE(back.size(), first.size()) << name;
    EXPECT_TRUE(std::equal(first.begin(), first.end(), back.begin())) << name;
    fs::remove(path);
  }
}

TEST(payload_file_limits, pwrite_into_a_full_file_system_is_an_error)
{
  small_tmpfs fs4(4);
  if (!fs4.mounted()) {
    GTEST_SKIP() << fs4.error();
  }
  const fs::path path = fs4 / "payload.bin";
  const std::vector<uint8_t> bytes = random_bytes(3 * MiB, 22);
  bb::payload_file_sink sink(path.string(), 2, bb::payload_write::pwrite);
  EXPECT_EQ(thrown([&] { sink.write(bytes); }), "");
  std::string what = thrown([&] { sink.write(bytes); });
  if (what.empty()) {
    what = thrown([&] { sink.close(); });
  }
  EXPECT_NE(what.find(path.string()), std::string::npos) << what;
  EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
}

/// Bytes of address space this process has mapped (VmSize).
std::size_t mapped_bytes()
{
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmSize:", 0) == 0) {
      return std::size_t(std::strtoull(line.c_str() + 7, nullptr, 10)) * 1024;
    }
  }
  return 0;
}

TEST(payload_file_limits, a_refused_mapping_falls_back_to_pwrite_and_the_bytes_come_back_whole)
{
  // In a child process whose address space may grow by 16 MiB only, a mapped write
  // of 48 MiB cannot be mapped (mmap: ENOMEM); the sink writes it and the next by
  // pwrite instead, and method() says so. The child reports by its exit status.
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan the address space is ASan's reservation, which an RLIMIT_AS does not bound as it does a plain "
                  "process's; the ordinary build runs this test";
#endif
  const fs::path path = fs::path(testing::TempDir()) / ("whd-refused-map-" + std::to_string(::getpid()) + ".bin");
  const std::vector<uint8_t> bytes = random_bytes(48 * MiB, 23);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    int code = 0;
    try {
      bb::payload_file_sink sink(path.string(), 2, bb::payload_write::map);
      struct rlimit lim {};
      ::getrlimit(RLIMIT_AS, &lim);
      lim.rlim_cur = mapped_bytes() + 16 * MiB;
      if (::setrlimit(RLIMIT_AS, &lim) != 0) {
        std::_Exit(10);
      }
      sink.write(std::span<const uint8_t>(bytes).first(24 * MiB));
      sink.write(std::span<const uint8_t>(bytes).subspan(24 * MiB));
      code = sink.method() == bb::payload_write::pwrite ? 0 : 11;
      sink.close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 12;
    }
    std::fflush(nullptr);
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_NE(WEXITSTATUS(status), 10) << "setrlimit(RLIMIT_AS) failed";
  EXPECT_NE(WEXITSTATUS(status), 11) << "the mapping was not refused, or the sink did not fall back to pwrite";
  EXPECT_NE(WEXITSTATUS(status), 12) << "the write failed instead of falling back (its message is on standard error)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read_all(path), bytes) << "the bytes written by the fallback";
  fs::remove(path);
}

} // namespace
