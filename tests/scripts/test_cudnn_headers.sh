#!/usr/bin/env bash
# scripts/lib.sh's ensure_cudnn_headers, offline: a toolkit with cudnn.h is used as it is; one
# without gets the pinned wheel's headers from the cache into build/deps/cudnn-cu<major> with a
# SOURCE naming the wheel (what CMake, doctor and `gpubench version` report); a failed download
# leaves nothing behind and the build goes on; every pin carries a SHA-256.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=../../scripts/lib.sh
source "$root/scripts/lib.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
GPUBENCH_ROOT="$tmp/repo"  # ensure_cudnn_headers writes under $GPUBENCH_ROOT/build/deps
export GPUBENCH_CACHE="$tmp/cache"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A toolkit that has cudnn.h: nothing fetched, nothing written.
mkdir -p "$tmp/tk13/include" "$tmp/tk12/include"
touch "$tmp/tk13/include/cudnn.h"
ensure_cudnn_headers 13 "$tmp/tk13" 2>/dev/null
[ -e "$tmp/repo/build/deps/cudnn-cu13" ] && fail "a toolkit with cudnn.h still got build/deps/cudnn-cu13"

# No cudnn.h in the toolkit, the pinned wheel's headers in the cache: copied, SOURCE says which.
pin=""
for entry in "${GPUBENCH_CUDNN_WHEELS[@]}"; do
  read -r major mb p hash <<<"$entry"
  [[ "$hash" =~ ^--hash=sha256:[0-9a-f]{64}$ ]] || fail "pin '$entry' has no SHA-256"
  [[ "$mb" =~ ^[0-9]+$ ]] || fail "pin '$entry' has no size in MB"
  [ "$major" = 12 ] && pin="$p"
done
[ "$pin" = "nvidia-cudnn-cu12==9.19.0.56" ] || fail "the CUDA 12 pin is '$pin'"
mkdir -p "$tmp/cache/cudnn-headers/${pin/==/-}/include"
echo '#define CUDNN_MAJOR 9' >"$tmp/cache/cudnn-headers/${pin/==/-}/include/cudnn.h"
ensure_cudnn_headers 12 "$tmp/tk12" 2>/dev/null
grep -q CUDNN_MAJOR "$tmp/repo/build/deps/cudnn-cu12/include/cudnn.h" 2>/dev/null || fail "cudnn.h not copied from the cache"
[ "$(cat "$tmp/repo/build/deps/cudnn-cu12/SOURCE" 2>/dev/null)" = "PyPI $pin" ] || fail "SOURCE does not name PyPI $pin"

# A failed download (no index): a log line, no build/deps folder, no temporary folder, status 0.
rm -rf "$tmp/repo/build/deps/cudnn-cu12" "$tmp/cache/cudnn-headers"
out=$(PIP_NO_INDEX=1 PIP_FIND_LINKS="" ensure_cudnn_headers 12 "$tmp/tk12" 2>&1); rc=$?
[ "$rc" = 0 ] || fail "a failed download returned $rc"
grep -q "cudnn.h not installed" <<<"$out" || fail "a failed download said: $out"
[ -e "$tmp/repo/build/deps/cudnn-cu12" ] && fail "a failed download left build/deps/cudnn-cu12"
[ -n "$(ls -A "$tmp/cache/cudnn-headers" 2>/dev/null)" ] && fail "a failed download left $(ls "$tmp/cache/cudnn-headers")"

# A CUDA major without a pin: said, not fatal.
out=$(ensure_cudnn_headers 11 "$tmp/tk12" 2>&1) || fail "CUDA 11 returned non-zero"
grep -q "no pinned nvidia-cudnn-cu11" <<<"$out" || fail "CUDA 11 said: $out"

[ "$failures" = 0 ] && echo "ensure_cudnn_headers: all checks passed"
exit $((failures > 0))
