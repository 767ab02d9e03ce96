"""The ``workspace`` sub-command: what the team workspace records.

``python -m ireval_core workspace [--url URL] audit [--since DATE] [--verify]`` lists the
audit log (one tab-separated line per write: number, time, who, action, project, target,
detail), or with ``--verify`` checks its hash chain: exit status 0 when it is intact, 1
with the first row changed or removed named on stderr. It reads as
:data:`~ireval_core.workspace.OPERATOR`: whoever holds the database's URL reads the
whole log, in a workspace with members too (the app's people read it by their roles).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

__all__ = ["add_parsers", "run"]


def add_parsers(sub: Any) -> None:
    """Add the ``workspace`` sub-command to ``sub`` (``add_subparsers()``)."""
    ws = sub.add_parser("workspace", help="the team workspace's audit log",
                        description="What the team workspace records.")
    ws.add_argument("--url", default=None, metavar="URL",
                    help="the workspace: a database URL or a SQLite file (default "
                         "$IREVAL_WORKSPACE, else ~/.local/share/ireval/workspace.db)")
    actions = ws.add_subparsers(dest="workspace_command", required=True)
    audit = actions.add_parser(
        "audit", help="list the audit log, or verify its hash chain",
        description="Every write (dataset saved, version added, note, decision, member "
                    "added, role changed, deletion) with who did it and when; each row's "
                    "SHA-256 chains it to the row before.")
    audit.add_argument("--since", default=None, metavar="DATE",
                       help="only rows at or after DATE (ISO 8601, UTC: 2026-11-01 or "
                            "2026-11-01T09:30)")
    audit.add_argument("--verify", action="store_true",
                       help="check the chain instead: exit 0 when intact, 1 naming the "
                            "first row changed or removed")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``workspace audit``; errors propagate (the CLI turns them into exit 2)."""
    from .workspace import OPERATOR, Workspace  # SQLAlchemy: only for this command

    with Workspace.open(args.url) as ws:
        if args.verify:
            check = ws.verify_audit(actor=OPERATOR)
            if check.intact:
                rows_word = "row" if check.rows == 1 else "rows"
                out.write(f"audit log intact: {check.rows} {rows_word} in {ws.url}\n")
                return 0
            sys.stderr.write(f"audit log broken at row {check.broken_row} in {ws.url}: "
                             f"{check.reason}\n")
            return 1
        rows = ws.audit(since=args.since, actor=OPERATOR)
        out.write("row\tat\twho\taction\tproject\ttarget\tdetail\n")
        for e in rows:
            out.write(f"{e.id}\t{e.at}\t{_one_line(e.who)}\t{e.action}\t"
                      f"{_one_line(e.project)}\t{_one_line(e.target)}\t{_one_line(e.detail)}\n")
    return 0


def _one_line(text: str) -> str:
    """``text`` on one line of a tab-separated table (tabs and line breaks as spaces)."""
    return " ".join(text.replace("\t", " ").splitlines())
