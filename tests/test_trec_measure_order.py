"""``eval``'s trec output lists measures in trec_eval's order, not the order of ``-m``.

trec_eval marks the measures asked for in its measure table and prints them in the
table's order (``te_trec_measures`` of ``measures.c``). Each ``-m`` list below is run
through the trec_eval 10.0 binary built by the tests and through ``eval``, on trec_eval's
own test files, with and without ``-q``: under ``--trec-eval 10.0`` the outputs are equal
byte for byte; under 9.0.8 (whose table has the same order) the measure and query of
every line are.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from trec_eval_oracle import CONFORMANCE_10, run

from ireval_core.cli import main
from ireval_core.measures import parse_measure
from ireval_core.trec_output import columns

if not (CONFORMANCE_10 / "qrels.test").is_file():
    pytest.skip(f"trec_eval 10.0 conformance files not found at {CONFORMANCE_10}",
                allow_module_level=True)

LISTS = [
    ["-m", "P.5,10", "-m", "map", "-m", "num_ret"],
    ["-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "Rprec", "-m", "num_q", "-m", "bpref"],
    ["-m", "success.1", "-m", "recall.10", "-m", "iprec_at_recall.0.5", "-m", "num_rel_ret",
     "-m", "runid"],
    ["-m", "rbp", "-m", "unj.5", "-m", "set_F", "-m", "infAP", "-m", "gm_map", "-m", "ndcg",
     "-m", "relstring", "-m", "map_cut.10", "-m", "num_rel"],
]
FILES = [str(CONFORMANCE_10 / "qrels.test"), str(CONFORMANCE_10 / "results.test")]


def _ireval(args: list[str]) -> str:
    out = io.StringIO()
    assert main(["eval", *args, *FILES], out=out) == 0
    return out.getvalue()


def _keys(text: str) -> list[tuple[str, str]]:
    return [tuple(line.split("\t")[:2]) for line in text.splitlines()]  # type: ignore[misc]


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "-q"])
@pytest.mark.parametrize("measures", LISTS, ids=lambda m: ",".join(m[1::2]))
def test_eval_prints_in_trec_eval_order(trec_eval_10: Path, measures: list[str],
                                        per_query: bool) -> None:
    flags = [*measures, *(["-q"] if per_query else [])]
    expected = run(trec_eval_10, [*flags, *FILES])
    assert _ireval([*flags, "--trec-eval", "10.0"]) == expected
    assert _keys(_ireval(flags)) == _keys(expected)  # 9.0.8: same lines, its values


def test_the_order_is_trec_eval_s_whatever_the_order_asked() -> None:
    names = ["P.5", "recip_rank", "ndcg.1=3", "map_cut.5", "map"]
    labels = [c.label for c in columns(names, parse_measure, trec_order=True,
                                       grades=[0.0, 1.0])]
    assert labels == ["map", "recip_rank", "P_5", "ndcg_1=3", "map_cut_5"]
    # CSV and JSON keep the order asked
    assert [c.label for c in columns(names, parse_measure, grades=[0.0, 1.0])] == [
        "P_5", "recip_rank", "ndcg_1=3", "map_cut_5", "map"]


def test_csv_output_keeps_the_order_asked() -> None:
    text = _ireval(["-m", "P.5", "-m", "map", "--format", "csv"])
    assert [line.split(",")[1] for line in text.splitlines()[1:]] == ["P_5", "map"]
