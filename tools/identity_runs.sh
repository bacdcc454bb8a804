#!/usr/bin/env bash
# The restructure's behaviour-identity runs (docs/restructure-identity.md) on a machine of many cores:
# check --output-format json, facts and test-rules over fixtures/ and kernels_ref/ at the parent and
# the end of each range of restructure commits, in source and instantiated (CUTLASS headers) mode,
# side by side on all cores, most needed comparisons first; then a summary table (parent against
# end) and, with --bench, `python bench/run.py --quick` at 45a0b45 and 4380661 (the doc's HEAD; --bench-commits) on the quiet machine.
#
#   BUNDLE=repo.bundle CUTLASS=/tmp/cw/x SITE=/tmp/site OUT=/some/dir tools/identity_runs.sh [OPTIONS]
#
#   BUNDLE   git bundle of the repository (git bundle create repo.bundle --all)
#   CUTLASS  the unpacked nvidia-cutlass 4.2 wheel (the folder holding cutlass_library/)
#   SITE     a `pip install --target` folder of fusionlint's dependencies (libclang, networkx,
#            jsonschema, pyyaml, ...), without fusionlint
#   OUT      where the results go: summary.md, run.log, identity.tar.xz (res/ and blobs/; split in
#            15 MiB parts identity.tar.xz.NN when larger), bench.tar.gz
#   WORK     scratch (default /tmp/identity17): the clone, the worktrees, a venv, the runs' outputs
#   PY       the Python 3 to make the venv from (default python3.12, else python3)
#
# OPTIONS (tools/identity_runs.py run --help): --stop-at S (stop the identity runs S seconds after the
# start, default 520), --prev FILE|DIR (resume: an earlier identity.tar.xz, its parts, or their folder),
# --jobs N (default: all cores), --bench [--bench-reserve S], --no-identity, --ranges 1,2,
# --only inst:check,src:facts, --check-paths "...", --test-paths "...".
#
# The runs' environment: only PATH (the venv's bin first) and C.UTF-8 of the caller's; a fresh HOME,
# XDG dirs, TMPDIR and cache directory per run; PYTHONPATH the worktree (source mode) or the worktree
# and CUTLASS (instantiated mode, with --timeout 0); SITE through a .pth file of a venv without the
# system's site-packages, so that no installed fusionlint, cutlass_library or nvidia (cuBLAS) wheel
# is seen. Each commit and mode is checked first (fusionlint and fusionlint.rulesets from the worktree,
# CUTLASS headers only in instantiated mode); a failed check skips its runs.
set -euo pipefail
: "${BUNDLE:?BUNDLE: the git bundle}" "${CUTLASS:?CUTLASS: the unpacked cutlass wheel}" "${SITE:?SITE: the dependencies}"
: "${OUT:?OUT: the output folder}"
WORK=${WORK:-/tmp/identity17}
PY=${PY:-$(command -v python3.12 || command -v python3)}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
test -f "$BUNDLE" || { echo "no bundle $BUNDLE" >&2; exit 2; }
test -f "$CUTLASS/cutlass_library/source/include/cutlass/cutlass.h" || { echo "no CUTLASS headers under $CUTLASS" >&2; exit 2; }
test -d "$SITE/clang" || { echo "no libclang bindings in $SITE" >&2; exit 2; }
mkdir -p "$OUT" "$WORK"
exec "$PY" -u "$HERE/identity_runs.py" run --bundle "$BUNDLE" --cutlass "$CUTLASS" --site "$SITE" \
  --out "$OUT" --work "$WORK" --python "$PY" "$@"
