"""A saved set that grows month by month: versions of a workspace dataset, on SQLite and
on the real PostgreSQL test server (:mod:`pg`).

The labeling files are real monthly files of the bundled sample; their rounds and rows are
counted here by the labeling reader, as the app does before it adds a file.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from ireval_core.labels import read_judgments
from ireval_core.workspace import (
    DatasetVersion,
    FileRounds,
    RoundsInSetError,
    Workspace,
    resolve_url,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "labels"
MONTHS = sorted(SAMPLE.glob("labels_*.csv"))[:3]


def month(i: int) -> tuple[str, bytes]:
    """The sample's i-th monthly labeling file as ``(name, bytes)``."""
    return MONTHS[i].name, MONTHS[i].read_bytes()


def stated(name: str, data: bytes) -> FileRounds:
    """The file's rounds and labeled rows, counted by the labeling reader."""
    j = read_judgments((name, data))
    return FileRounds(j.rounds, len(j.label_table()))


def grown(ws: Workspace, months: int) -> str:
    """A set saved with month 1 and grown month by month; its id."""
    name, data = month(0)
    info = ws.save_dataset([("labels", name, data)], name="labels 2026", saved_by="ana",
                           rounds={name: stated(name, data)})
    for i in range(1, months):
        n, d = month(i)
        ws.add_to_dataset(info.id, [("labels", n, d)], rounds={n: stated(n, d)},
                          saved_by="bo")
    return info.id


def test_a_set_grows_over_three_months_under_one_id(ws: Workspace) -> None:
    assert len(MONTHS) == 3
    first = stated(*month(0))
    set_id = grown(ws, 3)
    info = ws.get_dataset(set_id)
    assert (info.id, info.name, info.version, info.latest_version) == (
        set_id, "labels 2026", 3, 3)
    expected_rounds = tuple(r for i in range(3) for r in stated(*month(i)).rounds)
    assert info.rounds == expected_rounds and len(set(expected_rounds)) == 3
    assert [f.name for f in info.files] == [m.name for m in MONTHS]
    assert [ws.read_file(set_id, f.position) for f in info.files] == [
        m.read_bytes() for m in MONTHS]
    assert [i.id for i in ws.list_datasets()] == [set_id]  # one set, not three
    # earlier months untouched: version 1 is month 1 alone, with its stated rows
    v1 = ws.get_dataset(set_id[:12], version=1)
    assert (v1.version, v1.latest_version, [f.name for f in v1.files]) == (
        1, 3, [MONTHS[0].name])
    assert (v1.files[0].rounds, v1.files[0].rows) == (first.rounds, first.rows)
    versions = ws.versions(set_id)
    assert [(v.version, v.saved_by, [f.name for f in v.added], v.rounds, v.n_files)
            for v in versions] == [
        (i + 1, "ana" if i == 0 else "bo", [MONTHS[i].name], stated(*month(i)).rounds, i + 1)
        for i in range(3)]
    assert [v.rows for v in versions] == [stated(*month(i)).rows for i in range(3)]
    assert all(isinstance(v, DatasetVersion) and not v.replaced for v in versions)
    assert versions[0].saved_at <= versions[1].saved_at <= versions[2].saved_at
    # the same month again changes nothing
    n, d = month(2)
    again = ws.add_to_dataset(set_id, [("labels", n, d)], rounds={n: stated(n, d)},
                              saved_by="bo")
    assert again.version == 3 and len(ws.versions(set_id)) == 3


def test_a_round_already_in_the_set_is_refused_unless_replaced(ws: Workspace) -> None:
    set_id = grown(ws, 2)
    n, d = month(1)
    fixed = d.replace(b"\n", b"\r\n")  # the same month, saved again (other bytes)
    fixed_name = "fixed_" + n
    with pytest.raises(RoundsInSetError, match=(
            rf"^round {stated(n, d).rounds[0]} is already in the set 'labels 2026' "
            rf"\(file {n}, version 2\): choose to replace, or add a file of new rounds "
            r"only$")) as caught:
        ws.add_to_dataset(set_id, [("labels", fixed_name, fixed)],
                          rounds={fixed_name: stated(fixed_name, fixed)}, saved_by="cy")
    assert caught.value.files == (n,) and ws.get_dataset(set_id).version == 2
    info = ws.add_to_dataset(set_id, [("labels", fixed_name, fixed)],
                             rounds={fixed_name: stated(fixed_name, fixed)}, saved_by="cy",
                             replace=True, note="month 2 relabeled")
    assert info.version == 3
    assert [f.name for f in info.files] == [MONTHS[0].name, fixed_name]
    v3 = ws.versions(set_id)[-1]
    assert ([f.name for f in v3.replaced], [f.name for f in v3.added], v3.note) == (
        [n], [fixed_name], "month 2 relabeled")
    # the replaced version stays readable, byte for byte
    v2 = ws.get_dataset(set_id, version=2)
    assert [ws.read_file(set_id, f.position) for f in v2.files] == [month(0)[1], d]


def test_replacing_must_not_drop_other_rounds(ws: Workspace) -> None:
    (n0, d0), (n1, d1) = month(0), month(1)
    both = d0 + d1.split(b"\n", 1)[1]  # one file holding months 1 and 2
    info = ws.save_dataset([("labels", "both.csv", both)], name="two months",
                           saved_by="ana", rounds={"both.csv": stated("both.csv", both)})
    with pytest.raises(RoundsInSetError, match=(
            rf"^replacing file 'both.csv' of the set 'two months' would drop its round "
            rf"{stated(n1, d1).rounds[0]}, which the added files do not hold")):
        ws.add_to_dataset(info.id, [("labels", n0, d0)], rounds={n0: stated(n0, d0)},
                          saved_by="bo", replace=True)


def test_rounds_must_be_stated(ws: Workspace) -> None:
    (n0, d0), (n1, d1) = month(0), month(1)
    info = ws.save_dataset([("labels", n0, d0)], name="no rounds", saved_by="ana")
    assert info.files[0].rounds is None
    with pytest.raises(ValueError, match=r"the rounds of every added file \(missing: "):
        ws.add_to_dataset(info.id, [("labels", n1, d1)], rounds={}, saved_by="bo")
    with pytest.raises(ValueError, match=rf"the rounds of the set's file '{n0}' too"):
        ws.add_to_dataset(info.id, [("labels", n1, d1)], rounds={n1: stated(n1, d1)},
                          saved_by="bo")
    grown_info = ws.add_to_dataset(info.id, [("labels", n1, d1)],
                                   rounds={n0: stated(n0, d0), n1: stated(n1, d1)},
                                   saved_by="bo")
    assert grown_info.rounds == stated(n0, d0).rounds + stated(n1, d1).rounds
    with pytest.raises(TypeError, match="FileRounds"):
        ws.add_to_dataset(info.id, [("labels", n1, d1)], rounds={n1: ("x",)},  # type: ignore[dict-item]
                          saved_by="bo")
    with pytest.raises(ValueError, match=r"version from 1 to 2"):
        ws.get_dataset(info.id, version=3)


def test_delete_removes_every_version(ws: Workspace, url: str) -> None:
    set_id = grown(ws, 3)
    gone = ws.delete_dataset(set_id, confirm=set_id[:12])
    assert (gone.files, gone.blobs_removed) == (3, 3)
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            assert [conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one()
                    for t in ("dataset_versions", "version_files", "blobs")] == [0, 0, 0]
    finally:
        engine.dispose()


def test_two_sessions_adding_the_same_month_at_once(ws: Workspace, url: str) -> None:
    set_id = grown(ws, 1)
    n, d = month(1)
    results: list[object] = []

    def add(who: str, name: str) -> None:
        with Workspace.open(url) as mine:
            try:
                results.append(mine.add_to_dataset(set_id, [("labels", name, d)],
                                                   rounds={name: stated(name, d)},
                                                   saved_by=who).version)
            except RoundsInSetError as exc:
                results.append(exc.rounds)

    threads = [threading.Thread(target=add, args=(w, f"{w}_{n}")) for w in ("ana", "bo")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results, key=str) == sorted([2, stated(n, d).rounds], key=str)
    assert ws.get_dataset(set_id).version == 2
