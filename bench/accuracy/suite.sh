# Sourced by prepare.sh, predict.sh and measure.sh (carried next to
# measure.sh): the entries of the accuracy suite.
#   suite_entries FILE
# prints each entry of FILE ("id | program | arguments | kernels", '#'
# starts a comment) as "id|program|arguments|kernels", every field without
# its leading and trailing blanks; comments and blank lines are left out.
suite_entries() {
  local id prog args kernels
  while IFS='|' read -r id prog args kernels; do
    id=$(suite_trim "$id")
    case "$id" in '' | '#'*) continue ;; esac
    printf '%s|%s|%s|%s\n' "$id" "$(suite_trim "$prog")" \
      "$(suite_trim "$args")" "$(suite_trim "$kernels")"
  done < "$1"
}

# Leading and trailing blanks off.
suite_trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}
