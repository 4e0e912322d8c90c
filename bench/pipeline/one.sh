# Sourced by bench/pipeline/run.sh and bench/linkstates/run.sh (on the GPU
# machine). The caller sets budget, start, tmo, args, jsonl, log, plans and
# fails, and defines say.
#
# one LABEL ENV... -- BINARY ARGS...: one configuration, its JSON lines to
# $jsonl (or, for a label starting with "plans", its stderr to $plans),
# unless the budget is spent.
one() {
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0=$(date +%s)
  local left=$((budget - (t0 - start)))
  if [ "$left" -lt 10 ]; then
    say "== $label: skipped, the budget of $budget s is spent"
    fails=$((fails + 1))
    return
  fi
  local limit=$(( left < tmo ? left : tmo ))
  say "== $label: ${envs[*]} $* (at most $limit s)"
  local rc
  if [[ $label == plans* ]]; then
    echo "== $label: ${envs[*]} $*" >> "$plans"
    env "${envs[@]}" timeout "$limit" "$@" "${args[@]}" --reps 1 \
      --label "$label" > /dev/null 2>> "$plans"
    rc=$?
  else
    env "${envs[@]}" timeout "$limit" "$@" "${args[@]}" --label "$label" \
      >> "$jsonl" 2>> "$log"
    rc=$?
  fi
  say "   rc=$rc, $(( $(date +%s) - t0 )) s"
  [ $rc = 0 ] || fails=$((fails + 1))
}
