# Run at every build (cmake -P): writes OUT, a C++ file defining gpubench::git_revision(), with the
# checkout's `git rev-parse --short=12 HEAD`, "+dirty" when tracked files differ from it, or
# "unknown" outside a checkout. The file is rewritten only when its text changes, so a build whose
# revision did not change recompiles nothing. (A revision read at configure time went stale: the
# first H200 run's results named a commit from before the 6 commits they were built from.)
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changes)
    string(APPEND rev "+dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/git_revision.cmake.\n#include \"gpubench/version.hpp\"\n\nnamespace gpubench {\nconst char* git_revision() { return \"${rev}\"; }\n}  // namespace gpubench\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
