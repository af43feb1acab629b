#!/usr/bin/env bash
# scripts/slurm/*.sbatch with and without IMAGE, run as plain bash scripts with stand-ins for
# srun, sbatch, mpirun and gpubench earlier on PATH that record their arguments (no Slurm, no
# pyxis, no build needed). With IMAGE every gpubench step goes through srun with pyxis's
# --container-image, --container-mounts (OUT_DIR at its own path, then CONTAINER_MOUNTS),
# --no-container-mount-home and --no-container-entrypoint; mpirun is refused; without IMAGE the
# commands are today's: gpubench in the batch step (suite, array), srun/mpirun with no container
# options (collectives, fleet). scripts/test-slurm.sh runs the same scripts on a real Slurm.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
slurm="$root/scripts/slurm"
tmp="$(mktemp -d /tmp/gpubench-slurm-ctr.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failed=0
pass() { printf 'PASS %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failed=1; }

mkdir -p "$tmp/bin"
cat >"$tmp/bin/srun" <<'EOF'
#!/usr/bin/env bash
# Records its arguments; `srun --mpi=list` lists pmix where FAKE_PMIX=1; else runs the command
# after its options (the scripts give srun options as --name=value) with IN_SRUN=1.
printf 'srun %s\n' "$*" >>"$CALLS"
if [ "${1:-}" = --mpi=list ]; then
  echo "MPI plugin types are..."; echo "	none"; [ "${FAKE_PMIX:-0}" = 1 ] && echo "	pmix"
  exit 0
fi
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
IN_SRUN=1 exec "$@"
EOF
cat >"$tmp/bin/mpirun" <<'EOF'
#!/usr/bin/env bash
printf 'mpirun %s\n' "$*" >>"$CALLS"
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
exec "$@"
EOF
cat >"$tmp/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
printf 'sbatch %s\n' "$*" >>"$CALLS"
echo 4242
EOF
cat >"$tmp/bin/gpubench" <<'EOF'
#!/usr/bin/env bash
# Records how it was started (in an srun step or not) and writes the file --out names.
printf 'gpubench[%s] %s\n' "${IN_SRUN:-batch}" "$*" >>"$CALLS"
out=""
while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
[ -n "$out" ] && echo '{}' >"$out"
exit 0
EOF
chmod +x "$tmp/bin/"*
export PATH="$tmp/bin:$PATH"
image=registry.example.com/gpubench:cuda13

# run NAME SCRIPT [VAR=VALUE...]: runs the script with a fresh OUT_DIR and call log; sets $out_dir,
# $log (the calls, one a line) and $code.
run() {
  local name="$1" script="$2"; shift 2
  out_dir="$tmp/$name/results"
  mkdir -p "$out_dir"
  export CALLS="$tmp/$name/calls"
  : >"$CALLS"
  (cd "$tmp/$name" && env -u IMAGE -u CONTAINER_MOUNTS -u LAUNCHER -u SLURM_JOB_ID -u SLURM_ARRAY_JOB_ID \
    OUT_DIR="$out_dir" SLURM_JOB_ID=7 "$@" bash "$slurm/$script" >"$tmp/$name/stdout" 2>"$tmp/$name/stderr")
  code=$?
  log="$(cat "$CALLS")"
}
has() { grep -qF -- "$1" <<<"$log"; }
lines() { grep -cF -- "$1" <<<"$log"; }
ctr_args="--container-image=$image"
no_ctr() { ! grep -q -- '--container-\|--no-container-' <<<"$log"; }

# 1. suite.sbatch without IMAGE: gpubench in the batch step itself, no srun at all (as today).
run suite-plain suite.sbatch
if [ "$code" = 0 ] && ! has "srun " && has "gpubench[batch] run --preset quick --out $out_dir/" &&
   has "gpubench[batch] report $out_dir/"; then
  pass "suite.sbatch without IMAGE: run and report in the batch step, no srun"
else
  fail "suite.sbatch without IMAGE: exit $code, calls: $log"
fi

# 2. suite.sbatch with IMAGE and CONTAINER_MOUNTS: both steps through srun into the image.
run suite-image suite.sbatch IMAGE="$image" CONTAINER_MOUNTS=/data:/data:ro
want="srun --nodes=1 --ntasks=1 $ctr_args --container-mounts=$out_dir:$out_dir,/data:/data:ro --no-container-mount-home --no-container-entrypoint gpubench run --preset quick --out $out_dir/"
if [ "$code" = 0 ] && has "$want" && has "gpubench[1] run --preset quick" && has "gpubench[1] report $out_dir/" &&
   ! has "gpubench[batch]" && [ "$(lines "$ctr_args")" = 2 ]; then
  pass "suite.sbatch with IMAGE: run and report through srun --container-image, OUT_DIR mounted at its path"
else
  fail "suite.sbatch with IMAGE: exit $code, want '$want'; calls: $log"
fi

# 3. collectives.sbatch and fleet.sbatch with IMAGE: ranks through srun --mpi=pmix into the image.
for script in collectives fleet; do
  run "$script-image" "$script.sbatch" IMAGE="$image" FAKE_PMIX=1
  if [ "$code" = 0 ] && has "srun --mpi=pmix --kill-on-bad-exit=1 $ctr_args --container-mounts=$out_dir:$out_dir --no-container-mount-home --no-container-entrypoint gpubench run " &&
     has "srun --nodes=1 --ntasks=1 $ctr_args" && has "gpubench[1] report $out_dir/$script-7.json" && ! has "mpirun "; then
    pass "$script.sbatch with IMAGE: ranks through srun --mpi=pmix --container-image, the report too"
  else
    fail "$script.sbatch with IMAGE: exit $code, calls: $log"
  fi
  # Without PMIx listed, auto still takes srun (pyxis hooks nothing else).
  run "$script-image-nopmix" "$script.sbatch" IMAGE="$image" FAKE_PMIX=0
  if has "srun --mpi=pmix --kill-on-bad-exit=1 $ctr_args" && ! has "mpirun "; then
    pass "$script.sbatch with IMAGE, no PMIx listed: still srun, never mpirun"
  else
    fail "$script.sbatch with IMAGE, no PMIx listed: calls: $log"
  fi
  # LAUNCHER=mpirun cannot put ranks in the image: refused with exit 2, naming pyxis.
  run "$script-image-mpirun" "$script.sbatch" IMAGE="$image" LAUNCHER=mpirun
  if [ "$code" = 2 ] && ! has "mpirun " && ! has "gpubench[" && grep -q pyxis "$tmp/$script-image-mpirun/stderr"; then
    pass "$script.sbatch with IMAGE and LAUNCHER=mpirun: refused, exit 2 ($(head -n1 "$tmp/$script-image-mpirun/stderr"))"
  else
    fail "$script.sbatch with IMAGE and LAUNCHER=mpirun: exit $code, calls: $log, stderr: $(cat "$tmp/$script-image-mpirun/stderr")"
  fi
  # Without IMAGE: today's launch lines, no container option anywhere.
  run "$script-plain-srun" "$script.sbatch" FAKE_PMIX=1
  if [ "$code" = 0 ] && has "srun --mpi=pmix --kill-on-bad-exit=1 gpubench run " && no_ctr && has "gpubench[batch] report"; then
    pass "$script.sbatch without IMAGE (PMIx): srun --mpi=pmix gpubench, report in the batch step"
  else
    fail "$script.sbatch without IMAGE (PMIx): exit $code, calls: $log"
  fi
  run "$script-plain-mpirun" "$script.sbatch" FAKE_PMIX=0
  if [ "$code" = 0 ] && has "mpirun " && has "gpubench run " && no_ctr; then
    pass "$script.sbatch without IMAGE (no PMIx): mpirun, as today"
  else
    fail "$script.sbatch without IMAGE (no PMIx): exit $code, calls: $log"
  fi
done

# 4. array.sbatch: task 0 submits the report job; with IMAGE its --wrap and the run go through srun.
array_env=(SLURM_ARRAY_JOB_ID=99 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0)
run array-image array.sbatch IMAGE="$image" "${array_env[@]}"
wrap="$(grep '^sbatch ' <<<"$log")"
if [ "$code" = 0 ] && grep -qF -- "--wrap=srun --nodes=1 --ntasks=1 $ctr_args --container-mounts=$out_dir:$out_dir" <<<"$wrap" &&
   grep -qF "gpubench' report '$out_dir'/*_*.json" <<<"$wrap" && has "gpubench[1] run --preset quick" && ! has "gpubench[batch]"; then
  pass "array.sbatch with IMAGE: the run and the follow-up report job through srun --container-image"
else
  fail "array.sbatch with IMAGE: exit $code, calls: $log"
fi
run array-plain array.sbatch "${array_env[@]}"
wrap="$(grep '^sbatch ' <<<"$log")"
if [ "$code" = 0 ] && grep -qF -- "--wrap='$tmp/bin/gpubench' report '$out_dir'/*_*.json" <<<"$wrap" && ! has "srun " &&
   has "gpubench[batch] run --preset quick"; then
  pass "array.sbatch without IMAGE: gpubench by its path in the batch step and the report job, no srun"
else
  fail "array.sbatch without IMAGE: exit $code, calls: $log"
fi

# 5. evaluate.sbatch: in the batch step without IMAGE, through srun into the image with it.
run evaluate-plain evaluate.sbatch BUDGET=10m
if [ "$code" = 0 ] && ! has "srun " && has "gpubench[batch] evaluate --budget 10m --out $out_dir/" &&
   has "--report md,html"; then
  pass "evaluate.sbatch without IMAGE: evaluate in the batch step with its report, no srun"
else
  fail "evaluate.sbatch without IMAGE: exit $code, calls: $log"
fi
run evaluate-image evaluate.sbatch IMAGE="$image"
want="srun --nodes=1 --ntasks=1 $ctr_args --container-mounts=$out_dir:$out_dir --no-container-mount-home --no-container-entrypoint gpubench evaluate --budget 30m --out $out_dir/"
if [ "$code" = 0 ] && has "$want" && has "gpubench[1] evaluate" && ! has "gpubench[batch]"; then
  pass "evaluate.sbatch with IMAGE: evaluate through srun --container-image"
else
  fail "evaluate.sbatch with IMAGE: exit $code, want '$want'; calls: $log"
fi

exit "$failed"
