"""``fusionlint verify``: re-prove each extracted configuration's lint verdict on this machine's GPU.

For every configuration fusionlint extracts from the files (cuBLASLt matmul, heuristic-only and
descriptor-only configurations; CUTLASS 3.x and 2.x GEMMs) it

1. lints that configuration alone (the findings the file's lint reports for it);
2. generates a minimal standalone probe with exactly the extracted values
   (:mod:`fusionlint.evidence.probegen`, :mod:`fusionlint.evidence.probegen_cutlass`), stand-ins
   for what stayed unknown named in the probe's header;
3. builds and runs the probes with the evidence harness (:mod:`fusionlint.evidence.harness`, the
   code path that recorded the rules' H200 evidence) in a temporary directory, in parallel, with
   a time limit;
4. compares: a configuration with error findings must fail (compile error, a failing library
   status, a CUDA error or a wrong D: the failures the rules' ``evidence.observed`` records), a
   clean one must work (every status a success, D equal to the host reference).

Each configuration gets one verdict (:data:`VERDICTS`): ``agree``; ``agree with stand-ins`` (the
probe agrees, but only with stand-ins for values the front end could not resolve: no verdict on the
source's own values); ``numerics not checked`` (the probe works but D has no host reference for its
epilogue, so a failure the lint expects, or a wrong D, could not be seen); ``disagree``; ``not
verified`` (no probe, or past a time limit).

Exit status: 0 every verified configuration agrees (without stand-ins, D checked), 1 some
disagree, 2 no GPU / toolchain / library here (one line naming what is missing) or a usage error,
3 none disagrees but some agree only with stand-ins or have D not checked. Configurations not
verified do not change the status.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fusionlint.defaults import DEFAULT_ARCH, VERIFY_ARCH
from fusionlint.evidence import harness
from fusionlint.evidence.probe_names import unique_stem

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from fusionlint.run.options import VerifyOptions

CUDA_ROOTS = ("/usr/local/cuda",)  # looked at after PATH and $CUDA_HOME/$CUDA_PATH/$CUDA_ROOT
NOT_JUDGED = {"FL000", "FL001"}
_CODE = re.compile(r"^(FL\d{3})$")
AGREE, AGREE_STAND_INS, NUMERICS_NOT_CHECKED, DISAGREE, NOT_VERIFIED = (
    "agree", "agree with stand-ins", "numerics not checked", "disagree", "not verified")
VERDICTS = (AGREE, AGREE_STAND_INS, NUMERICS_NOT_CHECKED, DISAGREE, NOT_VERIFIED)  # in the summary's order
EXIT_AGREE, EXIT_DISAGREE, EXIT_PARTIAL = 0, 1, 3  # (2: this machine cannot verify, a usage error)


class Missing(Exception):
    """What this machine lacks to verify (one line)."""


class VerifyUsageError(Exception):
    """A wrong argument (one line)."""


# ---- the machine -----------------------------------------------------------------------------------

def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    roots = [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT") if os.environ.get(v)] + list(CUDA_ROOTS)
    for root in roots:
        nvcc = Path(root) / "bin" / "nvcc"
        if nvcc.is_file() and os.access(nvcc, os.X_OK):
            return str(nvcc)
    return None


def find_gpu() -> tuple[str | None, str]:
    """(GPU name and compute capability, or None; why none)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi not found"
    try:
        r = subprocess.run([smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"nvidia-smi failed: {exc}".splitlines()[0]
    lines = [ln.strip() for ln in r.stdout.splitlines() if ln.strip()]
    if r.returncode != 0 or not lines:
        why = (r.stderr or r.stdout).strip().splitlines()
        return None, f"nvidia-smi lists no GPU{': ' + why[0] if why else ''}"
    return lines[0], ""


def _lib_dirs_of(include: Path) -> list[Path]:
    root = include.parent
    return [root / "lib64", root / "lib", root / "targets" / "x86_64-linux" / "lib", root / "targets" / "sbsa-linux" / "lib"]


def find_cublas(extra_lib_dirs: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(include dirs, library dirs, link flags) for cuBLASLt, found as the front end finds its
    headers (CUDA toolkit, then the nvidia-cublas wheel); raises Missing."""
    from fusionlint.frontend.clang import toolchain

    includes = list(toolchain.find_header_dirs().cublas)
    if not includes:
        raise Missing("the cuBLAS headers (cublasLt.h: not in the CUDA toolkit or the nvidia-cublas package)")
    candidates = [Path(d) for d in extra_lib_dirs] + [d for inc in includes for d in _lib_dirs_of(inc)]
    candidates += [Path(d) for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    candidates += [Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib64"), Path("/usr/lib/aarch64-linux-gnu")]
    for d in candidates:
        for lt, blas in (("libcublasLt.so", "libcublas.so"),):
            if (d / lt).exists() and (d / blas).exists():
                return [str(i) for i in includes], [str(d)], ["-lcublasLt", "-lcublas"]
        versioned_lt = sorted(d.glob("libcublasLt.so.*")) if d.is_dir() else []
        versioned = sorted(p for p in d.glob("libcublas.so.*")) if d.is_dir() else []
        if versioned_lt and versioned:  # the wheel ships only versioned names
            return ([str(i) for i in includes], [str(d)],
                    [f"-Xlinker=-l:{versioned_lt[0].name}", f"-Xlinker=-l:{versioned[0].name}"])
    raise Missing("the cuBLASLt library (libcublasLt.so: not next to the cuBLAS headers, in LD_LIBRARY_PATH or "
                  "the system library directories)")


def find_cutlass(include_dirs: list[str]) -> list[str]:
    """Include dirs with cutlass/cutlass.h and cutlass/util/packed_stride.hpp (the user's -I dirs,
    then the nvidia-cutlass package); raises Missing."""
    from fusionlint.frontend.clang import toolchain

    dirs = [Path(d) for d in include_dirs] + list(toolchain.find_header_dirs().cutlass)
    core = next((d for d in dirs if (d / "cutlass" / "cutlass.h").is_file()), None)
    util = next((d for d in dirs if (d / "cutlass" / "util" / "packed_stride.hpp").is_file()), None)
    if core is None:
        raise Missing("the CUTLASS headers (cutlass/cutlass.h: pass -I DIR or install nvidia-cutlass)")
    if util is None:
        raise Missing("the CUTLASS util headers (cutlass/util/packed_stride.hpp in tools/util/include: pass -I DIR)")
    return list(dict.fromkeys(str(d) for d in (core, util)))


# ---- the lint side: configurations, their findings, their probes -------------------------------------

@dataclass
class Unit:
    """One configuration to verify."""

    path: str
    line: int
    library: str  # cublaslt | cutlass
    kind: str  # matmul | heuristic | descriptor | CUTLASS 3.x GemmUniversalAdapter | ...
    name: str
    findings: list[dict] = field(default_factory=list)  # error findings of this configuration
    probe_findings: list[str] | None = None  # codes of the probe's own lint (stand-ins only)
    probe_name: str = ""
    probe_source: str = ""
    substitutions: list[str] = field(default_factory=list)
    not_generated: str = ""
    index: int = 0
    probe: str = ""  # the probe file built
    outcome: dict | None = None
    observed: str = ""
    observed_kind: str = ""
    expected: str = ""  # fails | works
    expected_kinds: list[str] = field(default_factory=list)
    verdict_from: str = "source"  # source | probe (stand-ins changed the findings)
    agree: bool | None = None  # the outcome is what the lint expects (None: no outcome, or D not checked)
    kind_agrees: bool | None = None
    verdict: str = ""  # one of VERDICTS
    stand_ins: list[str] = field(default_factory=list)  # what the substitutions stand in for (their subjects)

    @property
    def codes(self) -> list[str]:
        if self.verdict_from == "probe" and self.probe_findings is not None:
            return self.probe_findings
        return sorted({f["code"] for f in self.findings})


def _errors(findings) -> list[dict]:
    """The error findings a probe is to confirm. A configuration here is one runtime alternative, linted
    alone: a rule that holds on it only on inputs fusionlint does not know (FL002) holds on the probe,
    which builds exactly that alternative, so it counts as the rule's own error."""
    from dataclasses import replace

    from fusionlint.findings import ON_UNKNOWN_INPUTS, undecided_of

    out = []
    for f in findings:
        if f.code == ON_UNKNOWN_INPUTS:
            rule = undecided_of(f)
            f = replace(f, code=rule.code, name=rule.name, severity="error", message=rule.reasons[0])
        if f.severity == "error" and f.code not in NOT_JUDGED:
            out.append(f.to_dict())
    return out


def _cublaslt_units(facts, rules, arch: str, support=None) -> list[Unit]:
    from fusionlint.evidence import probegen
    from fusionlint.model.cublaslt_facts import FileFacts
    from fusionlint.rules.engine import run_rules

    judged = {c.heuristic_loc for c in facts.configurations if c.kind == "matmul"}
    units = []
    seen: dict[str, int] = {}  # probe names given (a call checked per runtime alternative has several)
    for cfg in facts.configurations:
        if cfg.kind == "heuristic" and cfg.loc in judged:
            continue  # judged with its matmul
        if cfg.kind == "descriptor" and any(c.desc is not None and cfg.desc is not None and c.desc.id == cfg.desc.id
                                            for c in facts.configurations if c.kind != "descriptor"):
            continue
        # this configuration alone: its objects' attribute writes, its heuristic query
        alone = [cfg] + [c for c in facts.configurations if c.kind == "heuristic" and cfg.kind == "matmul"
                         and c.loc == cfg.heuristic_loc]
        ids = {o.id for o in [cfg.desc, *cfg.layouts.values(), cfg.preference] if o is not None}
        sets = [s for s in facts.attribute_sets if s.object_id in ids]
        findings = run_rules(rules, FileFacts(facts.path, configurations=alone, attribute_sets=sets), arch,
                             support=support)
        what = f"cuBLASLt {cfg.kind} configuration" + (f" (when {' and '.join(cfg.when)})" if cfg.when else "")
        unit = Unit(facts.path, cfg.site.line, "cublaslt", cfg.kind, what, findings=_errors(findings),
                    probe_name=f"{unique_stem(probegen.probe_name(facts.path, cfg), seen)}.cu")
        probe = probegen.generate(cfg)
        if probe is None:
            unit.not_generated = "the descriptor or a layout did not resolve"
        else:
            unit.probe_source, unit.substitutions = probe.source, probe.substitutions
        units.append(unit)
    return units


# CUTLASS stand-ins that do not change what the rules read
_NEUTRAL_SUBS = ("problem size:", "mainloop carve-out:", "mainloop tiled_mma:", "mainloop smem_layout_atom_")


def _cutlass_units(facts, text: str, rules, arch: str) -> list[Unit]:
    from fusionlint.evidence import probegen_cutlass as pc
    from fusionlint.model.cublaslt_facts import FileFacts
    from fusionlint.rules.engine import run_rules

    units = []
    seen: dict[str, int] = {}  # probe names given (a header's template makes several GEMMs at one line)
    for g in pc.probe_targets(facts.cutlass):
        findings = run_rules(rules, FileFacts(facts.path, cutlass=[g]), arch)
        name = f"CUTLASS {g.api} {g.kind} `{g.name}`" + (f" in {g.context}" if g.context else "")
        line = (g.instantiated_at or g.loc).line
        unit = Unit(facts.path, line, "cutlass", f"{g.api} {g.kind}", name, findings=_errors(findings),
                    probe_name=unique_stem(pc.probe_name(g), seen) + ".cu")
        try:
            probe = pc.generate(g, pc.problem_of(g, text))
            unit.probe_source, unit.substitutions = probe.source, probe.substitutions
        except pc.NotGenerated as exc:
            unit.not_generated = str(exc)
        units.append(unit)
    return units


def _relint(unit: Unit, rules, options, arch: str, header: Path) -> None:
    """Lint the probe itself when stand-ins went into it: that is the configuration that runs."""
    from fusionlint.run.pipeline import check_file

    if not unit.probe_source or not [s for s in unit.substitutions if not s.startswith(_NEUTRAL_SUBS)]:
        return
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(header, Path(tmp) / header.name)
        path = Path(tmp) / unit.probe_name
        path.write_text(unit.probe_source, encoding="utf-8")
        result = check_file(path, rules, options, arch)
    codes = sorted({f["code"] for f in _errors(result.findings)})
    unit.probe_findings = codes
    if codes != unit.codes:
        unit.verdict_from = "probe"


def analyse_file(path: str, options, arch: str, rulesets: list[str]) -> tuple[list[dict], str]:
    """Every configuration of one file as Unit dicts (probe source included), and a note on what
    could not be checked (empty: none)."""
    from fusionlint.facts.extract import SkipFile, extract_file
    from fusionlint.rules.cached import rule_source
    from fusionlint.run.support_select import for_headers

    # the measured support table FL127 checks against, as ``check`` chooses it for these parse options
    table = for_headers(None, options.include_dirs, options.use_system_headers).path
    rules = rule_source(tuple(rulesets or ()), False, None, table)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        facts = extract_file(Path(path), options)
    except SkipFile:
        return [], ""
    except Exception as exc:  # noqa: BLE001 - the file could not be checked: say so, go on
        return [], f"{path}: not checked: {type(exc).__name__}: {exc}".splitlines()[0]
    units = units_of_facts(facts, text, rules, options, arch)
    note = f"{path}: part not checked: {'; '.join(facts.internal_errors)}" if facts.internal_errors else ""
    return [asdict(u) for u in units], note


@dataclass
class LintTask:
    """One file for the lint side, in ``workers.run_tasks``'s pool (or in this process)."""

    index: int  # in the command line's file order
    path: Path
    options: object  # ParseOptions
    arch: str
    rulesets: list[str]


@dataclass
class Linted:
    """A file's configurations (``Unit`` dicts) and its note, back from a worker."""

    index: int
    units: list[dict]
    note: str
    raised: Exception | None = None  # what the lint raised in the worker (raised again here)


def lint_task(task: LintTask) -> Linted:
    units, note = analyse_file(str(task.path), task.options, task.arch, task.rulesets)
    return Linted(task.index, units, note)


def lint_in_worker(task: LintTask, _cache_dir: str | None) -> Linted:
    """What a worker does with a ``LintTask`` (``run_tasks``'s ``work``): an exception comes back
    with the result, for this process to raise (as when the file is linted here)."""
    try:
        return lint_task(task)
    except Exception as exc:  # noqa: BLE001 - raised again in the main process
        return Linted(task.index, [], "", exc)


def lint_failed(task: LintTask, reason: str, _seconds: float) -> Linted:
    """A file whose worker crashed (libclang) or ran past a time limit: not checked, as any other
    file that could not be, and the other files go on (``run_tasks``'s ``failed``)."""
    return Linted(task.index, [], f"{task.path}: not checked: {reason}")


def units_of_facts(facts, text: str, rules, options, arch: str = DEFAULT_ARCH) -> list[Unit]:
    """The configurations of one file's facts, each with its own findings and its probe. ``rules``:
    a list, or a ``RuleSource`` (which also names the support table FL127 checks against)."""
    from fusionlint.evidence import probegen, probegen_cutlass
    from fusionlint.rules.cached import RuleSource

    source = rules if isinstance(rules, RuleSource) else None
    support = source.support() if source is not None else None
    rule_list = list(source.get()) if source is not None else rules
    units = _cublaslt_units(facts, rule_list, arch, support) + _cutlass_units(facts, text, rule_list, arch)
    for u in units:
        header = probegen.probe_header() if u.library == "cublaslt" else probegen_cutlass.probe_header()
        _relint(u, rules, options, arch, header)
    return units


# ---- what the rules' recorded evidence says a finding does ---------------------------------------------

def recorded_kinds(rules) -> dict[str, list[str]]:
    """Rule id -> the outcome kinds its failing fixtures showed on the device (``evidence.observed``)."""
    out: dict[str, list[str]] = {}
    for r in rules:
        ev = r.evidence or {}
        fail_stems = {Path(f).stem for f in ev.get("fail", [])}
        observed = {}
        for entry in re.split(r";\s+", ev.get("observed", "") or ""):
            stem, sep, text = entry.partition(": ")
            if sep:
                observed[stem.strip()] = text.strip()
        kinds = sorted({harness.kind_of(observed[s]) for s in fail_stems if s in observed})
        out[r.id] = [k for k in kinds if k != "works"] or ["failure"]
    return out


def stand_in_subjects(substitutions: list[str]) -> list[str]:
    """What the stand-ins replace: ``problem size: not literal ..., using 768x512x256`` -> ``problem size``."""
    return list(dict.fromkeys(s.split(":", 1)[0].strip() for s in substitutions))


def judge(unit: Unit, kinds: dict[str, list[str]]) -> None:
    codes = unit.codes
    unit.expected = "fails" if codes else "works"
    unit.expected_kinds = sorted({k for c in codes for k in kinds.get(c, ["failure"])})
    unit.stand_ins = stand_in_subjects(unit.substitutions)
    unit.agree = unit.kind_agrees = None
    if unit.outcome is None or unit.observed_kind == "timeout":
        unit.verdict = NOT_VERIFIED  # (a time limit is no verdict)
        return
    works = unit.observed_kind == "works"
    if works and unit.outcome.get("numerics_skipped") and (
            unit.expected == "works" or {"numerics", "failure"} & set(unit.expected_kinds)):
        # Every status succeeded, but D has no host reference: neither agreement on the numerics nor a
        # disagreement. (A lint that expects only failing statuses is still contradicted by the run.)
        unit.verdict = NUMERICS_NOT_CHECKED
        return
    unit.agree = works == (unit.expected == "works")
    unit.kind_agrees = unit.agree and (works or unit.observed_kind in unit.expected_kinds
                                       or "failure" in unit.expected_kinds)
    if not unit.agree:
        unit.verdict = DISAGREE
    else:
        unit.verdict = AGREE_STAND_INS if unit.stand_ins else AGREE


def exit_status(units: list[Unit]) -> int:
    """0 every verified configuration agrees (no stand-ins, D checked); 1 some disagree; 3 none
    disagrees, but some agree only with stand-ins or have D not checked. Not verified: no effect."""
    verdicts = {u.verdict for u in units}
    if DISAGREE in verdicts:
        return EXIT_DISAGREE
    if verdicts & {AGREE_STAND_INS, NUMERICS_NOT_CHECKED}:
        return EXIT_PARTIAL
    return EXIT_AGREE


def summary_counts(units: list[Unit]) -> dict[str, int]:
    counts = {"configurations": len(units)}
    counts.update({v.replace(" ", "_").replace("-", "_"): sum(u.verdict == v for u in units) for v in VERDICTS})
    return counts


def summary_line(units: list[Unit]) -> str:
    return f"{len(units)} configurations: " + ", ".join(f"{sum(u.verdict == v for u in units)} {v}"
                                                        for v in VERDICTS)


# ---- the command -----------------------------------------------------------------------------------

def _report_unit(u: Unit) -> list[str]:
    head = f"[{u.index}] {u.path}:{u.line}: {u.name}"
    if u.codes:
        lint = f"error {', '.join(u.codes)} -> expected to fail ({' or '.join(u.expected_kinds)})"
    else:
        lint = "clean -> expected to work"
    if u.verdict_from == "probe":
        lint += f" [the probe's own lint: its stand-ins changed the findings (source: {', '.join(sorted({f['code'] for f in u.findings})) or 'clean'})]"
    lines = [head, f"    lint:     {lint}"]
    for s in u.substitutions:
        lines.append(f"    stand-in: {s}")
    if u.not_generated:
        lines.append(f"    observed: not verified: no probe ({u.not_generated})")
        return lines
    if u.verdict == NOT_VERIFIED or not u.verdict:
        lines.append(f"    observed: not verified: {u.observed or 'no result'}")
        return lines
    lines.append(f"    observed: {u.observed}")
    if u.verdict == NUMERICS_NOT_CHECKED:
        why = ("every status and the CUDA error state as expected; D has no host reference" if u.expected == "works"
               else "every status succeeded; the failure the lint expects could be in D, which has no host reference")
        lines.append(f"    agree:    numerics not checked ({why})")
        return lines
    if u.verdict == AGREE_STAND_INS:
        verdict = f"agrees with stand-ins: {', '.join(u.stand_ins)}"
    elif u.verdict == AGREE:
        verdict = "yes"
    else:
        verdict = "NO" + (f" (with stand-ins: {', '.join(u.stand_ins)})" if u.stand_ins else "")
    if u.agree and u.expected == "fails" and not u.kind_agrees:
        verdict += f" (it failed, but not as recorded: {u.observed_kind})"
    lines.append(f"    agree:    {verdict}")
    return lines


def _probe_key(source: str) -> str:
    """A probe's program without its header comment: configurations that differ only in where they
    were found build once."""
    return "\n".join(ln for ln in source.splitlines() if not ln.startswith("//"))


class _Builder:
    """Writes probes and builds them while the other files are still being linted; identical probes
    build once. Build and run are the evidence harness's (harness.build, harness.run_built)."""

    def __init__(self, opts: VerifyOptions, nvcc: str, jobs: int, probe_dir: Path, bin_dir: Path):
        self.opts, self.nvcc, self.probe_dir, self.bin_dir = opts, nvcc, probe_dir, bin_dir
        self.pool = cf.ThreadPoolExecutor(jobs)
        self.toolchains: dict[str, harness.Toolchain] = {}
        self.builds: dict[str, tuple[Path, cf.Future]] = {}
        self.deadline = time.monotonic() + opts.time_limit if opts.time_limit else None

    def toolchain(self, library: str) -> harness.Toolchain:
        if library not in self.toolchains:
            opts = self.opts
            user = list(opts.include)
            arch = opts.arch if opts.arch.startswith("sm_") else VERIFY_ARCH
            common = dict(nvcc=self.nvcc, arch=arch, build_timeout=opts.timeout, run_timeout=max(60, opts.timeout // 2))
            if library == "cublaslt":
                inc, libs, link = find_cublas([])
                self.toolchains[library] = harness.Toolchain(include_dirs=list(dict.fromkeys(user + inc)),
                                                             lib_dirs=libs, link=link, **common)
            else:
                # CUTLASS's host adapter calls the driver API (cuMemsetD32Async for workspaces, cuGetErrorString)
                self.toolchains[library] = harness.Toolchain(include_dirs=list(dict.fromkeys(user + find_cutlass(user))),
                                                             link=["-lcuda"], **common)
        return self.toolchains[library]

    def add(self, u: Unit) -> None:
        if not u.probe_source:
            return
        key = _probe_key(u.probe_source)
        if key in self.builds:
            u.probe = str(self.builds[key][0])
            return
        tc = self.toolchain(u.library)
        path = self.probe_dir / f"{u.index:03d}_{u.probe_name}"
        path.write_text(u.probe_source, encoding="utf-8")
        u.probe = str(path)
        self.builds[key] = (path, self.pool.submit(self._build_and_run, path, tc))

    def _build_and_run(self, path: Path, tc: harness.Toolchain) -> harness.Outcome:
        """Build, then run at once (the GPU is idle while the other probes build)."""
        rc, log = self._build(path, tc)
        if rc != 0:
            return harness.Outcome(str(path), rc, log=harness.clip_log(log))
        left = self._left()
        if left < 5:
            return harness.Outcome(str(path), 0, None, log="not run: the run's time limit (--time-limit) was reached")
        return harness.run_built(path, self.bin_dir, int(min(tc.run_timeout, left)))

    def _left(self) -> float:
        return self.deadline - time.monotonic() if self.deadline else float("inf")

    def _build(self, path: Path, tc: harness.Toolchain) -> tuple[int, str]:
        start = time.monotonic()
        if self._left() < 10:
            return 124, "not built: the run's time limit (--time-limit) was reached"
        if self._left() < tc.build_timeout:
            tc = dataclasses.replace(tc, build_timeout=int(self._left()))
        rc, log = harness.build(path, harness._exe(path, self.bin_dir), tc)
        if self.opts.verbose:
            print(f"fusionlint verify: built {path.name}: rc={rc} in {time.monotonic() - start:.0f}s", file=sys.stderr,
                  flush=True)
        return rc, log

    def outcomes(self) -> dict[str, harness.Outcome]:
        """Each probe's outcome: its build, its run, its EVIDENCE lines parsed."""
        return {str(path): fut.result() for path, fut in self.builds.values()}


def _mentions_cutlass(path: Path) -> bool:
    try:
        return "cutlass" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def run_verify(opts: VerifyOptions, files: list[Path]) -> int:
    from fusionlint.evidence import probegen, probegen_cutlass
    from fusionlint.rules.loader import load_rules

    nvcc = find_nvcc()
    gpu, why = find_gpu()
    missing = []
    if nvcc is None:
        missing.append("nvcc, the CUDA compiler (not on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin)")
    if gpu is None:
        missing.append(f"an NVIDIA GPU ({why})")
    if missing:
        raise Missing(" and ".join(missing))
    cap = gpu.rsplit(",", 1)[-1].strip()
    if not cap.startswith("9."):
        raise Missing(f"a Hopper GPU (compute capability 9.x; this one is {gpu}): the rules are for sm_90")

    rules = load_rules(list(opts.ruleset) or None)
    kinds = recorded_kinds(rules)
    jobs = max(1, opts.jobs or os.cpu_count() or 1)
    tasks = [LintTask(i, f, opts.parse_options(), opts.arch, list(opts.ruleset)) for i, f in enumerate(files)]
    keep = Path(opts.keep) if opts.keep else None
    units: list[Unit] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fusionlint-verify-") as tmp:
        probe_dir = keep / "probes" if keep else Path(tmp) / "probes"
        bin_dir = keep / "bin" if keep else Path(tmp) / "bin"
        for d in (probe_dir, bin_dir):
            d.mkdir(parents=True, exist_ok=True)
        shutil.copy(probegen.probe_header(), probe_dir / probegen.probe_header().name)
        shutil.copy(probegen_cutlass.probe_header(), probe_dir / probegen_cutlass.HEADER)
        builder = _Builder(opts, nvcc, jobs, probe_dir, bin_dir)
        try:
            # Lint file by file (in parallel); with every configuration wanted, each file's probes start
            # building as soon as the file is linted.
            pipelined = not opts.config
            per_file: dict[int, list[Unit]] = {}

            def linted(r: Linted) -> None:
                if r.raised is not None:
                    raise r.raised
                i = r.index
                if opts.verbose:
                    print(f"fusionlint verify: linted {tasks[i].path}: {len(r.units)} configurations", file=sys.stderr,
                          flush=True)
                per_file[i] = [Unit(**d) for d in r.units]
                for k, u in enumerate(per_file[i]):
                    u.index = i * 10000 + k + 1  # provisional, for unique probe names
                    if pipelined:
                        builder.add(u)
                if r.note:
                    notes.append(r.note)

            if jobs == 1 or len(tasks) == 1:
                for t in tasks:
                    linted(lint_task(t))
            else:  # check's worker processes, CUTLASS files (the slow ones) first
                from fusionlint.run import workers

                slow_first = sorted(tasks, key=lambda t: not _mentions_cutlass(t.path))
                workers.run_tasks(slow_first, jobs, None, None, linted, work=lint_in_worker, failed=lint_failed)
            units = [u for i in sorted(per_file) for u in per_file[i]]
            for n, u in enumerate(units, 1):
                u.index = n
            if opts.config:
                bad = sorted(n for n in set(opts.config) if not 1 <= n <= len(units))
                if bad:
                    raise VerifyUsageError(f"--config {bad[0]}: there are {len(units)} configurations")
                units = [u for u in units if u.index in set(opts.config)]
                for u in units:
                    builder.add(u)
            if not units:
                print("fusionlint verify: no GEMM configurations found", file=sys.stderr)
                return 0
            print(f"fusionlint verify: {len(units)} configurations in {len({u.path for u in units})} files, "
                  f"{len(builder.builds)} distinct probes ({jobs} jobs, {opts.timeout}s a build) on {gpu}",
                  file=sys.stderr)
            tc = next(iter(builder.toolchains.values()), harness.Toolchain(nvcc=nvcc, link=[]))
            info = harness.machine(Path(tmp), builder.toolchains.get("cublaslt", tc))
            outcomes = builder.outcomes()
        finally:
            builder.pool.shutdown(cancel_futures=True)
    for u in units:
        o = outcomes.get(u.probe)
        if o is not None:
            u.outcome = o.to_dict()
            u.observed = harness.describe(o)
            u.observed_kind = harness.kind_of(u.observed)
        judge(u, kinds)

    lines = []
    for u in units:
        lines += _report_unit(u)
    for n in notes:
        lines.append(f"note: {n}")
    summary = summary_line(units)
    machine = ", ".join(f"{k} {info[k]}" for k in ("gpu", "compute_capability", "cublaslt_version", "nvcc")
                        if info.get(k))
    lines.append(f"machine: {machine or gpu}")
    lines.append(summary)
    print("\n".join(lines))
    if opts.json:
        record = {"machine": info, "summary": summary_counts(units),
                  "configurations": [_unit_record(u) for u in units], "notes": notes}
        Path(opts.json).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return exit_status(units)


def _unit_record(u: Unit) -> dict:
    d = asdict(u)
    d.pop("probe_source")
    d["codes"] = u.codes
    return d
