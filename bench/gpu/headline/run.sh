#!/usr/bin/env bash
# On the GPU machine, from the repository root: the headline benchmark
# (issue 6 §5) built by bench/gpu/headline/prepare.sh, over the device sets
#   gpu0 | cpu | cpu+gpu0 | 2gpu | cpu+2gpu | 4gpu | cpu+4gpu
# (those that exist) and the policies
#   even    CLEAVE_PARTITION=even (on one device: the device alone);
#   model   CLEAVE_PARTITION=model with CLEAVE_PROFILE (default
#           profiles/h200x4-all.json) and a fresh CLEAVE_CACHE_DIR per device
#           set, warmed by one untimed pass;
#   sweep   CLEAVE_SPLIT weights: CPU share 0, 2, 5, 10 % with equal GPU
#           shares, and unequal shares over 2 GPUs (report.py takes the
#           fastest median, with `even`, as the best static split);
#   nospin  resident mode only, gpu0, 2gpu and 4gpu, even, with
#           CLEAVE_TUNE=spin_us=0 (policy label even-nospin): what spinning
#           before blocking at stream hand-offs gains, against `even`;
#   nopin   host mode only, gpu0 and the most GPUs, even, with
#           CLEAVE_TUNE=pin_host=off (policy label even-nopin): what page-locking
#           the host copies gains, against `even` of the same run;
#   shadow  host mode only, gpu0, 2gpu and 4gpu, even, with
#           CLEAVE_TUNE=host_copies=shadow (policy label even-shadow): what the
#           direct host copies gain, against `even`;
#   serial  resident mode only, 2gpu and 4gpu, even, with
#           CLEAVE_TUNE=issue=serial (policy label even-serial): what the issue
#           workers gain, against `even`;
#   native  native_split.cu built with nvcc: vecadd split by hand over
#           1/2/4 GPUs without Cleave ($OUT/native_split.jsonl);
#   phases  CLEAVE_LOG=phases of PHASE_KERNELS (vecadd, jacobi2d and
#           stencil3d) on gpu0 and over 2 and 4 GPUs, even and model
#           ($OUT/phases.log).
# Writes $OUT/headline.jsonl (one line per kernel, mode, device set and
# policy) and $OUT/headline.log; prints progress. Device sets that are
# absent are skipped; configurations that would start after DEADLINE
# seconds (default 500) are skipped and logged, so the run ends well within
# 9 minutes on 4 H200s.
#   bench/gpu/headline/run.sh [CARRY_DIR]   (default: build/gpu-carry-headline)
# Environment: REPS (30: the model searches at launches 1-4 and 9, which
# with 10 repetitions are half the samples), BUDGET_MS (per kernel and mode, 1000), KERNELS
# (all), DEADLINE (500), PROFILE, SMALL=1 (--small sizes, for a check),
# SCALE (headline's and native_split's --scale: 1, 2 or 4; default 2),
# PHASES (even,model,sweep: which of the parts below run; at --scale 2 one
# call of the GPU machine fits even+model over the GPU sets, gpu0, cpu and
# cpu+gpu0 go in a second, the sweep in a third), SETS (the device
# sets, space-separated), run_modes (resident,host; add pinned for host
# mode with page-locked host arrays, a process of its own per set).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
carry=$(cd "${1:-$root/build/gpu-carry-headline}" && pwd)
out=${OUT:-.}
mkdir -p "$out"
jsonl=$out/headline.jsonl
log=$out/headline.log
: > "$jsonl"
: > "$log"
export LD_LIBRARY_PATH=$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
reps=${REPS:-30}
budget=${BUDGET_MS:-1000}
kernels=${KERNELS:-all}
deadline=${DEADLINE:-500}
profile=${PROFILE:-$root/profiles/h200x4-all.json}
small=()
[ "${SMALL:-0}" = 1 ] && small=(--small)
small+=(--scale "${SCALE:-2}")
start=$(date +%s)
fails=0
skipped=0
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$log"; }

commit=$(head -c 40 "$carry/COMMIT" 2>/dev/null)
grep -q dirty "$carry/COMMIT" 2>/dev/null && commit="$commit (dirty)"
say "# headline benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $commit"
nvidia-smi -L 2>/dev/null | tee -a "$log"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "load: $(uptime)"
[ -r "$profile" ] || say "warning: no profile $profile (the model policy seeds from defaults)"

declare -A devs=([gpu0]=gpu0 [cpu]=cpu [cpu+gpu0]=cpu,gpu0
  [2gpu]=gpu0,gpu1 [cpu+2gpu]=cpu,gpu0,gpu1
  [4gpu]=gpu0,gpu1,gpu2,gpu3 [cpu+4gpu]=cpu,gpu0,gpu1,gpu2,gpu3)
sets="cpu"
[ "$ngpu" -ge 1 ] && sets="gpu0 cpu cpu+gpu0"
[ "$ngpu" -ge 2 ] && sets="$sets 2gpu cpu+2gpu"
[ "$ngpu" -ge 4 ] && sets="$sets 4gpu cpu+4gpu"
if [ -n "${SETS:-}" ]; then sets=$SETS; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run SET POLICY-LABEL [VAR=VALUE...]: one process, every kernel, the
# modes of run_modes but pinned; then, if run_modes names pinned, one more
# process for host mode with page-locked host arrays (--pinned-host).
run() {
  local set=$1 label=$2; shift 2
  local modes=${run_modes:-resident,host} plain
  plain=$(tr ',' '\n' <<< "$modes" | grep -vx pinned | paste -sd, -)
  [ -n "$plain" ] && run_one "$set" "$label" "$plain" "" "$@"
  grep -qx pinned <(tr ',' '\n' <<< "$modes") &&
    run_one "$set" "$label" host --pinned-host "$@"
}

# run_one SET POLICY-LABEL MODES EXTRA-FLAG [VAR=VALUE...]
run_one() {
  local set=$1 label=$2 modes=$3 extra=$4; shift 4
  local now=$(( $(date +%s) - start ))
  if [ "$now" -ge "$deadline" ]; then
    say "SKIPPED (deadline ${deadline}s): $set $label $modes $extra"
    skipped=$((skipped + 1))
    return
  fi
  say "## $set ($label, $modes $extra): CLEAVE_DEVICES=${devs[$set]} $*"
  if env -u CLEAVE_PARTITION -u CLEAVE_SPLIT -u CLEAVE_LOG -u CLEAVE_TUNE \
      CLEAVE_DEVICES="${devs[$set]}" "$@" \
      timeout 240 "$carry/bin/headline" "${small[@]}" --reps "$reps" \
      --budget-ms "$budget" --kernels "$kernels" --set "$set" \
      --modes "$modes" ${extra:+"$extra"} \
      --policy "$label" > "$work/run.jsonl" 2> "$work/run.err"; then
    :
  else
    fails=$((fails + 1))
    say "FAIL: $set $label $modes $extra (exit status)"
  fi
  grep -v '^headline: .* on ' "$work/run.err" >> "$log"
  # The commit and host go into every line.
  sed "s|^{|{\"git_commit\":\"$commit\",\"host\":\"$(hostname)\",|" \
    "$work/run.jsonl" >> "$jsonl"
  # Progress: kernel, mode, median and blocks per device of each line.
  sed -E 's/.*"kernel":"([^"]*)","mode":"([^"]*)".*"status":"([^"]*)"(,"median_ms":([0-9.]+))?.*"blocks":\{([^}]*)\}.*/  \1 \2 \3 \5 ms  \6/' \
    "$work/run.jsonl" | tee -a "$log"
  grep -q '"status":"wrong"' "$work/run.jsonl" && { fails=$((fails + 1)); say "FAIL: wrong results in $set $label"; }
}

weights() { # cpu-share gpu-shares...: weights for the set's devices
  local set=$1 c=$2; shift 2
  local w=""
  case $set in cpu+*) w=$c ;; esac
  for g in "$@"; do w=${w:+$w,}$g; done
  echo "$w"
}

phases=,${PHASES:-even,model,sweep},
# 1. Even (the single-device baselines first).
case $phases in *,even,*)
for s in $sets; do run "$s" even CLEAVE_PARTITION=even; done ;; esac
# 2. The model, a fresh cache per device set, warmed by one untimed pass.
case $phases in *,model,*) ;; *) sets_model= ;; esac
for s in ${sets_model-$sets}; do
  case $s in gpu0|cpu) continue ;; esac
  cache=$work/cache-$s
  rm -rf "$cache"; mkdir -p "$cache"
  say "## $s (model): warm-up pass (untimed)"
  env -u CLEAVE_SPLIT CLEAVE_DEVICES="${devs[$s]}" CLEAVE_PARTITION=model \
    CLEAVE_PROFILE="$profile" CLEAVE_CACHE_DIR="$cache" \
    timeout 240 "$carry/bin/headline" "${small[@]}" --reps 1 --budget-ms 0 \
    --kernels "$kernels" --set "$s" --modes "${run_modes:-resident,host}" \
    --policy model-warmup > /dev/null 2>> "$work/warm.err" ||
    say "warning: model warm-up on $s failed (see the log)"
  grep -v '^headline: .* on ' "$work/warm.err" >> "$log"; : > "$work/warm.err"
  run "$s" model CLEAVE_PARTITION=model CLEAVE_PROFILE="$profile" CLEAVE_CACHE_DIR="$cache"
done
# 3. The sweep (even is its equal-share point without the CPU).
case $phases in *,sweep,*) ;; *) sets_sweep= ;; esac
for s in ${sets_sweep-$sets}; do
  splits=()
  case $s in
    cpu+gpu0) for c in 0 0.02 0.05 0.10; do
        splits+=("$(weights "$s" "$c" "$(awk "BEGIN{print 1-$c}")")"); done ;;
    2gpu) splits=(0.45,0.55 0.55,0.45 0.4,0.6 0.6,0.4) ;;
    cpu+2gpu) for c in 0 0.02 0.05 0.10; do
        g=$(awk "BEGIN{print (1-$c)/2}")
        splits+=("$(weights "$s" "$c" "$g" "$g")"); done
      splits+=(0.05,0.4275,0.5225 0.05,0.5225,0.4275) ;;
    cpu+4gpu) for c in 0 0.02 0.05 0.10; do
        g=$(awk "BEGIN{print (1-$c)/4}")
        splits+=("$(weights "$s" "$c" "$g" "$g" "$g" "$g")"); done ;;
  esac
  for w in "${splits[@]}"; do run "$s" "split:$w" CLEAVE_SPLIT="$w"; done
done
# 4. Stream hand-offs that block at once (resident mode).
case $phases in *,nospin,*)
  for s in gpu0 2gpu 4gpu; do
    case " $sets " in *" $s "*) ;; *) continue ;; esac
    run_modes=resident run "$s" even-nospin CLEAVE_PARTITION=even CLEAVE_TUNE=spin_us=0
  done ;; esac
# 5. Host copies not page-locked (host mode).
case $phases in *,nopin,*)
  for s in gpu0 4gpu 2gpu; do
    case " $sets " in *" $s "*) ;; *) continue ;; esac
    run_modes=host run "$s" even-nopin CLEAVE_PARTITION=even CLEAVE_TUNE=pin_host=off
    [ "$s" = 4gpu ] && break
  done ;; esac
# 5c. Copies between the program's memory and the buffers through the
# buffers' host copies (host modes).
case $phases in *,shadow,*)
  for s in gpu0 2gpu 4gpu; do
    case " $sets " in *" $s "*) ;; *) continue ;; esac
    run_modes=host run "$s" even-shadow CLEAVE_PARTITION=even CLEAVE_TUNE=host_copies=shadow
  done ;; esac
# 5b. GPU ranges issued one after the other by the launching thread
# (resident mode).
case $phases in *,serial,*)
  for s in 2gpu 4gpu; do
    case " $sets " in *" $s "*) ;; *) continue ;; esac
    run_modes=resident run "$s" even-serial CLEAVE_PARTITION=even CLEAVE_TUNE=issue=serial
  done ;; esac
# 6. The hand-split CUDA ceiling (native_split.cu, built here with nvcc).
case $phases in *,native,*)
  if nvcc -O3 -arch=sm_90 -o "$work/native_split" \
      "$root/bench/gpu/headline/native_split.cu" 2>> "$log"; then
    say "## native: hand-split vecadd, 1/2/4 GPUs, one host thread"
    "$work/native_split" --reps 50 --scale "${SCALE:-2}" \
      > "$out/native_split.jsonl" 2>> "$log" ||
      { fails=$((fails + 1)); say "FAIL: native_split"; }
    sed "s|^{|{\"git_commit\":\"$commit\",\"host\":\"$(hostname)\",|" \
      -i "$out/native_split.jsonl"
    cat "$out/native_split.jsonl" | cut -c1-220 | tee -a "$log"
  else
    fails=$((fails + 1)); say "FAIL: nvcc native_split.cu"
  fi ;; esac
# 7. Where a launch's host time goes (CLEAVE_LOG=phases), resident mode:
# PHASE_KERNELS (vecadd, jacobi2d and stencil3d) on gpu0 and over 2 and 4
# GPUs, even and model.
case $phases in *,phases,*)
  for s in gpu0 2gpu 4gpu; do
    case " $sets " in *" $s "*) ;; *) continue ;; esac
    for pol in even model; do
      say "## phases: $s $pol"
      env -u CLEAVE_SPLIT CLEAVE_DEVICES="${devs[$s]}" CLEAVE_PARTITION=$pol \
        CLEAVE_PROFILE="$profile" CLEAVE_CACHE_DIR=off CLEAVE_LOG=phases \
        timeout 120 "$carry/bin/headline" --reps 20 --budget-ms 1000 \
        --kernels "${PHASE_KERNELS:-vecadd,jacobi2d,stencil3d}" \
        --modes resident --set "$s" \
        --policy "phases-$pol" > /dev/null 2> "$work/phases.err" ||
        say "warning: phases run $s $pol failed"
      grep '^cleave phases' "$work/phases.err" | sed "s|^|$s $pol |" \
        >> "$out/phases.log"
      say "  $(grep -c '^cleave phases' "$work/phases.err") lines"
    done
  done ;; esac
say "load: $(uptime)"
say "# $(wc -l < "$jsonl") lines in $jsonl; failures: $fails; skipped: $skipped; $(( $(date +%s) - start ))s"
exit $((fails > 0))
