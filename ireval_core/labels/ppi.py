"""Model + people: mean DCG@K from a model judge's labels corrected by people's labels.

A round where a model judge labeled (nearly) every shown result and people a subset:
:func:`ppi_report` gives, per round and system, the prediction-powered (PPI++) estimate
of mean DCG@K with two intervals (normal and a bootstrap over queries), the people-only
estimate and interval, and the model-only mean; per pair of systems of a round the same
for the paired difference and a verdict in words; the judge's system ranking against the
people's (Kendall's τ_b and τ_AP with bootstrap intervals); and a planner (how many
people's labels for a target width of a difference's interval).

The estimator is :func:`~ireval_core.stats.ppi.ppi_clusters` with the query as the unit:
DCG@K is linear in the gains of the shown results (c = 1/log2(position + 1) at positions
<= K), so a query's people part P, model part A and the model on the people's results H
are sums over its shown results, and a difference of two systems is the difference of
their sums over the same queries. A second control variate, the discounts of the
results people did not label (N − M), fills those with a constant λ₀: it centres the
estimator, so that the judge is credited only with what it knows beyond the people's
mean gain. The interval over queries holds the sampling of the queries and the sampling
of the results people labeled (each with its inclusion probability π). The people-only
estimate uses that constant alone (no judge: a regression estimator of the design); it
estimates DCG as if people had labeled every shown result, so it differs from the trend's
mean DCG, which counts an unlabeled result as gain 0. The model-only mean uses the
judge's labels alone.

Inclusion probabilities: by default the people's results are taken as a simple random
subset of each round's shown results at positions <= K (π = the share people labeled);
``inclusion`` states them (one per unit of the judgments, e.g. a stratified design);
``design="nonrandom"`` computes as the default but says that the subset was not drawn at
random, so the interval covers only what the labeled results can show.

nDCG@K divides by an ideal computed from the labels, which is not linear in them: it is
not estimated here (the notes say so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy import stats as _sps

from ..io import SourceLike, read_table
from ..io.columns import LABEL_ALIASES
from ..measures.gain import discounts, gains
from ..params import OPEN_UNIT, POSITIVE, POSITIVE_INT, SEED, check
from ..stats.ppi import ClusterEstimate, ppi_bootstrap, ppi_clusters, tau_ap_many
from .judgments import COMBINE_RULES, Combine, Judgments, check_combine, text_column
from .kernels import one_blas_thread, percentile_interval, records, resample_counts, tau_b_many
from .label_table import ordered_rounds
from .planning import next_batch
from .reader import ESCAPE_ALIASES, undo_export_escape
from .trend import Gain

__all__ = ["INCLUSION_ALIASES", "PAIR_COLUMNS", "PLAN_COLUMNS", "SYSTEM_COLUMNS",
           "DORNER_BOUND", "PPIReport", "inclusion_of", "people_sample", "ppi_report",
           "read_inclusion", "verdict"]

Design = Literal["random", "nonrandom"]

SYSTEM_COLUMNS = ("round", "system", "queries", "n_people", "n_model", "people_share",
                  "estimate", "low", "high", "boot_low", "boot_high", "lam", "lam0",
                  "people_only", "people_low", "people_high", "model_only", "model_low",
                  "model_high", "width_ratio")
"""Columns of :attr:`PPIReport.systems` (one row per round and system)."""
PAIR_COLUMNS = ("round", "system_a", "system_b", "queries", "n_people", "n_model",
                "estimate", "low", "high", "boot_low", "boot_high", "lam", "lam0",
                "people_only", "people_low", "people_high", "model_only", "model_low", "model_high",
                "width_ratio", "verdict", "people_verdict", "judge_verdict", "judge_agrees",
                "judge_equals_ppi")
"""Columns of :attr:`PPIReport.pairs` (difference = system_b − system_a)."""
PLAN_COLUMNS = ("round", "system_a", "system_b", "correlation", "target_width",
                "labels_now", "labels_ppi", "labels_people_only", "saved", "reachable",
                "too_weak", "advice")
"""Columns of :attr:`PPIReport.plan`."""

DORNER_BOUND = ("when the judge is no better than the systems it judges, no correction "
                "of its labels saves more than about half of the people's labels: at best "
                "the people's labels count about twice (Dorner, Nastl & Hardt, ICLR 2025)")
"""Dorner, Nastl & Hardt's limit in words."""

_TOO_WEAK = 0.10  # the planner calls a judge too weak below a correlation² of 0.10


def verdict(low: float, high: float, a: str, b: str) -> str:
    """The verdict in words on the difference b − a from its interval."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no verdict"
    if low > 0:
        return f"{b} better than {a}"
    if high < 0:
        return f"{b} worse than {a}"
    return "no clear difference"


@dataclass(frozen=True, eq=False)
class PPIReport:
    """Model + people estimates (see the module docstring).

    Attributes
    ----------
    systems, pairs, plan:
        The tables (:data:`SYSTEM_COLUMNS`, :data:`PAIR_COLUMNS`, :data:`PLAN_COLUMNS`).
    ranking:
        Kendall's τ_b and τ_AP of the judge's (round, system) means against the people's,
        each ``{"value", "low", "high"}``, and the points compared.
    memo:
        One sentence for a decision memo.
    definitions:
        What every number means (design, intervals, planner, limits).
    """

    judge: str
    people: tuple[str, ...]
    k: int
    design: str
    confidence_level: float
    systems: pd.DataFrame
    pairs: pd.DataFrame
    plan: pd.DataFrame
    ranking: dict[str, Any]
    memo: str
    definitions: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``systems`` and ``pairs`` with the people-only numbers nested
        (``people_only: {estimate, low, high}``), ``ranking``, ``plan``, ``memo``."""
        def nest(rec: dict[str, Any]) -> dict[str, Any]:
            rec = dict(rec)
            rec["people_only"] = {"estimate": rec.pop("people_only"),
                                  "low": rec.pop("people_low"), "high": rec.pop("people_high")}
            return rec

        return {"judge": self.judge, "people": list(self.people), "k": self.k,
                "design": self.design, "confidence_level": self.confidence_level,
                "systems": [nest(r) for r in records(self.systems)],
                "pairs": [nest(r) for r in records(self.pairs)],
                "ranking": self.ranking, "plan": records(self.plan), "memo": self.memo,
                "definitions": dict(self.definitions)}


@dataclass(frozen=True)
class _Round:
    """One round's per-query sums: P, A, H and weights of each system ``(S, m)``, the
    per-unit coefficients of each system ``(S, units)`` and the unit arrays."""

    name: str
    systems: tuple[str, ...]
    p: np.ndarray
    a: np.ndarray
    h: np.ndarray
    n: np.ndarray
    m: np.ndarray
    w: np.ndarray
    coef: np.ndarray
    unit_query: np.ndarray
    y: np.ndarray
    f: np.ndarray
    sampled: np.ndarray
    judged: np.ndarray
    pi: np.ndarray


@one_blas_thread
def ppi_report(j: Judgments, judge: str, *, k: int = 10, gain: Gain = "linear",
               combine: Combine = "mean", confidence_level: float = 0.95,
               n_resamples: int = 2000, seed: int = 0,
               inclusion: np.ndarray | float | None = None, design: Design = "random",
               target_width: float | None = None) -> PPIReport:
    """PPI++ estimates of mean DCG@K from the judge's labels and the people's.

    ``judge`` is a rater of ``j``; every other rater is a person (their labels of a unit
    combined by ``combine``). ``inclusion``: the probability that people label each
    unit (an array over ``j``'s units, or one number), None for the default (module
    docstring). ``target_width``: the planner's width of the difference's interval
    (None: the PPI interval's width now, to read how many labels the people alone
    would need for it). Bootstrap intervals resample each
    round's queries (``n_resamples``, ``seed``; the systems of a round paired).
    """
    check_combine(combine, "ppi_report")
    check(k, "k", "ppi_report", POSITIVE_INT)
    check(confidence_level, "confidence_level", "ppi_report", OPEN_UNIT)
    check(n_resamples, "n_resamples", "ppi_report", POSITIVE_INT)
    check(seed, "seed", "ppi_report", SEED)
    if target_width is not None:
        check(target_width, "target_width", "ppi_report", POSITIVE)
    if judge not in j.raters:
        raise ValueError(f"ppi_report: the judge {judge!r} is not a rater of the labels "
                         f"(raters: {', '.join(map(repr, j.raters))})")
    if design not in ("random", "nonrandom"):
        raise ValueError(f"ppi_report: design must be 'random' or 'nonrandom', got {design!r}")
    people = tuple(r for r in j.raters if r != judge)
    if not people:
        raise ValueError(f"ppi_report: no people's labels besides the judge {judge!r}")
    pi_unit = _inclusion(j, inclusion)
    cp, _ = j.select(raters=list(people)).combined(combine)
    cj, _ = j.select(raters=[judge]).combined("mean")
    rounds = [_round_sums(j, name, cp, cj, k, gain, pi_unit)
              for name in ordered_rounds(j.rounds)]
    rows, pair_rows, plan_rows, boots = [], [], [], []
    for i, rd in enumerate(rounds):
        counts = resample_counts(rd.p.shape[1], n_resamples, seed)
        srows, prows, plans, boot = _round_tables(rd, counts, confidence_level, target_width)
        rows += srows
        pair_rows += prows
        plan_rows += plans
        perm = np.random.default_rng([seed, i]).permutation(n_resamples)
        boots.append((boot[0][perm], boot[1][perm]))
    systems = pd.DataFrame(rows, columns=list(SYSTEM_COLUMNS))
    pairs = pd.DataFrame(pair_rows, columns=list(PAIR_COLUMNS))
    plan = pd.DataFrame(plan_rows, columns=list(PLAN_COLUMNS))
    ranking = _ranking(systems, boots, confidence_level)
    stated = "stated" if inclusion is not None else design
    return PPIReport(judge, people, k, stated, confidence_level, systems, pairs, plan,
                     ranking, _memo(pairs), _definitions(k, gain, combine, stated,
                                                         confidence_level, n_resamples,
                                                         seed))


def people_sample(j: Judgments, round: str, share: float, *, k: int = 10,
                  seed: int = 0) -> pd.DataFrame:
    """The design of a round's people's labels: each shown result (a query's document at
    positions <= ``k``, whatever system showed it) goes to people with probability
    ``share``, independently (seeded).

    Returns the round's batch (:func:`~ireval_core.labels.planning.next_batch`'s
    layout) with two more columns: ``for_people`` (drawn for people) and ``inclusion``
    (its probability, the π that :func:`inclusion_of` reads back for
    :func:`ppi_report`). The judge labels every row; people the rows ``for_people``.
    """
    check(share, "share", "people_sample", OPEN_UNIT)
    check(seed, "seed", "people_sample", SEED)
    batch = next_batch(j, round, k=k)
    keys = (batch["query"].astype(str) + "\x1f" + batch["doc"].astype(str)).to_numpy(
        dtype=object)
    units = np.unique(keys)  # sorted: the draw does not depend on the row order
    chosen = np.random.default_rng(seed).random(len(units)) < share
    return batch.assign(for_people=chosen[np.searchsorted(units, keys)],
                        inclusion=float(share))


def inclusion_of(j: Judgments, design: pd.DataFrame) -> np.ndarray:
    """Per unit of ``j``: the inclusion probability of a design table (columns
    ``round``, ``query``, ``doc``, ``inclusion``; e.g. :func:`people_sample`'s), NaN for
    units the table does not name (their round then uses the default design)."""
    missing = {"round", "query", "doc", "inclusion"} - set(design.columns)
    if missing:
        raise ValueError("inclusion_of: the design table needs the columns round, query, "
                         f"doc, inclusion (missing: {', '.join(sorted(missing))})")
    units = pd.DataFrame({
        "round": text_column(j.round_names, j.unit_round),
        "query": text_column(j.query_ids, j.unit_query),
        "doc": text_column(j.doc_ids, j.unit_doc)}).astype(str)
    table = design[["round", "query", "doc", "inclusion"]].astype(
        {"round": str, "query": str, "doc": str}).drop_duplicates(["round", "query", "doc"])
    merged = units.merge(table, on=["round", "query", "doc"], how="left")
    return merged["inclusion"].to_numpy(dtype=np.float64)


INCLUSION_ALIASES: dict[str, tuple[str, ...]] = {
    "round": LABEL_ALIASES["round"], "query": LABEL_ALIASES["query"],
    "doc": LABEL_ALIASES["doc"],
    "inclusion": ("inclusion", "inclusion_probability", "probability", "pi")}
"""Accepted column names of a design file (:func:`read_inclusion`), per column."""


def read_inclusion(source: SourceLike) -> pd.DataFrame:
    """A design file (CSV, TSV, Excel or Parquet): one row per shown result with its
    inclusion probability, columns ``round``, ``query``, ``doc``, ``inclusion`` (other
    columns ignored, so :func:`people_sample`'s table saved as a file reads as is).

    Returns the table :func:`inclusion_of` takes. Raises
    :class:`~ireval_core.errors.FormatError` naming the file, the line and what was
    expected: a missing column, an empty id, a probability that is not a number in
    (0, 1], or one result given two different probabilities.
    """
    t = undo_export_escape(read_table(  # ireval's export: its ids as they were
        source, {**INCLUSION_ALIASES, **ESCAPE_ALIASES}, required=tuple(INCLUSION_ALIASES),
        kind="design", numeric=("inclusion",)))
    pi = t.numbers("inclusion", "inclusion probability")
    bad = ~((pi > 0) & (pi <= 1))  # NaN (an empty cell) included
    if bad.any():
        row = int(np.argmax(bad))
        raise t.error(row, "expected an inclusion probability in (0, 1] in column "
                      f"{t.header_name('inclusion')!r}, got "
                      + ("an empty cell" if np.isnan(pi[row]) else f"{pi[row]:g}"))
    cols = {key: np.asarray(t.text(key).cast(pa.string()).to_numpy(zero_copy_only=False),
                            dtype=object) for key in ("round", "query", "doc")}
    for key, values in cols.items():
        empty = np.array([v is None or not str(v).strip() for v in values], dtype=bool)
        if empty.any():
            raise t.error(int(np.argmax(empty)),
                          f"expected a {key} in column {t.header_name(key)!r}, got an empty cell")
    table = pd.DataFrame({**{key: [str(v).strip() for v in values]
                             for key, values in cols.items()}, "inclusion": pi})
    keys = ["round", "query", "doc"]
    first = table.groupby(keys, sort=False)["inclusion"].transform("first")
    clash = (table["inclusion"] != first).to_numpy()
    if clash.any():
        row = int(np.argmax(clash))
        rec = table.iloc[row]
        raise t.error(row, f"expected one inclusion probability per result: "
                      f"{rec['round']}/{rec['query']}/{rec['doc']} has {first.iloc[row]:g} "
                      f"on an earlier line and {rec['inclusion']:g} here")
    return table


def _inclusion(j: Judgments, inclusion: np.ndarray | float | None) -> np.ndarray | None:
    """Per unit π (None: each round's share, found later; NaN: a unit no design names)."""
    if inclusion is None:
        return None
    pi = np.broadcast_to(np.asarray(inclusion, dtype=np.float64), (j.n_units,)).copy()
    if not np.all(((pi > 0) & (pi <= 1)) | np.isnan(pi)):
        raise ValueError("ppi_report: every inclusion probability must be in (0, 1]")
    return pi


def _round_sums(j: Judgments, name: str, cp: np.ndarray, cj: np.ndarray, k: int,
                gain: Gain, pi_unit: np.ndarray | None) -> _Round:
    """P, A, H, N, M per system and query of one round, and what the planner needs
    (``cp``, ``cj``: the people's combined and the judge's label of every unit)."""
    r = j.round_code(name, "ppi_report")
    sampled, judged = np.isfinite(cp), np.isfinite(cj)
    y, f = gains(np.where(sampled, cp, 0.0), gain), gains(np.where(judged, cj, 0.0), gain)
    rows = np.flatnonzero((j.shown_round == r) & (j.shown_position <= k))
    groups = np.flatnonzero(j.group_round == r)
    sys_codes = np.unique(j.group_system[groups])
    q_codes = np.unique(j.group_query[groups])
    s_of = np.searchsorted(sys_codes, j.shown_system[rows])
    q_of = np.searchsorted(q_codes, j.shown_query[rows])
    units = np.unique(j.shown_unit[rows])
    u_of = np.searchsorted(units, j.shown_unit[rows])
    pi = None if pi_unit is None else pi_unit[units]
    if pi is not None and np.isnan(pi).any() and not np.isnan(pi).all():
        raise ValueError(f"ppi_report: the design gives an inclusion probability to some "
                         f"of round {name}'s shown results but not to "
                         f"{int(np.isnan(pi).sum())} of them")
    if pi is None or np.isnan(pi).all():  # the default: the share people labeled
        share = float(sampled[units].mean()) if len(units) else 0.0
        pi = np.full(len(units), share if share > 0 else 1.0)
    n_s, n_q, n_u = len(sys_codes), len(q_codes), len(units)
    c = discounts(j.shown_position[rows], "log2")
    coef = np.bincount(s_of * n_u + u_of, weights=c, minlength=n_s * n_u).reshape(n_s, n_u)
    yu, fu, xu = y[units], f[units], sampled[units].astype(np.float64)

    def per_query(values: np.ndarray) -> np.ndarray:
        return np.bincount(s_of * n_q + q_of, weights=c * values[u_of],
                           minlength=n_s * n_q).reshape(n_s, n_q)

    w = np.zeros((n_s, n_q))
    w[np.searchsorted(sys_codes, j.group_system[groups]),
      np.searchsorted(q_codes, j.group_query[groups])] = j.group_weight[groups]
    unit_query = np.searchsorted(q_codes, j.unit_query[units])
    none = np.nan if not xu.any() else 0.0  # no people's labels: no estimate but the model's
    return _Round(name, tuple(str(j.system_names[s]) for s in sys_codes),
                  per_query(xu * yu / pi) + none, per_query(fu), per_query(xu * fu / pi) + none,
                  per_query(np.ones(n_u)), per_query(xu / pi), w, coef,
                  unit_query, yu, fu, sampled[units], judged[units], pi)


def _targets(rd: _Round) -> tuple[list[tuple[int, int]], dict[str, np.ndarray], np.ndarray,
                                  np.ndarray]:
    """The pairs (a, b) of the round, the stacked (systems, then pairs) sums P, A, H, N,
    M by name, the weights and the per-unit coefficients."""
    n_s = len(rd.systems)
    pairs = [(a, b) for a in range(n_s) for b in range(a + 1, n_s)]
    ia = np.array([a for a, _ in pairs], dtype=np.int64)
    ib = np.array([b for _, b in pairs], dtype=np.int64)

    def stack(x: np.ndarray) -> np.ndarray:
        return np.concatenate([x, x[ib] - x[ia]]) if pairs else x

    both = np.where((rd.w[ia] > 0) & (rd.w[ib] > 0), rd.w[ia], 0.0) if pairs else rd.w[:0]
    sums = {"people": stack(rd.p), "model": stack(rd.a), "model_sampled": stack(rd.h),
            "count": stack(rd.n), "count_sampled": stack(rd.m)}
    return pairs, sums, np.concatenate([rd.w, both]), stack(rd.coef)


def _round_tables(rd: _Round, counts: np.ndarray, level: float, target_width: float | None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]],
                             tuple[np.ndarray, np.ndarray]]:
    """The system rows, pair rows and plan rows of one round, and the bootstrap
    people-only and model-only means of its systems ``(B, S)``."""
    pairs, sums, w, coef = _targets(rd)
    est = ppi_clusters(weight=w, level=level, **sums)
    boot, boot_p, boot_a = ppi_bootstrap(weight=w, counts=counts, **sums)
    n_s = len(rd.systems)
    in_target = (coef != 0) | _shown_units(rd, pairs)
    n_people = (in_target & rd.sampled).sum(axis=1)
    n_model = (in_target & rd.judged).sum(axis=1)
    system_rows, pair_rows, plan_rows = [], [], []
    for t in range(len(w)):
        low, high = percentile_interval(boot[:, t], level)
        base = _numbers(est, t) | {"boot_low": low, "boot_high": high,
                                   "n_people": int(n_people[t]), "n_model": int(n_model[t])}
        if not n_model[t]:  # the judge labeled none of these results: no model-only mean
            base.update(model_only=math.nan, model_low=math.nan, model_high=math.nan)
        if t < n_s:
            share = float(rd.sampled.mean()) if len(rd.pi) else math.nan
            system_rows.append({"round": rd.name, "system": rd.systems[t],
                                "people_share": share, **base})
            continue
        sa, sb = (rd.systems[i] for i in pairs[t - n_s])
        row = {"round": rd.name, "system_a": sa, "system_b": sb, **base,
               "verdict": verdict(base["low"], base["high"], sa, sb),
               "people_verdict": verdict(base["people_low"], base["people_high"], sa, sb),
               "judge_verdict": verdict(base["model_low"], base["model_high"], sa, sb)}
        row["judge_agrees"] = row["judge_verdict"] == row["people_verdict"]
        row["judge_equals_ppi"] = row["judge_verdict"] == row["verdict"]
        pair_rows.append(row)
        plan_rows.append({"round": rd.name, "system_a": sa, "system_b": sb,
                          **_plan(rd, coef[t], w[t], est, t, level, target_width)})
    return system_rows, pair_rows, plan_rows, (boot_p[:, :n_s], boot_a[:, :n_s])


def _shown_units(rd: _Round, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Units shown (at positions <= K) by each target's systems, ``(T, units)``."""
    shown = rd.coef > 0
    if not pairs:
        return shown
    ia = np.array([a for a, _ in pairs])
    ib = np.array([b for _, b in pairs])
    return np.concatenate([shown, shown[ia] | shown[ib]])


def _numbers(est: ClusterEstimate, t: int) -> dict[str, Any]:
    """One target's numbers from :func:`ppi_clusters`, with the width ratio."""
    width, width_p = est.high[t] - est.low[t], est.people_high[t] - est.people_low[t]
    return {"queries": int(est.queries[t]), "estimate": float(est.estimate[t]),
            "low": float(est.low[t]), "high": float(est.high[t]), "lam": float(est.lam[t]),
            "lam0": float(est.lam0[t]),
            "people_only": float(est.people[t]), "people_low": float(est.people_low[t]),
            "people_high": float(est.people_high[t]), "model_only": float(est.model[t]),
            "model_low": float(est.model_low[t]), "model_high": float(est.model_high[t]),
            "width_ratio": float(width / width_p) if width_p > 0 else math.nan}


def _label_variance(rd: _Round, coef: np.ndarray, w: np.ndarray, lam: float,
                    lam0: float) -> float:
    """The part of the estimate's variance that comes from sampling the people's
    results: Σ_q w_q² Σ_u c_u² r_u² (1 − π)/π over the people's results (weighted by
    1/π), r = y − λ f − λ₀, over (Σ w)²."""
    wq = w[rd.unit_query]
    r = rd.y - lam * rd.f - lam0
    terms = np.where(rd.sampled, wq ** 2 * coef ** 2 * r ** 2 * (1 - rd.pi) / rd.pi ** 2, 0.0)
    total = w.sum()
    return float(terms.sum() / total ** 2) if total > 0 else math.nan


def _plan(rd: _Round, coef: np.ndarray, w: np.ndarray, est: ClusterEstimate, t: int,
          level: float, target_width: float | None) -> dict[str, Any]:
    """How many people's labels give the target width, with the judge (PPI++) and
    without it (λ = 0); the variance over queries stays, the label part scales with
    (1 − π)/π."""
    z = float(_sps.norm.ppf(0.5 + level / 2.0))
    width_now = float(est.high[t] - est.low[t])
    target = target_width if target_width is not None else width_now
    n_units = int((coef != 0).sum())
    pi0 = float(rd.pi.mean()) if len(rd.pi) else 1.0
    needed = [_labels_for(se ** 2, _label_variance(rd, coef, w, lam, lam0), pi0,
                          (target / (2 * z)) ** 2, n_units)
              for lam, lam0, se in (
                  (float(est.lam[t]), float(est.lam0[t]), float(est.se[t])),
                  (0.0, float(est.people_lam0[t]), float(est.people_se[t])))]
    ppi_n, people_n = needed
    shown = (coef != 0) & rd.sampled
    corr = (float(np.corrcoef(rd.y[shown], rd.f[shown])[0, 1])
            if shown.sum() > 2 and np.std(rd.y[shown]) > 0 and np.std(rd.f[shown]) > 0
            else math.nan)
    reachable = math.isfinite(ppi_n)
    saved = (1.0 - ppi_n / people_n) if reachable and math.isfinite(people_n) and people_n > 0 \
        else math.nan
    # too weak: the judge's labels explain less than a tenth of the variance of the
    # people's labels (correlation² < 0.1), the share of labels PPI saves at best when
    # people label few results
    too_weak = bool(math.isfinite(corr) and corr ** 2 < _TOO_WEAK)
    advice = _advice(target, ppi_n, people_n, saved, too_weak, reachable, n_units)
    return {"correlation": corr, "target_width": target,
            "labels_now": int((shown).sum()), "labels_ppi": ppi_n,
            "labels_people_only": people_n, "saved": saved, "reachable": reachable,
            "too_weak": too_weak, "advice": advice}


def _labels_for(var_now: float, label_var: float, pi0: float, var_target: float,
                n_units: int) -> float:
    """People's labels (π × units) that bring the variance to ``var_target``: the query
    part ``var_now − label_var`` stays, the label part scales with (1 − π)/π. NaN when
    even every unit labeled cannot reach it (more queries are needed)."""
    if not (math.isfinite(var_now) and math.isfinite(label_var)):
        return math.nan
    query_var = max(var_now - label_var, 0.0)
    if var_target <= query_var:
        return math.nan
    g0 = (1 - pi0) / pi0
    if label_var <= 0 or g0 <= 0:
        return float(math.ceil(pi0 * n_units))
    g = (var_target - query_var) * g0 / label_var
    return float(min(math.ceil(n_units / (1.0 + g)), n_units))


def _advice(target: float, ppi_n: float, people_n: float, saved: float, too_weak: bool,
            reachable: bool, n_units: int) -> str:
    """The planner's sentence."""
    if not math.isfinite(target):
        return "no plan (no people's labels in the round)"
    if not reachable:
        return (f"an interval {target:.3g} wide is out of reach with these queries even "
                f"with all {n_units} results labeled by people: more queries are needed")
    if not math.isfinite(people_n):
        return (f"for an interval {target:.3g} wide: about {ppi_n:.0f} people's labels with "
                f"the judge; without it not even all {n_units} results labeled by people "
                "reach it with these queries")
    if too_weak:
        return (f"the judge is too weak to save people's labels here: about {ppi_n:.0f} "
                f"with it, {people_n:.0f} without; " + DORNER_BOUND)
    return (f"for an interval {target:.3g} wide: about {ppi_n:.0f} people's labels with "
            f"the judge, {people_n:.0f} without it ({saved:.0%} saved)")


def _ranking(systems: pd.DataFrame, boots: list[tuple[np.ndarray, np.ndarray]],
             level: float) -> dict[str, Any]:
    """τ_b and τ_AP of the judge's (round, system) means against the people's."""
    keep = (np.isfinite(systems["people_only"].to_numpy(dtype=np.float64))
            & np.isfinite(systems["model_only"].to_numpy(dtype=np.float64)))
    people = systems["people_only"].to_numpy(dtype=np.float64)[keep]
    model = systems["model_only"].to_numpy(dtype=np.float64)[keep]
    out: dict[str, Any] = {"points": int(keep.sum()), "truth": "people_only",
                           "ranking": "model_only"}
    if keep.sum() < 2 or not boots:
        for key in ("kendall_tau", "tau_ap"):
            out[key] = {"value": None, "low": None, "high": None}
        return out
    bp = np.concatenate([b[0] for b in boots], axis=1)[:, keep]
    ba = np.concatenate([b[1] for b in boots], axis=1)[:, keep]
    for key, value, many in (
            ("kendall_tau", tau_b_many(model[None], people[None])[0], tau_b_many(ba, bp)),
            ("tau_ap", tau_ap_many(model[None], people[None])[0], tau_ap_many(ba, bp))):
        low, high = percentile_interval(many, level)
        out[key] = {k: (None if math.isnan(v) else float(v))
                    for k, v in (("value", float(value)), ("low", low), ("high", high))}
    return out


def _memo(pairs: pd.DataFrame) -> str:
    """One sentence: how often the judge's verdict equals the people's, where it leans
    most, and which verdict is used."""
    pairs = pairs[pairs["estimate"].notna()]
    if pairs.empty:
        return "no pair of systems with people's labels: nothing to decide"
    agree = int(pairs["judge_agrees"].sum())
    lean = pairs["model_only"] - pairs["estimate"]
    i = int(np.nanargmax(np.abs(lean.to_numpy()))) if lean.notna().any() else 0
    rec = pairs.iloc[i]
    favoured = rec["system_b"] if lean.iloc[i] > 0 else rec["system_a"]
    return (f"the judge agrees with people on {agree} of {len(pairs)} pairs; on "
            f"{rec['system_a']} vs {rec['system_b']} ({rec['round']}) it favours {favoured} "
            f"by {abs(float(lean.iloc[i])):.3g}; the PPI verdict is used")


def _definitions(k: int, gain: str, combine: str, design: str, level: float,
                 n_resamples: int, seed: int) -> dict[str, str]:
    designs = {
        "random": "the people's results are taken as a simple random subset of each "
                  "round's shown results at positions <= {k} (inclusion probability = the "
                  "share they labeled)",
        "stated": "the people's results were drawn with the stated inclusion probabilities",
        "nonrandom": "the people's results were NOT drawn at random; the interval is "
                     "computed as if they were (probability = the share labeled) and covers "
                     "only what those results show: if they were chosen for their content "
                     "(hard queries, disagreements), the estimate can be off by more than "
                     "the interval says"}
    return {
        "design": designs[design].format(k=k),
        "estimate": f"PPI++ estimate of mean DCG@{k} ({gain} gain; people's label: "
                    f"{COMBINE_RULES[combine]}): per query, the people's gains divided by "
                    "their inclusion probability, plus λ × (the judge's gains on every shown "
                    "result − the judge's gains on the people's results divided by their "
                    "probability), plus λ₀ × (the same with gain 1); λ and λ₀ minimise the "
                    "variance; mean over queries (weighted by the query weight)",
        "low/high": f"{level:.0%} normal interval over the queries (the sampling of queries "
                    "and of the people's results both in it)",
        "boot_low/boot_high": f"{level:.0%} percentile interval of {n_resamples} bootstrap "
                              f"resamples of the round's queries (seed {seed}), λ tuned "
                              "again in each",
        "people_only": "the same estimate without the judge (λ = 0, λ₀ tuned): the "
                       "people's labels alone, the results they did not label counted at "
                       "the people's mean gain",
        "model_only": "mean DCG from the judge's labels alone (its bias included)",
        "width_ratio": "PPI interval width / people-only interval width",
        "verdict": "b − a: 'b better than a' when the interval is above 0, 'b worse than "
                   "a' below, else 'no clear difference'; judge_verdict from the model-only "
                   "interval, people_verdict from the people-only one",
        "ranking": "Kendall's τ_b and τ_AP (Yilmaz, Aslam & Robertson 2008) of the judge's "
                   "model-only (round, system) means against the people-only means; "
                   "intervals: the same bootstrap resamples",
        "plan": "people's labels for the target width of the difference's interval (default: "
                "the PPI interval's width now), with the judge and without, the part of the "
                "variance between queries kept; counted over the results whose label moves "
                "the difference (not those both systems show at the same position); the judge "
                "is too weak when its gains' correlation with the people's is below 0.32 "
                "(it explains under a tenth of their variance); " + DORNER_BOUND,
        "ndcg": "nDCG@K is not estimated: its ideal comes from the labels, so it is not "
                "linear in them",
    }
