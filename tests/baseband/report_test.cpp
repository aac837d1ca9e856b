// dump_report writes the frames of a report straight from the results: its text must
// read back as the JSON that make_report builds with the frames in it (nlohmann's
// dump of the same report), for either layout, whatever the frames hold. The
// report_writer, which writes them as a run hands them over, gives the same text
// however the frames come, and stops at a failed write and says so.
#include <whd/baseband/report.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

namespace bb = whd::baseband;

bb::receive_result random_result(std::size_t nof_frames, uint32_t seed)
{
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // Doubles of every kind a frame can hold: whole, tiny, huge, negative, zero, not finite.
  const std::vector<double> special{0.0,   -0.0,   1.0,     100.0, -3.0e5, 1e-5,  1.5e-7, 123456789012345678.0, 1e21, 1e300,
                                    5e-324, 0.1,    2.0 / 3, 1e15,  1e16,   -1e-4, std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  bb::receive_result r;
  for (std::size_t i = 0; i < nof_frames; ++i) {
    bb::frame_result f;
    f.start = g() >> (g() % 64);
    f.mod = i % 2 == 0 ? whd::profile::modulation::qpsk : whd::profile::modulation::qam16;
    f.nd = uint32_t(g() % (1u << 20));
    f.seq = uint8_t(g());
    f.symbols = uint32_t(g() % (f.nd + 1));
    f.truncated = g() % 3 == 0;
    f.cfo_Hz = i < special.size() ? special[i] : u(g) * 1e6;
    f.snr_dB = i < special.size() ? special[special.size() - 1 - i] : 40 * u(g);
    f.payload_offset = g();
    f.payload_bytes = g() % 1000000;
    f.bad_samples = g() % 4 == 0 ? g() % 5000 : 0;
    for (uint64_t k = 0, n = g() % 5 == 0 ? g() % 4 : 0; k < n; ++k) {
      f.bad_symbols.push_back({uint32_t(g() % 1000), uint32_t(1 + g() % 9)});
    }
    r.frames.push_back(f);
  }
  r.header_failures.push_back({123, whd::profile::header_status::crc, 7});
  r.payload_bytes = 42;
  return r;
}

bb::input_description input() { return {"capture \xff.sigmf-meta", "ci8", 1000, 2.538e9}; }

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> lines;
  std::size_t begin = 0;
  for (std::size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    lines.push_back(text.substr(begin, end - begin));
  }
  lines.push_back(text.substr(begin));
  return lines;
}

/// The layout of a report's text: nlohmann's dump(indent) of the report without its
/// frames, but for "frames" first, with each frame compact on a line of its own.
void expect_layout(const std::string& text, const nlohmann::json& full, int indent)
{
  const std::size_t n = full["frames"].size();
  nlohmann::json rest = full;
  rest.erase("frames");
  const std::string rest_text = rest.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  if (indent < 0) {
    EXPECT_EQ(text.find('\n'), std::string::npos);
    return;
  }
  const auto lines = lines_of(text);
  // The members but "frames" take as many lines as nlohmann gives them; the list
  // takes a line for its opening, one per frame and one for its close (or one, "[]").
  ASSERT_EQ(lines.size(), lines_of(rest_text).size() + (n > 0 ? n + 2 : 1)) << n << " frames, indent " << indent;
  const std::string pad(std::size_t(indent), ' ');
  EXPECT_EQ(lines[1], pad + (n > 0 ? "\"frames\": [" : "\"frames\": [],"));
  for (std::size_t i = 0; i < n; ++i) {
    std::string line = lines[2 + i];
    ASSERT_EQ(line.compare(0, 2 * pad.size() + 1, pad + pad + "{"), 0) << line;
    line.erase(0, 2 * pad.size());
    if (i + 1 < n) {
      ASSERT_EQ(line.back(), ',') << line;
      line.pop_back();
    }
    // Compact: no space outside the strings, and none of a frame's strings holds one.
    EXPECT_EQ(line.find(' '), std::string::npos) << line;
    // (As read back: a value that is not finite is written null.)
    EXPECT_EQ(nlohmann::json::parse(line), nlohmann::json::parse(full["frames"][i].dump())) << i;
  }
  if (n > 0) {
    EXPECT_EQ(lines[2 + n], pad + "],");
  }
}

TEST(dump_report, reads_back_as_the_report_with_its_frames)
{
  const bb::timing_description t{"cpu", "end-to-end", 1.5, 4000, 32000};
  for (std::size_t n : {0u, 1u, 2u, 40u, 3000u}) {
    const auto res = random_result(n, uint32_t(n) + 1);
    const nlohmann::json full = bb::make_report(input(), res, t);
    for (int indent : {2, -1, 0, 4}) {
      const std::string text = bb::dump_report(bb::make_report(input(), res, t, std::nullopt, false), res.frames, indent);
      const std::string want = full.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
      const auto back = nlohmann::json::parse(text);
      EXPECT_EQ(back, nlohmann::json::parse(want)) << n << " frames, indent " << indent;
      expect_layout(text, full, indent);
      for (std::size_t i = 0; i < n; ++i) {
        const auto& f = back["frames"][i];
        // Float fields stay floats (or null where not finite), as nlohmann writes them.
        EXPECT_TRUE(f["cfo_hz"].is_number_float() || (f["cfo_hz"].is_null() && !std::isfinite(res.frames[i].cfo_Hz))) << i;
        EXPECT_TRUE(f["snr_db"].is_number_float() || (f["snr_db"].is_null() && !std::isfinite(res.frames[i].snr_dB))) << i;
      }
    }
  }
}

TEST(dump_report, a_report_without_frames_is_written_as_nlohmann_writes_it)
{
  const bb::timing_description t{"gpu", "end-to-end", 0.5, 0, 0};
  const bb::receive_result res;
  const nlohmann::json r = bb::make_report(input(), res, t);
  EXPECT_EQ(bb::dump_report(r, {}, 2), r.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  EXPECT_EQ(bb::dump_report(r, {}, -1), r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TEST(dump_report, frames_of_many_blocks_stay_in_order)
{
  // Lists of more than 16 384 frames are formatted by several threads, a block each,
  // more blocks than threads in rounds: the text must still read back frame for frame.
  const bb::timing_description t{"gpu", "end-to-end", 0.5, 4000, 32000};
  const auto res = random_result(9 * 16384 + 3, 5);
  const std::string text = bb::dump_report(bb::make_report(input(), res, t, std::nullopt, false), res.frames, -1);
  EXPECT_EQ(nlohmann::json::parse(text), nlohmann::json::parse(bb::make_report(input(), res, t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

TEST(write_report, writes_the_text_of_dump_report_as_it_is_made)
{
  // Enough frames for several blocks; the text is dump_report's.
  const bb::timing_description t{"gpu", "end-to-end", 0.5, 4000, 32000};
  const auto res = random_result(3 * 16384 + 7, 77);
  for (int indent : {2, -1}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(bb::write_report(f, bb::make_report(input(), res, t, std::nullopt, false), res.frames, indent));
    std::rewind(f);
    std::string text;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
      text.append(buf, n);
    }
    std::fclose(f);
    EXPECT_EQ(text, bb::dump_report(bb::make_report(input(), res, t, std::nullopt, false), res.frames, indent) + "\n") << indent;
    EXPECT_GT(text.size(), std::size_t(8) << 20);
  }
  // A file opened for appending (where writes at offsets would append) and a file
  // written after text of its own: the report follows what was there.
  for (const char* mode : {"a", "w"}) {
    char name[] = "/tmp/whd-report-test-XXXXXX";
    const int fd = ::mkstemp(name);
    ASSERT_GE(fd, 0);
    ::close(fd);
    std::FILE* f = std::fopen(name, mode);
    ASSERT_NE(f, nullptr);
    std::fputs("before\n", f);
    ASSERT_TRUE(bb::write_report(f, bb::make_report(input(), res, t, std::nullopt, false), res.frames, 2));
    std::fclose(f);
    std::string text;
    std::FILE* in = std::fopen(name, "r");
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) {
      text.append(buf, n);
    }
    std::fclose(in);
    std::remove(name);
    EXPECT_EQ(text, "before\n" + bb::dump_report(bb::make_report(input(), res, t, std::nullopt, false), res.frames, 2) + "\n") << mode;
  }
  // A file that takes nothing: false, not a report cut short in silence.
  if (std::FILE* full = std::fopen("/dev/full", "w")) {
    EXPECT_FALSE(bb::write_report(full, bb::make_report(input(), res, t, std::nullopt, false), res.frames, 2));
    std::fclose(full);
  }
}

TEST(report_writer, frames_handed_over_in_pieces_give_the_text_of_all_at_once)
{
  // Pieces of every size (none, one, across the 16 384-frame blocks, several blocks),
  // handed over while the thread formats the ones before: the text is the same.
  const bb::timing_description t{"gpu", "end-to-end", 0.5, 4000, 32000};
  const auto res = random_result(5 * 16384 + 11, 99);
  for (int indent : {2, -1}) {
    const std::string whole = bb::dump_report(bb::make_report(input(), res, t, std::nullopt, false), res.frames, indent) + "\n";
    std::mt19937 g(uint32_t(indent + 10));
    std::string text;
    std::size_t calls = 0;
    {
      bb::report_writer w(
        [&](std::string_view piece) {
          text += piece;
          ++calls;
          return true;
        },
        indent);
      const std::span<const bb::frame_result> all(res.frames);
      std::size_t at = 0;
      for (std::size_t k = 0; at < all.size(); ++k) {
        const std::size_t n = std::min(all.size() - at, std::vector<std::size_t>{0, 1, 2, 700, 16384, 16385, 40000}[k % 7]);
        w.add(all.subspan(at, n));
        at += n;
        EXPECT_EQ(w.size(), at);
      }
      ASSERT_TRUE(w.finish(bb::make_report(input(), res, t)));
    }
    EXPECT_EQ(text, whole) << indent;
    EXPECT_GT(calls, 3u) << "written as it goes, not at once";
  }
}

TEST(report_writer, an_empty_list_and_a_failed_write)
{
  const bb::timing_description t{"cpu", "end-to-end", 0.5, 0, 0};
  const bb::receive_result none;
  for (int indent : {2, -1}) {
    std::string text;
    {
      bb::report_writer w(
        [&](std::string_view piece) {
          text += piece;
          return true;
        },
        indent);
      ASSERT_TRUE(w.finish(bb::make_report(input(), none, t)));
    }
    EXPECT_EQ(text, bb::make_report(input(), none, t).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")
        << "no frames: nlohmann's text (its \"frames\" come first there too)";
  }
  // The third write fails: finish says so with its errno, and nothing is written after it.
  const auto res = random_result(3 * 16384, 3);
  std::size_t calls = 0;
  bb::report_writer w(
    [&](std::string_view) {
      if (++calls == 3) {
        errno = ENOSPC;
        return false;
      }
      return true;
    },
    2);
  w.add(res.frames);
  errno = 0;
  EXPECT_FALSE(w.finish(bb::make_report(input(), res, t)));
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_EQ(calls, 3u);
}

} // namespace
