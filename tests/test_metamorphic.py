"""Metamorphic tests: the same configuration written in different but equivalent ways gets the
same verdict. Each transformation below rewrites the source of every annotated cuBLASLt fixture
(``fixtures/cublaslt/rules/*.cpp``, 80 programs with ``// ruleid:`` / ``// ok:`` comments) it
applies to, keeping its meaning; then for every transformed fixture

- the rule codes found are the untransformed fixture's (as a multiset), and
- the findings of the annotated codes are exactly where the transformed text's annotations say
  (annotations travel with the statement they mark, so this is "the same findings, modulo the
  lines the transformation moved"; a finding inside a statement broken over lines answers for
  the statement, as in ``fusionlint test-rules``), with no FL000.

Speed: the fixtures' ``probe.h`` pulls in half the C++ standard library; its helpers play no part
in the configurations (all of which are in ``main``), so here it is replaced by a stand-in that
declares them (the baseline with it must — and does — match every annotation). All variants are
written into one directory and checked by one ``fusionlint`` run (``--output-format json``, the
stand-in cuBLASLt headers), once per session.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import run_cli
from conftest import FIXTURES
from fusionlint.run.selftest import ANNOTATION, annotations, match

RULE_FIXTURES = sorted((FIXTURES / "cublaslt" / "rules").glob("*.cpp"))

PROBE_STAND_IN = """\
// Stand-in for fixtures/cublaslt/probe.h: the probe helpers declared, not defined.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cublasLt.h>
#include <cuda_runtime.h>
namespace std {
template <class T> class vector {
 public:
  vector();
  vector(size_t n, const T &value);
  T *data();
  const T *data() const;
  size_t size() const;
};
}  // namespace std
struct ProbeMatrix {
  cudaDataType_t type;
  int64_t rows, cols, ld;
  bool row_major;
  int batch;
  int64_t stride;
  void *dev;
};
ProbeMatrix probe_matrix(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, unsigned seed,
                         bool row_major = false, int batch = 1, int64_t stride = -1);
void *probe_device_copy(const void *host, size_t bytes);
void *probe_vector(cudaDataType_t type, int64_t n, unsigned seed, std::vector<float> *values);
void *probe_workspace(size_t bytes);
enum ProbeActivation { PROBE_NONE, PROBE_RELU, PROBE_GELU };
struct ProbeCheck {
  bool transa = false, transb = false;
  const ProbeMatrix *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  float scale = 1.0f;
  const std::vector<float> *bias = nullptr;
  ProbeActivation activation = PROBE_NONE;
  double tolerance = 0.1;
  double rel_tolerance = 0;
};
void probe_verify(const ProbeCheck &chk);
cublasStatus_t probe_report(const char *what, cublasStatus_t s);
#define PROBE(call) probe_report(#call, (call))
"""


def prepare(text: str) -> str:
    """A fixture as every variant starts from it: ``<vector>`` comes from the stand-in header."""
    return text.replace("#include <vector>\n", "")


# ---- source model: the fixtures are includes + ``int main() { <flat statements> }`` ------------

TOKEN = re.compile(r"""(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
                   r"""|(?P<id>[A-Za-z_]\w*)|(?P<num>\.?\d(?:[eE][-+]|[\w.'])*)|(?P<ws>\s+)|(?P<op>::|->|<<|>>|.)""",
                   re.S)


def tokens(code: str) -> list[tuple[str, str]]:
    return [(m.lastgroup, m.group()) for m in TOKEN.finditer(code)]


class Unit:
    """A statement of main with the comment and blank lines before it."""

    def __init__(self, lead: list[str], stmt: list[str]) -> None:
        self.lead, self.stmt = lead, stmt

    @property
    def code(self) -> str:
        return "\n".join(self.stmt)

    def lines(self) -> list[str]:
        return self.lead + self.stmt


def split_main(text: str) -> tuple[list[str], list[Unit], list[str]]:
    """(lines up to ``int main() {``, the statements of main, the closing lines)."""
    lines = text.split("\n")
    start = lines.index("int main() {") + 1
    end = max(i for i, line in enumerate(lines) if line == "}")
    units: list[Unit] = []
    lead: list[str] = []
    stmt: list[str] = []
    depth = 0
    for line in lines[start:end]:
        if not stmt and (not line.strip() or line.strip().startswith("//")):
            lead.append(line)
            continue
        stmt.append(line)
        for kind, tok in tokens(line):
            if kind == "op" and tok in "([{":
                depth += 1
            elif kind == "op" and tok in ")]}":
                depth -= 1
        code = re.sub(r"//.*$", "", line).rstrip()
        if depth == 0 and code.endswith(";"):
            units.append(Unit(lead, stmt))
            lead, stmt = [], []
    assert not stmt, "unterminated statement"
    return lines[:start], units, lead + lines[end:]


def join(head: list[str], units: list[Unit], tail: list[str]) -> str:
    return "\n".join(head + [line for u in units for line in u.lines()] + tail)


def add_before_main(head: list[str], block: str) -> list[str]:
    return head[:-1] + block.rstrip("\n").split("\n") + [""] + head[-1:]


TYPE = re.compile(r"^\s*((?:const\s+|static\s+)*(?:unsigned\s+)?(?:std::vector<[^>]*>|[A-Za-z_]\w*)\b(?:\s*\*+)?)"
                  r"\s*(?=&?[A-Za-z_]\w*\s*(?:=|;|,|\(|\{))")
NOT_TYPES = {"return", "PROBE", "probe_verify", "check", "cublasLtCreate"}


def declaration(unit: Unit) -> tuple[str, list[tuple[str, str | None]]] | None:
    """(type, [(name, initializer text or None)]) when the statement declares variables."""
    code = re.sub(r"//[^\n]*", "", unit.code).strip()
    m = TYPE.match(code)
    if not m or m.group(1).split()[0] in NOT_TYPES or "(" in m.group(1):
        return None
    rest = code[m.end():].rstrip(";").strip()
    decls: list[tuple[str, str | None]] = []
    depth, cur = 0, ""
    for kind, tok in tokens(rest) + [("op", ",")]:
        if kind == "op" and tok in "([{":
            depth += 1
        elif kind == "op" and tok in ")]}":
            depth -= 1
        if kind == "op" and tok == "," and depth == 0:
            name = re.match(r"\s*[*&]?\s*([A-Za-z_]\w*)\s*(?:=\s*(.*))?", cur, re.S)
            if not name:
                return None
            decls.append((name.group(1), name.group(2).strip() if name.group(2) else None))
            cur = ""
        else:
            cur += tok
    return m.group(1).strip(), decls


def declared_names(units: list[Unit]) -> dict[str, str]:
    out = {}
    for u in units:
        d = declaration(u)
        if d:
            for name, _ in d[1]:
                out[name] = d[0]
    return out


def replace_ids(code: str, mapping: Callable[[str, str, str], str | None]) -> str:
    """Replace identifier tokens outside comments and strings: ``mapping(token, previous
    significant token, next significant token)`` gives the replacement or None."""
    toks = tokens(code)
    sig = [i for i, (k, _) in enumerate(toks) if k not in ("ws", "comment")]
    out = [t for _, t in toks]
    for n, i in enumerate(sig):
        kind, tok = toks[i]
        if kind != "id":
            continue
        prev = toks[sig[n - 1]][1] if n else ""
        nxt = toks[sig[n + 1]][1] if n + 1 < len(sig) else ""
        new = mapping(tok, prev, nxt)
        if new is not None:
            out[i] = new
    return "".join(out)


SET_CALL = re.compile(r"PROBE\(\s*(cublasLt(?:MatmulDesc|MatrixLayout|MatmulPreference)SetAttribute)\(\s*(\w+)\s*,"
                      r"\s*(\w+)\s*,\s*&\s*(\w+)\s*,\s*sizeof\s*\(\s*(\w+)\s*\)\s*\)\s*\)\s*;\s*(//.*)?$", re.S)
ENUM_VALUE = re.compile(r"^(?:CUDA_R_\w+|CUBLAS_(?:OP|COMPUTE|FILL_MODE)_\w+|CUBLASLT_(?:EPILOGUE|ORDER|POINTER_MODE|"
                        r"MATMUL_MATRIX_SCALE|REDUCTION_SCHEME|SEARCH)_\w+)$")
NUMBER = re.compile(r"^\.?\d(?:[eE][-+]|[\w.'])*$")


# ---- the transformations: (fixture text) -> transformed text, or None when it does not apply ----

def layout(text: str) -> str | None:
    """Whitespace, comments and line breaks: other indentation, comments between tokens, argument
    lists broken over lines, blank lines, trailing comments removed (annotations kept)."""
    head, units, tail = split_main(text)
    new_units = []
    for u in units:
        stmt = []
        for line in u.stmt:
            code, _, comment = line.partition("//")
            if "(" in code:  # break argument lists after top-level commas, with a comment in between
                out, depth = "", 0
                for kind, tok in tokens(code):
                    out += tok
                    if kind == "op" and tok in "([{":
                        depth += 1
                    elif kind == "op" and tok in ")]}":
                        depth -= 1
                    elif kind == "op" and tok == "," and depth == 2:
                        out += " /* arg */\n\t\t"
                code = out
            stmt.append("\t" + code.strip().replace("(", "( ").replace(")", " )"))
        lead = [line.replace("  //", "\t//") for line in u.lead if "ruleid:" in line or "ok:" in line]
        new_units.append(Unit(["", "/* --- */"] + lead, stmt))
    head = [line for line in head if not line.startswith("//")]
    return join(head, new_units, tail).replace("int main() {", "int\nmain ( )\n{")


def rename(text: str) -> str | None:
    """Every local variable of main renamed (members, functions and types untouched)."""
    head, units, tail = split_main(text)
    names = declared_names(units)
    if not names:
        return None

    def new_name(tok: str, prev: str, nxt: str) -> str | None:
        return f"renamed_{tok}_v2" if tok in names and prev not in (".", "->", "::") else None

    for u in units:
        u.stmt = replace_ids(u.code, new_name).split("\n")
    return join(head, units, tail)


def _value_tokens(units: list[Unit]) -> list[str]:
    """Enum constants and number literals written in main (not attribute ids or sizes)."""
    found: list[str] = []
    for u in units:
        for kind, tok in tokens(u.code):
            if (kind == "id" and ENUM_VALUE.match(tok)) or (kind == "num" and NUMBER.match(tok)):
                if tok not in found:
                    found.append(tok)
    return found


def _replace_values(text: str, spelled: Callable[[int, str], tuple[str, str]], skip=lambda tok: False) -> str | None:
    head, units, tail = split_main(text)
    values = [v for v in _value_tokens(units) if not skip(v)]
    if not values:
        return None
    names, defs = {}, []
    for i, v in enumerate(values):
        names[v], definition = spelled(i, v)
        defs.append(definition)
    for u in units:
        toks = tokens(u.code)
        u.stmt = "".join(names.get(t, t) if k in ("id", "num") else t for k, t in toks).split("\n")
    return join(add_before_main(head, "\n".join(defs)), units, tail)


def macros(text: str) -> str | None:
    """Each value (enum constant, number) written in main becomes a macro."""
    return _replace_values(text, lambda i, v: (f"FL_VALUE_{i}", f"#define FL_VALUE_{i} {v}"))


def constexprs(text: str) -> str | None:
    """Each value written in main becomes a ``static constexpr`` constant at file scope (not
    ``0``: a constant 0 is no null pointer)."""
    return _replace_values(text, lambda i, v: (f"kValue{i}", f"static constexpr auto kValue{i} = {v};"),
                           skip=lambda v: v == "0")


def variables(text: str) -> str | None:
    """Enum constants passed straight to the Create calls go through a local variable first
    (declared above the call and above its annotation, which must stay right over the call)."""
    head, units, tail = split_main(text)
    create = re.compile(r"PROBE\(cublasLt(MatmulDesc|MatrixLayout)Create\(")
    n = 0
    for u in units:
        if not create.search(u.code):
            continue
        decls: list[str] = []

        def via_variable(tok: str, prev: str, nxt: str) -> str | None:
            nonlocal n
            if not ENUM_VALUE.match(tok):
                return None
            n += 1
            ctype = "cublasComputeType_t" if tok.startswith("CUBLAS_COMPUTE") else "cudaDataType_t"
            decls.append(f"  const {ctype} value_{n} = {tok};")
            return f"value_{n}"

        u.stmt = replace_ids(u.code, via_variable).split("\n")
        first_ann = next((i for i, line in enumerate(u.lead) if ANNOTATION.search(line)), len(u.lead))
        u.lead = u.lead[:first_ann] + decls + u.lead[first_ann:]
    return join(head, units, tail) if n else None


def inline(text: str) -> str | None:
    """Uses of const locals initialized by constants become the constant itself (with a cast to
    the variable's type); uses by address or in sizeof keep the variable."""
    head, units, tail = split_main(text)
    consts: dict[str, tuple[str, str]] = {}
    for u in units:
        d = declaration(u)
        if d and d[0].startswith("const ") and "*" not in d[0]:
            for name, init in d[1]:
                if init and all(k in ("num", "ws", "op") or (k == "id" and ENUM_VALUE.match(t))
                                for k, t in tokens(init)) and not init.startswith("{"):
                    consts[name] = (d[0].removeprefix("const ").strip(), init)
    if not consts:
        return None
    n = 0
    for u in units:
        if declaration(u):
            continue
        toks = tokens(u.code)
        sig = [i for i, (k, _) in enumerate(toks) if k not in ("ws", "comment")]
        out = [t for _, t in toks]
        for j, i in enumerate(sig):
            k, tok = toks[i]
            prev = toks[sig[j - 1]][1] if j else ""
            prev2 = toks[sig[j - 2]][1] if j > 1 else ""
            if k == "id" and tok in consts and prev not in ("&", ".", "->", "::") and not (prev == "(" and prev2 ==
                                                                                           "sizeof"):
                ctype, init = consts[tok]
                out[i] = f"static_cast<{ctype}>({init})"
                n += 1
        u.stmt = "".join(out).split("\n")
    return join(head, units, tail) if n else None


HELPERS = """\
template <typename T>
static cublasStatus_t set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T &value) {
  return cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value));
}
template <typename T>
static cublasStatus_t set_layout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const T &value) {
  return cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof(value));
}
template <typename T>
static cublasStatus_t set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                               const T &value) {
  return cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value));
}"""
HELPER_OF = {"cublasLtMatmulDescSetAttribute": "set_desc", "cublasLtMatrixLayoutSetAttribute": "set_layout",
             "cublasLtMatmulPreferenceSetAttribute": "set_pref"}


def helper(text: str) -> str | None:
    """``SetAttribute(obj, ATTR, &v, sizeof(v))`` through a helper template taking the value by
    reference (the size is then that of the value's type, as before)."""
    head, units, tail = split_main(text)
    n = 0
    for u in units:
        m = SET_CALL.match(u.code.strip())
        if m and m.group(4) == m.group(5):
            indent = u.stmt[0][:len(u.stmt[0]) - len(u.stmt[0].lstrip())]
            u.stmt = [f"{indent}PROBE({HELPER_OF[m.group(1)]}({m.group(2)}, {m.group(3)}, {m.group(4)}));"]
            n += 1
    return join(add_before_main(head, HELPERS), units, tail) if n else None


def _reorderable(u: Unit) -> str | None:
    """A key for statements that commute with their neighbours of the same key."""
    code = u.code.strip()
    if SET_CALL.match(code):
        return "set"
    if re.match(r"PROBE\(cublasLtMatrixLayoutCreate\(&\w+,", code):
        return "layout"
    if re.match(r"ProbeMatrix \w+ = probe_matrix\(", code):
        return "matrix"
    return None


def reorder(text: str) -> str | None:
    """Runs of statements that do not depend on each other, reversed: layouts created in another
    order, operands made in another order, attributes (of distinct (object, attribute)) set in
    another order. Annotations move with their statement."""
    head, units, tail = split_main(text)
    out: list[Unit] = []
    i = moved = 0
    while i < len(units):
        key = _reorderable(units[i])
        j = i
        while j < len(units) and key is not None and _reorderable(units[j]) == key:
            j += 1
        run = units[i:j] if key else [units[i]]
        if key in ("set", "layout"):
            targets = [SET_CALL.match(u.code.strip()).group(2, 3) if key == "set" else
                       re.match(r"PROBE\(cublasLtMatrixLayoutCreate\(&(\w+)", u.code.strip()).group(1) for u in run]
            if len(set(targets)) != len(targets):
                run = run[:1]
                j = i + 1
        if len(run) > 1:
            moved += 1
            blank = [line for line in run[0].lead if not line.strip().startswith("//")]
            run = [Unit([line for line in u.lead if line.strip().startswith("//")], u.stmt) for u in reversed(run)]
            run[0].lead = blank + run[0].lead
        out += run
        i = max(j, i + 1)
    return join(head, out, tail) if moved else None


def split(text: str) -> str | None:
    """The matmul descriptor's attributes set in a second function: the first run of
    ``SetAttribute(desc, ...)`` statements (with the declarations of the values they use) moves
    into ``configure_desc(desc)``, called where it was."""
    head, units, tail = split_main(text)
    names = declared_names(units)
    start = next((i for i, u in enumerate(units) if (m := SET_CALL.match(u.code.strip())) and m.group(2) == "desc"),
                 None)
    if start is None:
        return None
    while start > 0 and declaration(units[start - 1]) and all(
            init is not None and not (_ids(init) & set(names)) for _, init in declaration(units[start - 1])[1]):
        start -= 1  # the value declarations right before it come along
    end, local = start, set()
    while end < len(units):
        u = units[end]
        d = declaration(u)
        m = SET_CALL.match(u.code.strip())
        if d and all(init is not None and not (_ids(init) & (set(names) - local)) for _, init in d[1]):
            local |= {name for name, _ in d[1]}
        elif m and m.group(2) == "desc" and m.group(4) in local:
            pass
        else:
            break
        end += 1
    while end > start and declaration(units[end - 1]):  # declarations after the last call stay in main
        local -= {name for name, _ in declaration(units[end - 1])[1]}
        end -= 1
    block = units[start:end]
    if not any(SET_CALL.match(u.code.strip()) for u in block):
        return None
    used_later = set().union(*(_ids(u.code) for u in units[end:]))
    if local & used_later:  # a value variable main still needs: keep it simple, do not split
        return None
    function = ["static void configure_desc(cublasLtMatmulDesc_t desc) {"]
    function += [line for u in block for line in u.lines()] + ["}", ""]
    call = Unit([], ["  configure_desc(desc);"])
    return join(head[:-1] + function + head[-1:], units[:start] + [call] + units[end:], tail)


def _ids(code: str) -> set[str]:
    """Identifiers used in ``code``, not counting member names (``x.name``, ``p->name``)."""
    toks = [(k, t) for k, t in tokens(code) if k not in ("ws", "comment")]
    return {t for i, (k, t) in enumerate(toks) if k == "id" and not (i and toks[i - 1][1] in (".", "->"))}


TRANSFORMS: dict[str, tuple[Callable[[str], str | None], int]] = {
    # name: (transformation, fixtures it must apply to at least)
    "layout": (layout, 80),
    "rename": (rename, 80),
    "macros": (macros, 80),
    "constexpr": (constexprs, 80),
    "variables": (variables, 75),
    "inline": (inline, 75),
    "helper": (helper, 75),
    "reorder": (reorder, 75),
    "split": (split, 70),
}


# ---- one run over every variant ---------------------------------------------------------------

@pytest.fixture(scope="session")
def verdicts(tmp_path_factory) -> dict:
    """{variant: {fixture name: (transformed text, findings [(code, line, column)])}}, from one run."""
    root = tmp_path_factory.mktemp("metamorphic")
    (root / "probe.h").write_text(PROBE_STAND_IN, encoding="utf-8")
    texts: dict[str, dict[str, str]] = {"baseline": {}}
    for f in RULE_FIXTURES:
        texts["baseline"][f.name] = prepare(f.read_text(encoding="utf-8"))
    for name, (transform, _) in TRANSFORMS.items():
        texts[name] = {}
        for fname, text in texts["baseline"].items():
            new = transform(text)
            if new is not None:
                texts[name][fname] = new
    for variant, files in texts.items():
        (root / variant).mkdir()
        for fname, text in files.items():
            (root / variant / fname).write_text(text, encoding="utf-8")
    rc, out, err = run_cli("--no-system-headers", "--output-format", "json", root)
    assert rc in (0, 1) and "Traceback" not in err, err
    found: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for d in json.loads(out):
        p = Path(d["path"])
        found.setdefault((p.parent.name, p.name), []).append((d["code"], d["line"], d["column"]))
    return {variant: {fname: (text, sorted(found.get((variant, fname), []))) for fname, text in files.items()}
            for variant, files in texts.items()}


def _check_against_annotations(text: str, findings: list[tuple[str, int, int]]) -> list[str]:
    from types import SimpleNamespace

    want, forbid = annotations(text)
    missed, unexpected = match(text, [SimpleNamespace(code=c, line=line, column=col) for c, line, col in findings],
                               want, forbid)
    problems = [f"missed {c} at line {line}" for c, line in sorted(missed)]
    problems += [f"unexpected {c} at line {line}" for c, line in sorted(unexpected)]
    problems += [f"FL000 at line {line}" for c, line, _ in findings if c == "FL000"]
    return problems


def test_baseline_matches_the_annotations(verdicts: dict) -> None:
    """With the stand-in probe header the fixtures still get exactly their annotated findings."""
    bad = {f: p for f, (text, found) in verdicts["baseline"].items() if (p := _check_against_annotations(text, found))}
    assert not bad, bad
    assert sum(bool(found) for _, found in verdicts["baseline"].values()) >= 40


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_same_verdict_after(verdicts: dict, name: str) -> None:
    base, variant = verdicts["baseline"], verdicts[name]
    assert len(variant) >= TRANSFORMS[name][1], f"{name} applied to only {len(variant)} fixtures"
    problems = {}
    for fname, (text, found) in variant.items():
        p = _check_against_annotations(text, found)
        base_codes = Counter(c for c, *_ in base[fname][1])
        if Counter(c for c, *_ in found) != base_codes:
            p.append(f"codes {sorted(Counter(c for c, *_ in found).elements())} != {sorted(base_codes.elements())}")
        if p:
            problems[fname] = p
    assert not problems, problems


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transformation_changes_the_text(verdicts: dict, name: str) -> None:
    """Not vacuous: every transformed fixture differs from its original."""
    base = verdicts["baseline"]
    assert all(text != base[f][0] for f, (text, _) in verdicts[name].items())


def test_a_const_pointer_variable_keeps_its_buffer_type(tmp_path: Path) -> None:
    """Regression (found by the helper transformation): a bias pointer that is itself const —
    ``const float *const bias``, or a pointer passed through a ``const T &`` helper — still has
    float as its buffer type, so FL124 still fires."""
    (tmp_path / "probe.h").write_text(PROBE_STAND_IN)
    (tmp_path / "src").mkdir()
    text = prepare((FIXTURES / "cublaslt" / "rules" / "FL124_bias_float_buffer.cpp").read_text())
    assert "  const float *bias = " in text
    src = tmp_path / "src" / "const_pointer.cpp"
    src.write_text(text.replace("  const float *bias = ", "  const float *const bias = "))
    rc, out, err = run_cli("--no-system-headers", "--output-format", "json", src)
    assert rc == 1 and [(d["code"], d["line"]) for d in json.loads(out)] == [("FL124", 26)], out + err
