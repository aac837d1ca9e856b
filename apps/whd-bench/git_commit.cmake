# Run at every build (cmake -P): writes OUT, the source that names the commit the
# benchmark reports (git rev-parse, "-dirty" when tracked files differ from it,
# "unknown" outside a git checkout). OUT is rewritten only when that changes, so an
# unchanged tree recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
elseif(dirty)
  string(APPEND commit "-dirty")
endif()
set(content "// Generated at build time by apps/whd-bench/git_commit.cmake.\n#include \"subcommands.hpp\"\n\nconst char* whd::bench_app::git_commit() { return \"${commit}\"; }\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
