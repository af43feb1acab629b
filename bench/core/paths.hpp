#pragma once
// Output paths: one validator behind every option that names a file or folder gpubench writes
// (run --out, --trace-dir, --benchmark_out; report/compare/history --out/--output/--junit;
// tune --cache; datagen --out), so every command refuses the same bad paths the same way:
// before anything is run, read or created, with one line naming the option (exit 2).
//
// Refused: an empty path; a name with a trailing '/'; a file name too long to hold gpubench's
// temporary file beside it (NAME_MAX); a path longer than PATH_MAX; a path that is not valid
// UTF-8 (results and reports carry their paths in JSON); an existing path that is not a regular
// file (a device node such as /dev/null or /dev/full, a FIFO, a socket, a folder): gpubench
// replaces its outputs by rename(2), which would replace the device node itself; an existing
// file that cannot be written; a parent that exists but is not a folder; a deepest existing
// folder that cannot be written; less than kMinFreeBytes free there.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>
#include <cstdint>

#include "path_text.hpp"  // printable_path, file_kind

namespace gpubench {


// Checks a file output path as above; creates nothing. Throws UsageError naming `option`.
void validate_output_file(const std::filesystem::path& path, std::string_view option);
// Checks a folder output path (it exists as a folder, or can be created); creates nothing.
void validate_output_folder(const std::filesystem::path& path, std::string_view option);
// Creates the missing folders of an output path that passed validation (UsageError on failure).
void make_folders(const std::filesystem::path& dir, std::string_view option);

// One command's inputs and outputs, checked together before anything is read or written: each
// path is resolved (symlinks followed, `.` and `..` folded; a missing tail kept as written) and an
// output is refused (UsageError, so exit 2 and nothing written) when it is one of the inputs, lies
// inside an input folder (history DIR --out DIR/h.json would be read by the next history DIR), is
// another output of the same command, or is a file another gpubench process holds the lock on
// (OutputLock). Every command that reads files and writes files calls it once.
struct NamedPath {
  std::filesystem::path path;
  std::string option;  // how the user named it: "--out", "--junit", "input"
};
void check_path_clashes(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);
// An input given twice (after symlinks): UsageError naming it (report and scaling would count the
// same runs twice; compare A A stays allowed, a self-check).
void refuse_repeated_inputs(const std::vector<NamedPath>& inputs);
// The pid of the gpubench process that holds the lock of results file `path` (OutputLock), or 0.
pid_t lock_holder(const std::filesystem::path& path);

// The folder for temporary files and folders: $TMPDIR when set (and not empty), else /tmp;
// checked to be an existing, writable folder, or a UsageError that names TMPDIR (what
// std::filesystem::temp_directory_path throws names nothing the user set).
std::filesystem::path temp_folder();

// Whether process `pid` is gone (kill(pid, 0) answers ESRCH). A pid of another host (a folder
// shared over NFS) reads as gone only if no process of that number runs here.
bool process_gone(pid_t pid);

// Leftovers of dead gpubench processes, removed at the next start: entries of `dir` named
// `prefix` followed by a process id (and nothing else) whose process is gone. Returns how many
// were removed. Errors are ignored (another run may be cleaning the same folder).
int remove_stale_leftovers(const std::filesystem::path& dir, const std::string& prefix);

// An advisory lock held by a run on its results file for the run's lifetime (flock(2) on
// `<path>.lock`, which holds the owner's pid), so two runs never write the same file. The lock
// file is removed when the lock is released (also by the interruption handler).
class OutputLock {
 public:
  OutputLock() = default;
  // Throws UsageError naming the holder's pid when another process holds it.
  OutputLock(const std::filesystem::path& path, std::string_view option);
  ~OutputLock();
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::string& lock_path() const { return lock_path_; }

 private:
  void release();
  int fd_ = -1;
  std::string lock_path_;
};

}  // namespace gpubench
