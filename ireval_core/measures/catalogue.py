"""The catalogue: every measure family ireval knows, registered once.

The one-line definitions here are what the CLI's ``--help`` and the app show
next to each number; ``{k}``, ``{rel}`` and parameter names are filled in.
"""

from __future__ import annotations

from . import binary, gain, pairwise  # noqa: F401  (pairwise registers its own families)
from .registry import POSITIVE, PROBABILITY, REL, Family, Param, parse_gain, register

GAIN = Param("gain", "linear", "gain of a grade: linear = g, exp = 2^g - 1, or a map "
             "{grade:gain,...}", choices=("linear", "exp"), kind=parse_gain,
             rule="linear, exp or a non-empty map {grade:gain,...}")
DISCOUNT = Param("discount", "log2", "rank discount: log2 = 1/log2(i+1), jk = "
                 "Järvelin-Kekäläinen (1 at rank 1, then 1/log2 i)", choices=("log2", "jk"))
IDEAL = Param("ideal", "qrels", "ideal ranking: qrels = all judged documents of the query "
              "(trec_eval), run = the retrieved documents only (hides recall failures)",
              choices=("qrels", "run"))
UNJUDGED = "unjudged documents count as non-relevant"
ELEVEN = "{" + ",".join(repr(float(x)) for x in binary.ELEVEN_POINTS) + "}"

register(Family("P", binary.precision, "relevant ({rel}) in the top {k} / {k}; short "
                "rankings padded with non-relevant; " + UNJUDGED, params=(REL,),
                trec="P_k / set_P", aliases=("Precision",),
                prefix=True, monotone=True, explained=True))
register(Family("R", binary.recall, "relevant ({rel}) in the top {k} / relevant in the "
                "qrels (0 when none); " + UNJUDGED, params=(REL,), trec="recall_k / set_recall",
                aliases=("Recall",),
                prefix=True, monotone=False, explained=True))
register(Family("F", binary.f_measure, "(1+beta²)·P·R / (beta²·P + R) at {k}, beta = {beta} "
                "(beta² = {beta2}: None is beta·beta), relevant: {rel}",
                params=(REL, Param("beta", 1.0, "weight of recall", **POSITIVE),
                        Param("beta2", None, "beta² itself, as trec_eval's set_F.x takes it "
                              "(x = beta2, exactly); when given, beta is not used",
                              **POSITIVE)),
                trec="set_F",
                prefix=True, monotone=False, explained=False))
register(Family("Fallout", binary.fallout, "judged non-relevant (0 <= grade, not {rel}) in "
                "the top {k} / judged non-relevant in the qrels", params=(REL,),
                prefix=True, monotone=False, explained=False))
register(Family("Accuracy", binary.accuracy, "(TP + TN) / judged documents, the top {k} "
                "predicted relevant ({rel}), everything else predicted non-relevant",
                params=(REL,),
                prefix=True, monotone=False, explained=False))
register(Family("Success", binary.success, "1 if a relevant ({rel}) document is in the top "
                "{k}, else 0", params=(REL,), trec="success_k", aliases=("HitRate",),
                prefix=True, monotone=True, explained=True))
register(Family("Judged", binary.judged, "judged documents (grade >= 0) in the top {k} / "
                "min({k}, retrieved): how much of the ranking the labels cover", binary=False,
                prefix=True, monotone=False, explained=False))
register(Family("AP", binary.average_precision, "Σ over relevant ({rel}) ranks r within {k} "
                "of P@r, / relevant in qrels (not min(k, R)); " + UNJUDGED, params=(REL,),
                trec="map / map_cut_k", aliases=("MAP",), perfect_is_one=True,
                prefix=True, monotone=False, explained=True))
register(Family("RR", binary.reciprocal_rank, "1 / rank of the first relevant ({rel}) "
                "document within {k}, 0 if none", params=(REL,), trec="recip_rank",
                aliases=("MRR", "RecipRank"), perfect_is_one=True,
                prefix=True, monotone=True, explained=True))
register(Family("Rprec", binary.r_precision, "precision at rank (long)(mult·R + 0.9), R = "
                "relevant ({rel}) documents in the qrels, mult = {mult} (1: rank R)",
                cutoff="none", params=(REL, Param("mult", 1.0, "the rank as a multiple of R "
                                                  "(trec_eval Rprec_mult_x)", **POSITIVE)),
                trec="Rprec / Rprec_mult_x", aliases=("RPrec",), perfect_is_one=True,
                prefix=False, monotone=False, explained=True))
register(Family("bpref", binary.bpref, "(1/R) Σ over retrieved relevant ({rel}) of "
                "1 − min(judged non-relevant above, R) / min(N, R) (trec_eval; form=original: "
                "/ R); unjudged documents are skipped", cutoff="none",
                params=(REL, Param("form", "trec", "trec_eval's form or the original "
                                   "(1/R)Σ(1 − N_above/R)", choices=("trec", "original"))),
                trec="bpref", aliases=("Bpref",), perfect_is_one=True,
                prefix=False, monotone=False, explained=True))
register(Family("IPrec", binary.iprec, "interpolated precision at recall {k}: the highest "
                "precision at any recall >= {k}, relevant: {rel} (needs r·R relevant, rounded as "
                "trec_eval: 9.0.8 (long)(r·R + 0.9), 10.0 round(r·R))", cutoff="recall",
                params=(REL,),
                trec="iprec_at_recall_r", perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("11pt", binary.eleven_point, "mean of IPrec at recall levels {levels} "
                "(relevant: {rel}; r·R rounded as IPrec)", cutoff="none",
                params=(REL, Param("levels", ELEVEN, "the recall levels averaged, written "
                                   "{0.25,0.5,0.75} (default: 0.0, 0.1, ..., 1.0; trec_eval "
                                   "-m 11pt_avg.x,y,z)", kind=binary.parse_levels,
                                   rule="recall levels in [0, 1] written {0.25,0.5,0.75}")),
                trec="11pt_avg",
                aliases=("11ptAvg",), perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("NumRet", binary.num_ret, "documents retrieved (within {k})", binary=False,
                bounds=(0.0, None), aggregate=binary.sum_aggregate, parts=binary.SUM_PARTS,
                aggregate_rule="summed over queries", trec="num_ret",
                prefix=True, monotone=False, explained=False))
register(Family("NumRel", binary.num_rel, "relevant ({rel}) documents in the qrels",
                cutoff="none", params=(REL,), bounds=(0.0, None),
                aggregate=binary.num_rel_aggregate, parts=binary.NUM_REL_PARTS,
                aggregate_rule="summed over queries (with -c, as trec_eval: the judgments "
                "graded > 0, whatever the level)",
                trec="num_rel",
                prefix=False, monotone=False, explained=False))
register(Family("NumRelRet", binary.num_rel_ret, "relevant ({rel}) documents retrieved "
                "(within {k})", params=(REL,), bounds=(0.0, None),
                aggregate=binary.sum_aggregate, parts=binary.SUM_PARTS,
                aggregate_rule="summed over queries",
                trec="num_rel_ret",
                prefix=True, monotone=True, explained=False))
register(Family("NumNonRelRet", binary.num_nonrel_ret, "judged non-relevant (not {rel}) "
                "documents retrieved (within {k})", params=(REL,), bounds=(0.0, None),
                aggregate=binary.sum_aggregate, parts=binary.SUM_PARTS,
                aggregate_rule="summed over queries",
                trec="num_nonrel_judged_ret",
                prefix=True, monotone=False, explained=False))

register(Family("CG", gain.cg, "Σ gain ({gain}) over the top {k}", params=(GAIN,),
                binary=False, bounds=(0.0, None),
                prefix=True, monotone=True, explained=True))
register(Family("DCG", gain.dcg, "Σ gain ({gain}) · discount ({discount}) over the top {k}; "
                "absolute, so a ranking of junk scores near 0", params=(GAIN, DISCOUNT),
                binary=False, bounds=(0.0, None),
                prefix=True, monotone=True, explained=True))
register(Family("nDCG", gain.ndcg, "DCG@{k} / IDCG@{k}, gain {gain}, discount {discount}, "
                "ideal from {ideal}", params=(GAIN, DISCOUNT, IDEAL), binary=False,
                trec="ndcg / ndcg_cut_k", aliases=("NDCG",), perfect_is_one=True,
                prefix=True, monotone=False, explained=True))
register(Family("ERR", gain.err, "Σ_r (1/r)·R_r·Π_(i<r)(1 − R_i) over the top {k}, "
                "R = (2^g − 1)/2^gmax, gmax = {max_grade}",
                params=(Param("max_grade", None, "top grade of the scale (default: the "
                              "highest grade in the qrels)", **POSITIVE),),
                binary=False,
                prefix=True, monotone=True, explained=True))
register(Family("RBP", gain.rbp, "(1 − p)·Σ rel_i·p^(i−1) over the top {k}, p = {p}, "
                "rel_i: {gain} (binary: 1 when {rel}; graded: grade / the query's highest "
                "grade when above 1, as trec_eval's rbp)",
                params=(REL, Param("p", 0.8, "persistence", **PROBABILITY),
                        Param("gain", "binary", "binary (by the relevance threshold) or graded "
                              "(grade / the query's highest judged grade, trec_eval's rbp)",
                              choices=("binary", "graded"))),
                trec="rbp = RBP(p=0.9,gain=graded)",
                prefix=True, monotone=True, explained=True))

from . import longtail  # noqa: E402, F401  (trec_eval's other measures, registered there)
