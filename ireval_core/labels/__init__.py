"""Monthly labeling: labeled result lists, month-by-month search quality, what to label next.

Every month a team samples real search sessions and people label the top K results
that were shown; mean DCG@K over the sampled queries, month by month, monitors the
whole chain (recall and ranking). This package reads such files (through
:func:`ireval_core.io.read_table`, which recognises CSV, TSV, Excel and Parquet) and
computes:

* :mod:`.judgments` -- the columnar :class:`Judgments` of labeling rounds (shown
  results, units, labels), its views and the bridge to the existing model
  (``j.round(r).to_qrels(combine=...)``, ``.to_runs()``);
* :mod:`.reader` -- reading labeling files into it (:func:`read_judgments`, every rule
  checked, every problem reported at once), or a DataFrame
  (:func:`judgments_from_frame`);
* :mod:`.labelmap` -- label maps (``none=0,low=1,mid=2,high=3``, 无/低/中/高, ...);
* :mod:`.trend` -- DCG@K and nDCG@K per round and system with bootstrap bands,
  coverage, grade distribution, month-over-month tests, segment breakdown;
* :mod:`.online` -- AUC, GAUC and PNR from model scores beside DCG;
* :mod:`.changes` -- label changes between two rounds and the split of a DCG change
  into "new result lists" and "changed labels";
* :mod:`.planning` -- queries needed next round, and the next batch to label;
* :mod:`.task` -- the month's labeling task: a query log sampled by a stated design
  (simple random, stratified, proportional to size) with the weights the trend uses,
  each system's top K, the anchor items and the people's share;
* :mod:`.agreement` -- agreement between raters (Cohen, Fleiss, Krippendorff) and the
  rater report (drift, confusion, disputed results), on the long label table;
* :mod:`.gsb` -- side-by-side (good/same/bad) judgments: reading and the win rates;
* :mod:`.noise` -- the monthly interval over queries *and* raters (two-stage
  bootstrap), the minimum detectable change, and drop flags that use them;
* :mod:`.anchors` -- anchor items labeled every month: rater drift, flagged before the
  trend is read;
* :mod:`.judge` -- a model judge (an LLM's labels) checked against the people:
  agreement, decisions, bias, disagreements.

The names of agreement, gsb and task are not repeated here, to keep this package's API short:
import them from their module (``from ireval_core.labels.gsb import read_gsb``).
"""

from ..io import RawTable, SourceLike, read_table
from ..io.columns import LABEL_ALIASES, REQUIRED_LABEL_COLUMNS
from .anchors import AnchorDrift, anchor_drift, read_anchors
from .changes import LabelChanges, dcg_decomposition, label_changes
from .judge import JudgeReport, judge_report
from .judgments import COMBINE_RULES, DEFAULT_SYSTEM, Combine, Judgments
from .labelmap import BUILTIN_LABEL_MAPS, LabelMap, detect_label_map
from .noise import NoiseTrend, minimum_detectable_change, noise_trend
from .online import OfflineOnline, offline_online, score_metrics
from .planning import export_batch, next_batch, plan_next_round
from .reader import file_rounds, judgments_from_frame, read_judgments
from .trend import Trend, compare_rounds, per_query_dcg, trend

__all__ = [
    "BUILTIN_LABEL_MAPS",
    "AnchorDrift",
    "COMBINE_RULES",
    "DEFAULT_SYSTEM",
    "LABEL_ALIASES",
    "REQUIRED_LABEL_COLUMNS",
    "Combine",
    "JudgeReport",
    "Judgments",
    "LabelChanges",
    "LabelMap",
    "NoiseTrend",
    "OfflineOnline",
    "RawTable",
    "SourceLike",
    "Trend",
    "anchor_drift",
    "compare_rounds",
    "dcg_decomposition",
    "detect_label_map",
    "file_rounds",
    "export_batch",
    "judge_report",
    "judgments_from_frame",
    "label_changes",
    "minimum_detectable_change",
    "next_batch",
    "noise_trend",
    "offline_online",
    "per_query_dcg",
    "plan_next_round",
    "read_anchors",
    "read_judgments",
    "read_table",
    "score_metrics",
    "trend",
]
