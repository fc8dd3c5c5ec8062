#!/usr/bin/env bash
# Runs every fuzz target for a short while (default 30 s each) from its committed corpus, with its
# dictionary, on the stable toolchain without a sanitizer. New inputs go to a scratch folder, so
# the committed corpus stays as it is. Usage: fuzz/smoke.sh [SECONDS] [TARGET…]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-30}"
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(cargo fuzz list)
fi
dict_for() {
  case "$1" in
    template) echo dict/template.dict ;;
    condition) echo dict/condition.dict ;;
    safe_parse | json_diff) echo dict/safe_parse.dict ;;
    journal) echo dict/journal.dict ;;
    machine) ;;
    *) echo dict/flow.dict ;;
  esac
}
# Linear targets take inputs up to 1 MiB; the whole-front-end and structure-aware ones stay
# small so that they run thousands of times a second (their structure is generated, not read).
max_len_for() {
  case "$1" in
    check | check_render) echo 16384 ;;
    deep | flow_shape | machine | types) echo 4096 ;;
    journal) echo 65536 ;;
    *) echo 1048576 ;;
  esac
}
corpus_for() {
  case "$1" in
    check_render) echo corpus/check ;;
    json_diff) echo corpus/json ;;
    *) echo "corpus/$1" ;;
  esac
}
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cargo fuzz build -s none
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  echo "== fuzz $t (${secs}s)"
  status=0
  dict="$(dict_for "$t")"
  cargo fuzz run -s none "$t" "$scratch/$t" "$(corpus_for "$t")" -- \
    -max_total_time="$secs" ${dict:+-dict="$dict"} -max_len="$(max_len_for "$t")" -rss_limit_mb=4096 \
    -print_final_stats=1 >"$scratch/$t.log" 2>&1 || status=$?
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+[[:space:]]+DONE" "$scratch/$t.log" || true
  if [[ $status -ne 0 ]]; then
    tail -n 60 "$scratch/$t.log" >&2
    echo "fuzz target $t failed (exit $status); a crashing input is kept in fuzz/artifacts/$t" >&2
    exit 1
  fi
done
