# Shared by perf/dataload_*.sh (sourced): the binary, the rounds, tjbench, a scratch folder and
# the helpers both comparisons use. Sets root, bin, rounds, work; callers set secs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$root/build/ci/apps/gpubench/gpubench}"
rounds="${ROUNDS:-3}"
command -v tjbench >/dev/null || { echo "tjbench not found: apt-get install libjpeg-turbo-progs" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The samples/s of the first case in a gpubench results file.
samples_per_s() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [b for b in d["benchmarks"] if b.get("run_type") == "iteration"][0]
print("%.2f" % e["gpubench"]["metrics"]["items_per_s"])
PY
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
max() { awk -v a="${1:-0}" -v b="$2" 'BEGIN{print (a > b) ? a : b}'; }
