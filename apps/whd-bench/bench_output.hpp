/// @file bench_output.hpp
/// What whd-bench's subcommands share: parsing their arguments, writing their JSON
/// and Markdown files, each checked, and the tail of the receive-chain ones: run
/// with progress on the log, write, print.
#pragma once

#include "subcommands.hpp"

#include <whd/transport/link_pack.hpp>

#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace whd::bench_app {

/// Adds --json and --markdown, the outputs every subcommand has, to `desc`.
inline void add_output_options(boost::program_options::options_description& desc, std::string& json, std::string& markdown)
{
  desc.add_options()("json", boost::program_options::value(&json), "write the result as JSON to this file")(
      "markdown", boost::program_options::value(&markdown), "write the report as Markdown to this file");
}

/// Parses a subcommand's arguments, then runs `check(vm)` on them (it turns the
/// options into the configuration and throws std::exception naming what is wrong).
/// @param shown the options --help prints (without hidden positional ones)
/// @return nothing to go on; EXIT_OK after --help was printed; EXIT_USAGE after a
///         wrong command line or a failed check, said on stderr with a pointer to --help
template <class Check>
std::optional<int> parse_subcommand(std::string_view name, const boost::program_options::command_line_parser& parser,
                                    const boost::program_options::options_description& shown, Check&& check)
{
  try {
    boost::program_options::variables_map vm;
    boost::program_options::store(boost::program_options::command_line_parser(parser).run(), vm);
    boost::program_options::notify(vm);
    if (vm.count("help") != 0) {
      std::cout << shown << '\n';
      return EXIT_OK;
    }
    check(vm);
  } catch (const std::exception& e) {
    std::cerr << "whd-bench " << name << ": " << e.what() << "\nTry 'whd-bench " << name << " --help'.\n";
    return EXIT_USAGE;
  }
  return std::nullopt;
}

/// --links: a comma-separated list of link packings.
/// @throws std::invalid_argument naming the first that is not f32, half or int8
inline std::vector<transport::link_format> parse_links(const std::string& list)
{
  std::vector<transport::link_format> links;
  std::stringstream ls(list);
  for (std::string l; std::getline(ls, l, ',');) {
    const auto f = transport::parse_link_format(l);
    if (!f) {
      throw std::invalid_argument("--links: '" + l + "' is not f32, half or int8");
    }
    links.push_back(*f);
  }
  return links;
}

/// Writes `text` to `path` unless `path` is empty.
/// @throws std::runtime_error naming the file when it cannot be written
inline void write_output(const std::string& path, const std::string& text)
{
  if (path.empty()) {
    return;
  }
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    throw std::runtime_error("cannot write " + path);
  }
}

/// Names the commit and the command line in `config`, runs `run(config, progress)`
/// with progress lines on the log, writes its result's JSON and Markdown where asked
/// (to_json and to_markdown of the result's namespace) and prints the Markdown.
/// @return EXIT_OK, or EXIT_RUNTIME after logging the error
template <class Config, class Run>
int run_and_report(Config& config, const std::string& command, Run&& run, const std::string& json, const std::string& markdown)
{
  config.commit = git_commit();
  config.command = command;
  auto log = spdlog::default_logger()->clone("whd-bench");
  try {
    const auto r = run(config, [&](std::string_view line) { log->info("{}", line); });
    const std::string md = to_markdown(r);
    write_output(json, to_json(r) + '\n');
    write_output(markdown, md);
    std::cout << md;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

} // namespace whd::bench_app
