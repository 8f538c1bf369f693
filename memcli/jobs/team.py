"""The jobs' side of team memory (memcli.team): publish after a sync, get, health.

Searching the shared index is a searcher beside the local one (memcli.jobs.searchers.team).
Every hook here turns a database problem into one warning: the local index and the
Markdown are never touched by a failure, and the next sync publishes what was missed.
"""

from __future__ import annotations

from memcli.errors import BadInput
from memcli.jobs.check import FAIL, OK, WARN, Check
from memcli.vault.workspace import Workspace


def publish(ws: Workspace, warnings: list[str]):
    """Publish after a sync of the local index; memcli.team.publish.Published, or None
    when team memory is off, the workspace is empty or the database cannot be reached."""
    from memcli import team

    t = team.target(ws)
    if t is None:
        return None
    from memcli.team import publish as pub

    try:
        rep = pub.run(ws, t)
    except team.Unavailable as exc:
        warnings.append(f"{exc.line()}; this workspace is published by the next sync")
    except OSError as exc:
        warnings.append(f"shared index not updated ({exc.strerror or exc}); the next sync retries")
    else:
        if rep is not None:
            warnings.extend(refused(rep.failed))
        return rep
    return None


def refused(failed: list[tuple[str, str]], shown: int = 5) -> list[str]:
    """A warning line per file the database refused (the first few), each naming it."""
    out = [f"shared index: {path} not published ({why}); the other files were" for path, why in failed[:shown]]
    if len(failed) > shown:
        out.append(f"shared index: {len(failed) - shown} more file(s) not published; `mem health` lists them")
    return out


def publish_if_changed(ws: Workspace, t, conn, warnings: list[str]) -> None:
    """The search's sync may have changed the local index: publish it first (unless the
    marker says this state is there already)."""
    from memcli import team
    from memcli.team import publish as pub

    try:
        rep = pub.run(ws, t, conn, if_changed=True)
    except team.Unavailable as exc:  # e.g. a newer schema: searching it still works
        warnings.append(f"{exc.line()}; this workspace is published by the next sync")
        return
    if rep is not None and rep.stale:
        warnings.append(f"{len(rep.stale)} file(s) changed while publishing; the next sync sends them")
    if rep is not None and rep.failed:
        warnings.extend(refused(rep.failed, shown=1))


def read(ws: Workspace, ref: str) -> tuple[str, str | None]:
    """`mem get @<agent_id>/<path>`: (`@<agent_id>/<path>`, the file's text as the shared index
    stores it) for another agent's file; (path, None) for this agent's own, which is read
    from its Markdown (the truth)."""
    from memcli import team
    from memcli.team import status

    parsed = team.parse_ref(ref)
    t = team.target(ws)
    if parsed is None:
        raise BadInput(f"{ref.strip()!r} is not of the form @<agent_id>/<path>")
    if t is None:
        raise BadInput(
            f"{ref.strip()} names another agent's file, but team memory is off",
            "configure `shared` in mem.yaml (docs/team.md)",
        )
    agent, path = parsed
    if agent == t.agent_id:
        return path, None
    return f"@{agent}/{path}", status.read_file(t, agent, path)


def health_check(ws: Workspace):
    """The `shared` check of `mem health` (None when team memory is off)."""
    from memcli import team

    t = team.target(ws)
    if t is None:
        return None
    from memcli.team import status as stmod

    st = stmod.check(ws, t)
    last = _last_failure(ws, t, st.figures)
    if not st.reachable:
        return Check("shared", WARN, f"{st.message}; searches answer from the local index", st.figures)
    if st.newer_schema:
        return Check("shared", FAIL, f"schema {st.figures['schema']} is newer than this mem knows", st.figures)
    if st.message or st.behind or last:
        why = st.message or (
            f"{st.behind} file(s) not published as they are locally; `mem reindex` publishes them" if st.behind else ""
        )
        return Check("shared", WARN, "; ".join(w for w in (last, why) if w), st.figures)
    return Check("shared", OK, f"{t.where} as {t.agent_id}", st.figures)


def _last_failure(ws: Workspace, t, figures: dict) -> str:
    """What the last publish could not do (memcli.team.failures), into `figures`; "" if nothing."""
    from memcli.team import failures
    from memcli.team.publish import target_key

    doc = failures.load(ws, target_key(t))
    if doc is None:
        return ""
    files = [f for f in doc["files"] if isinstance(f, dict) and "path" in f and "reason" in f]
    first = files[0] if files else {"path": None, "reason": str(doc.get("error") or "")}
    figures["last_publish_error"] = {
        "at": doc.get("at"),
        "path": first["path"],
        "reason": first["reason"],
        "failed": doc.get("failed", len(files)),
    }
    if files:
        figures["publish_errors"] = files
        n = figures["last_publish_error"]["failed"]
        return (
            f"the last publish left out {n} file(s) the database refused (e.g. {first['path']}: "
            f"{first['reason']}); fix them, then `mem reindex`"
        )
    return f"the last publish failed ({first['reason']}); `mem reindex` tries again"
