#pragma once
// Standard output and error that can fail (a full disk behind `2>/dev/full`, a closed
// descriptor, `>&-`): a failed write never aborts gpubench and never passes silently.
namespace gpubench::app {

// At the start of main: descriptors 0-2 that are closed are opened on /dev/null read-only (so a
// results file never lands on them, and writes to them fail and are noticed), and `stderr`
// becomes a stream whose failed writes are recorded instead of raised (fmt::print would throw
// from wherever a diagnostic is printed, and again from the handler printing the error).
void guard_standard_streams();

// At the end of main: flushes stdout; when a write to stdout or stderr failed, says so (on
// stderr, if it can) and turns an exit code of 0 into 1. Other codes are kept. A reader that went
// away (EPIPE, with SIGPIPE ignored) is a quiet end: 141 (128 + SIGPIPE), no message.
int finish_standard_streams(int code);

}  // namespace gpubench::app
