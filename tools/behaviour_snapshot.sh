#!/usr/bin/env bash
# The outputs a behaviour-preserving change must leave byte-identical: check (text and JSON),
# facts (JSON) and test-rules over fixtures/ and kernels_ref/, in both CUTLASS modes (instantiated:
# the CUTLASS headers of the nvidia-cutlass wheel found; source: --no-system-headers).
#
#   tools/behaviour_snapshot.sh REPO OUTDIR     REPO: a checkout with its own .venv
#                                               (pip install -e '.[test,cutlass]')
#
# Compare two commits: a worktree for each (git worktree add DIR SHA), a snapshot of each, then
# `diff -r OUT1 OUT2`. Each file ends with the command's exit status; the checkout's path is
# replaced by <REPO>, so that two worktrees compare. Each run uses a fresh cache directory.
set -u
repo=$(cd "$1" && pwd); out=$2; mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$repo"; . .venv/bin/activate
export FUSIONLINT_CACHE_DIR=$(mktemp -d)
for mode in instantiated source; do
  flag=""; [ $mode = source ] && flag="--no-system-headers"
  for d in fixtures kernels_ref; do
    fusionlint check $flag $d > "$out/check-$mode-$d.txt" 2>&1; echo "rc=$?" >> "$out/check-$mode-$d.txt"
    fusionlint check $flag --output-format json $d > "$out/check-$mode-$d.json" 2>&1; echo "rc=$?" >> "$out/check-$mode-$d.json"
    fusionlint facts --no-index $flag --output-format json $d > "$out/facts-$mode-$d.json" 2>&1; echo "rc=$?" >> "$out/facts-$mode-$d.json"
    fusionlint test-rules $flag $d > "$out/test-rules-$mode-$d.txt" 2>&1; echo "rc=$?" >> "$out/test-rules-$mode-$d.txt"
  done
done
sed -i "s#$repo#<REPO>#g" "$out"/*
rm -rf "$FUSIONLINT_CACHE_DIR"
