"""Hold the YAML rules against a measured cuBLASLt support table (where the table
contradicts a rule, the table wins and the rule is fixed).

Every configuration the table records as working — each accepted type combination at the base
configuration, and with each accepted row of each stage — is turned into the fact view a parsed
program would give and run through every configuration rule. A rule that reports an error there
flags working code. With ``--gaps``, the configurations the table records as failing that no rule
reports are counted per stage (FL127 reports those).

    python3 tools/rules_vs_table.py TABLE.json.gz [--gaps] [--show N]

Exit status 1 when some rule flags a configuration the table says works.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionlint.model.support_table import ALPHABET, NOT_SET_VALUE, SupportTable, _digits  # noqa: E402

DIM = 64


def view_of(config: dict) -> dict:
    """The fact view (rules/engine.py configuration_view) of a program that sets exactly ``config``
    with square 64 x 64 x 64 operands, as the sweep driver does."""
    from fusionlint.rules.markers import RUNTIME

    desc = {"COMPUTE_TYPE": config["compute_type"], "SCALE_TYPE": config["scale_type"], "TRANSA": config["transa"],
            "TRANSB": config["transb"], "TRANSC": "CUBLAS_OP_N", "EPILOGUE": config["epilogue"],
            "POINTER_MODE": "CUBLASLT_POINTER_MODE_HOST", "FILL_MODE": "CUBLAS_FILL_MODE_FULL", "FAST_ACCUM": 0}
    pointer_types = {}
    for field, attr in (("bias_pointer", "BIAS_POINTER"), ("aux_pointer", "EPILOGUE_AUX_POINTER"),
                        ("a_scale_pointer", "A_SCALE_POINTER"), ("b_scale_pointer", "B_SCALE_POINTER"),
                        ("c_scale_pointer", "C_SCALE_POINTER"), ("d_scale_pointer", "D_SCALE_POINTER"),
                        ("amax_d_pointer", "AMAX_D_POINTER")):
        if config.get(field):
            desc[attr] = RUNTIME
            pointer_types[attr] = "void *"
    if config.get("aux_ld"):
        desc["EPILOGUE_AUX_LD"] = 128
    for field, attr in (("bias_data_type", "BIAS_DATA_TYPE"), ("aux_data_type", "EPILOGUE_AUX_DATA_TYPE"),
                        ("a_scale_mode", "A_SCALE_MODE"), ("b_scale_mode", "B_SCALE_MODE"),
                        ("fast_accum", "FAST_ACCUM"), ("pointer_mode", "POINTER_MODE")):
        if config.get(field, NOT_SET_VALUE) != NOT_SET_VALUE:
            desc[attr] = config[field]
    batch = config.get("batch", 1)
    view: dict = {"kind": "heuristic", "operands": {"requested": 1}, "matmul_desc": desc,
                  "preference": {"MAX_WORKSPACE_BYTES": 32 << 20}, "pointer_types": pointer_types, "arch": "sm_90"}
    for m in "ABCD":
        view[f"layout_{m}"] = {"TYPE": config[f"{m.lower()}_type"], "ROWS": DIM, "COLS": DIM, "LD": DIM,
                               "ORDER": config[f"order_{m.lower()}"], "BATCH_COUNT": batch,
                               "STRIDED_BATCH_OFFSET": DIM * DIM if batch > 1 else 0}
    return view


def configurations(table: SupportTable, want_ok: bool = True):
    """(stage, configuration) for every row the table records as working (or, ``want_ok=False``,
    failing), over the accepted type combinations."""
    ok = ALPHABET[table.statuses.index("ok")]
    radix = [len(table.fields[f]) for f in table.type_fields]
    for t in table._ok_types:
        types = {f: table.fields[f][d] for f, d in zip(table.type_fields, _digits(t, radix))}
        if want_ok:
            yield "types", {**table.base, **types}
        for stage in table.stages:
            rows = stage.rows.get(t, "")
            sr = [len(table.fields[f]) for f in stage.fields]
            for i, ch in enumerate(rows):
                if (ch == ok) != want_ok:
                    continue
                values = {f: table.fields[f][d] for f, d in zip(stage.fields, _digits(i, sr))}
                cfg = {**table.base, **types}
                if stage.complete_epilogue:
                    cfg.update(table.needs.get(str(values.get("epilogue", cfg["epilogue"])), {}))
                    cfg.update({p: True for m, p in table.scale_pointers.items()
                                if values.get(m, "unset") not in table.unscaled_modes})
                cfg.update(values)
                cfg.update({f: cfg[g] for f, g in stage.ties.items()})  # as the sweep measured the row
                yield stage.name, cfg


def contradictions(table: SupportTable, rules) -> dict[str, list[tuple[str, dict]]]:
    """Rule id -> the working configurations it reports an error on."""
    from fusionlint.rules.engine import evaluate

    active = [r for r in rules if r.scope == "configuration" and r.severity == "error" and r.applies_to("sm_90")]
    out: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for stage, cfg in configurations(table):
        view = view_of(cfg)
        for r in active:
            if evaluate(r.when, view, True) is True:
                out[r.id].append((stage, cfg))
    return dict(out)


def gaps(table: SupportTable, rules) -> Counter:
    """Per stage, failing configurations that no rule reports."""
    from fusionlint.rules.engine import evaluate

    active = [r for r in rules if r.scope == "configuration" and r.severity == "error" and r.applies_to("sm_90")]
    missed: Counter = Counter()
    for stage, cfg in configurations(table, want_ok=False):
        view = view_of(cfg)
        if not any(evaluate(r.when, view, True) is True for r in active):
            missed[stage] += 1
    return missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("--gaps", action="store_true", help="also count failing configurations no rule reports")
    ap.add_argument("--show", type=int, default=3, help="example configurations per contradicted rule")
    args = ap.parse_args(argv)
    from fusionlint.rules.loader import load_rules

    table = SupportTable.load(args.table)
    rules = load_rules()
    found = contradictions(table, rules)
    print(f"{table.description}: {len(table._ok_types)} accepted type combinations")
    for rid, cases in sorted(found.items()):
        print(f"{rid} flags {len(cases)} configurations the table says work, e.g.:")
        for stage, cfg in cases[:args.show]:
            shown = {k: v for k, v in cfg.items() if table.base.get(k) != v}
            print(f"  [{stage}] {shown}")
    if not found:
        print("no rule flags a configuration the table says works")
    if args.gaps:
        for stage, n in sorted(gaps(table, rules).items()):
            print(f"not reported by any rule (FL127 reports them): {n} failing configurations in stage {stage}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
