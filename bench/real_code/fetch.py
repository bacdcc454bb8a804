#!/usr/bin/env python3
"""Materialise the real-code corpus of ``manifest.json`` under ``.corpus/`` (third-party code, never committed).

Each file of the manifest is ``OWNER/REPO@COMMIT:PATH`` with its sha256; it is written to
``DEST/OWNER/REPO/PATH`` (``DEST`` defaults to ``.corpus/`` in the repository root). Sources, in order:

1. the file already in ``DEST`` with the right sha256 (nothing to do);
2. ``--from-dir DIR``: a directory laid out like the corpus (``DIR/OWNER/REPO/PATH``);
3. ``--from-pages DIR``: the file in consecutive pieces, ``DIR/OWNER/REPO/PATH.page000``,
   ``.page001``... (concatenated in order; see "Files that cannot be mirrored" below);
4. ``--mirror DIR``: local git mirrors, ``DIR/OWNER+REPO/repo`` (or ``.../repo/.git``,
   ``DIR/OWNER+REPO``, ``DIR/OWNER/REPO.git``, ``DIR/OWNER/REPO``), read with
   ``git --git-dir GITDIR cat-file blob COMMIT:PATH``;
5. ``https://raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH`` (skipped with ``--offline``).

Every file is checked against its sha256 (and its size, where the manifest has ``bytes``) before it
is written; a file no source could supply is one line on stderr, and the exit status is 1. Standard
library only.

With network access, a plain ``python bench/real_code/fetch.py`` downloads everything. Without it
(the development sandbox), the corpus is built from mirrors and pages:

- Mirrors (``source: git`` in the manifest): a snapshot of each repository as a git directory,
  ``/work/.mirror/OWNER+REPO/repo`` (the sandbox's repository-snapshot tool makes them, one call
  per repository: NVIDIA/cutlass, NVIDIA/TransformerEngine, NVIDIA/FasterTransformer,
  NVIDIA/CUDALibrarySamples, NVIDIA/apex, pytorch/FBGEMM, manospavlidakis/PyTorch_static_cuda_libs;
  the held-out groups: karpathy/llm.c, bitsandbytes-foundation/bitsandbytes, flashinfer-ai/flashinfer).
  Every pinned commit must be in the snapshot's history (``git --git-dir ... cat-file -e COMMIT``);
  when one is not, pin the commit the snapshot has and update ``sha256``/``bytes``.
- Files that cannot be mirrored (``source: index``: pytorch/pytorch and vllm-project/vllm are too
  large to snapshot) come from the public file index, which serves a file at a commit in pages of
  16,000 characters (``offset`` 0, 16000, ...). Write page *i* verbatim (no added newline) to
  ``PAGES/OWNER/REPO/PATH.page{i:03d}`` and pass ``--from-pages PAGES``; the concatenation must
  hash to the manifest's sha256 (every page but the last is 16,000 characters: a quick check that
  none was cut). Done that way for the baseline of RESULTS.md: CUDABlas.cpp in 7 pages, the two
  vLLM headers in one each. The held-out TVM and onnxruntime files (``heldout-tvm``,
  ``heldout-onnxruntime``) were read whole the same way and passed with ``--from-dir``; XLA's
  ``cuda_blas_lt.cc`` (``heldout-xla``) in two pages with ``--from-pages``.

    python bench/real_code/fetch.py                       # download what is missing
    python bench/real_code/fetch.py --mirror /work/.mirror --from-pages /tmp/pages --offline
    python bench/real_code/fetch.py --group cutlass-48 --list
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest.json"
DEFAULT_DEST = ROOT / ".corpus"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class FetchError(Exception):
    """One source could not supply one file (a one-line reason)."""


def load_manifest(path: Path = MANIFEST) -> dict:
    try:
        man = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"fetch.py: {path}: cannot read the manifest: {exc}") from None
    for i, f in enumerate(man.get("files", [])):
        missing = [k for k in ("repo", "commit", "path", "sha256", "group") if not f.get(k)]
        if missing:
            raise SystemExit(f"fetch.py: {path}: file #{i} lacks {', '.join(missing)}")
    return man


def corpus_path(dest: Path, entry: dict) -> Path:
    """Where a manifest entry lives in the corpus; refuses paths that would leave ``dest``."""
    rel = Path(entry["repo"]) / entry["path"]
    if rel.is_absolute() or ".." in rel.parts:
        raise FetchError(f"unsafe path {rel}")
    return dest / rel


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mirror_git_dirs(mirror: Path, repo: str) -> list[Path]:
    owner, name = repo.split("/", 1)
    base = mirror / f"{owner}+{name}"
    return [base / "repo" / ".git", base / "repo", base, mirror / owner / f"{name}.git", mirror / owner / name,
            mirror / owner / name / ".git"]


def from_mirror(mirror: Path, entry: dict) -> bytes:
    tried = False
    for gd in _mirror_git_dirs(mirror, entry["repo"]):
        if not (gd / "objects").is_dir():
            continue
        tried = True
        r = subprocess.run(["git", "--git-dir", str(gd), "cat-file", "blob", f"{entry['commit']}:{entry['path']}"],
                           capture_output=True, check=False)
        if r.returncode == 0:
            return r.stdout
    if not tried:
        raise FetchError(f"no mirror of {entry['repo']} under {mirror}")
    raise FetchError(f"the mirror of {entry['repo']} has no {entry['commit'][:12]}:{entry['path']}")


def from_dir(src: Path, entry: dict) -> bytes:
    p = corpus_path(src, entry)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise FetchError(f"{p}: {exc.strerror or exc}") from None


def from_pages(src: Path, entry: dict) -> bytes:
    """The file's pages ``PATH.page000``, ``PATH.page001``... under ``src``, concatenated."""
    base = corpus_path(src, entry)
    pages = []
    while (p := base.with_name(f"{base.name}.page{len(pages):03d}")).is_file():
        pages.append(p.read_bytes())
    if not pages:
        raise FetchError(f"no {base.name}.page000 in {base.parent}")
    return b"".join(pages)


def download(entry: dict, timeout: float) -> bytes:
    url = RAW_URL.format(**entry)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - fixed https host
            return resp.read()
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"{url}: {reason}") from None


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".fetch-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch_one(entry: dict, dest: Path, *, src_dir: Path | None, mirror: Path | None, offline: bool,
              timeout: float, pages: Path | None = None) -> str:
    """Make ``entry`` present in ``dest``; returns where it came from, raises FetchError with every reason."""
    target = corpus_path(dest, entry)
    if target.is_file() and sha256(target.read_bytes()) == entry["sha256"]:
        return "present"
    reasons = []
    sources = []
    if src_dir is not None:
        sources.append(("dir", lambda: from_dir(src_dir, entry)))
    if pages is not None:
        sources.append(("pages", lambda: from_pages(pages, entry)))
    if mirror is not None:
        sources.append(("mirror", lambda: from_mirror(mirror, entry)))
    if not offline:
        sources.append(("download", lambda: download(entry, timeout)))
    if not sources:
        raise FetchError("no source (give --mirror, --from-dir or --from-pages, or allow downloads)")
    for name, get in sources:
        try:
            data = get()
        except FetchError as exc:
            reasons.append(f"{name}: {exc}")
            continue
        got = sha256(data)
        if entry.get("bytes") is not None and len(data) != entry["bytes"]:
            reasons.append(f"{name}: {len(data)} bytes, not the manifest's {entry['bytes']}")
            continue
        if got != entry["sha256"]:
            reasons.append(f"{name}: sha256 {got[:16]}... is not the manifest's {entry['sha256'][:16]}...")
            continue
        write_atomic(target, data)
        return name
    raise FetchError("; ".join(reasons))


def select(man: dict, groups: list[str] | None) -> list[dict]:
    files = man["files"]
    if groups:
        known = {f["group"] for f in files}
        bad = [g for g in groups if g not in known]
        if bad:
            raise SystemExit(f"fetch.py: unknown group(s) {', '.join(bad)} (known: {', '.join(sorted(known))})")
        files = [f for f in files if f["group"] in groups]
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="corpus directory (default: .corpus/)")
    ap.add_argument("--mirror", type=Path, help="directory of local bare git mirrors (OWNER+REPO/repo)")
    ap.add_argument("--from-dir", type=Path, help="a directory laid out like the corpus (OWNER/REPO/PATH)")
    ap.add_argument("--from-pages", type=Path,
                    help="a directory of files in pages (OWNER/REPO/PATH.page000, .page001, ...)")
    ap.add_argument("--offline", action="store_true", help="never download")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per download (default 30)")
    ap.add_argument("--group", action="append", help="only this group (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the files and whether they are present; fetch nothing")
    args = ap.parse_args(argv)

    man = load_manifest(args.manifest)
    files = select(man, args.group)
    if args.list:
        for f in files:
            p = corpus_path(args.dest, f)
            ok = p.is_file() and sha256(p.read_bytes()) == f["sha256"]
            print(f"{'ok  ' if ok else 'MISS'} {f['group']:28} {f['repo']}@{f['commit'][:12]}:{f['path']}")
        return 0
    failed = 0
    counts: dict[str, int] = {}
    for f in files:
        try:
            how = fetch_one(f, args.dest, src_dir=args.from_dir, mirror=args.mirror, offline=args.offline,
                            timeout=args.timeout, pages=args.from_pages)
        except FetchError as exc:
            failed += 1
            print(f"fetch.py: {f['repo']}@{f['commit'][:12]}:{f['path']}: {exc}", file=sys.stderr)
            continue
        counts[how] = counts.get(how, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"fetch.py: {len(files) - failed} of {len(files)} files in {args.dest}" + (f" ({summary})" if summary else "")
          + (f"; {failed} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
