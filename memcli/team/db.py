"""Connections to the shared index: the one place psycopg is imported.

Connections are autocommit; every unit of work is an explicit transaction. A search
runs within `shared.search_timeout` seconds in all (connection included): it runs in a
daemon thread the caller stops waiting for, because libpq's connect_timeout cannot go
below 2 seconds and a half-open TCP connection would otherwise hang the search. Every
message that leaves here is scrubbed of the DSN's password.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, TypeVar

from memcli.team import Target, Unavailable

T = TypeVar("T")
INSTALL_HINT = "pip install 'memcli[postgres]'"
_IDLE: dict[str, Any] = {}  # dsn -> an open connection a long-lived process (mem mcp) reuses
_IDLE_LOCK = threading.Lock()


def driver():
    """The psycopg module, or Unavailable when the `postgres` extra is not installed."""
    try:
        import psycopg
    except ImportError:
        raise Unavailable("the shared index needs psycopg, which is not installed", INSTALL_HINT) from None
    # psycopg logs what it ignores while closing a pipeline a refused row aborted ("error ignored
    # terminating <Pipeline>"); with no handler Python prints that on stderr. The refusal itself is
    # reported by publish, once and scrubbed, so the library's own line is noise to a user.
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    return psycopg


def connect(t: Target, timeout: float | None = None):
    """A new autocommit connection; Unavailable (scrubbed) when it cannot be made."""
    psycopg = driver()
    seconds = max(2, math.ceil(timeout if timeout is not None else t.timeout))  # libpq's minimum is 2
    try:
        return psycopg.connect(t.dsn, autocommit=True, connect_timeout=seconds, application_name="mem")
    except psycopg.Error as exc:
        raise failure(t, exc) from None
    except ValueError as exc:  # psycopg's own check of a malformed conninfo string
        raise Unavailable(t.scrub(f"invalid shared.dsn: {exc}"), "fix shared.dsn or MEM_SHARED_DSN") from None


def failure(t: Target, exc: BaseException) -> Unavailable:
    """A database error as one scrubbed line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return Unavailable(t.scrub(f"shared index unavailable: {text[:300]}"))


def reason(t: Target, exc: BaseException) -> str:
    """Why the database refused a row, as one scrubbed line: its primary message, without
    the parameters it may quote."""
    diag = getattr(exc, "diag", None)
    text = " ".join(str(getattr(diag, "message_primary", None) or exc).split()) or type(exc).__name__
    return t.scrub(text[:300])


@contextmanager
def session(t: Target, timeout: float | None = None):
    """A connection, reused between calls of one process; closed instead when anything failed."""
    psycopg = driver()
    with _IDLE_LOCK:
        conn = _IDLE.pop(t.dsn, None)
    if conn is None or conn.closed:
        conn = connect(t, timeout)
    try:
        yield conn
    except psycopg.Error as exc:
        conn.close()
        raise failure(t, exc) from None
    except BaseException:
        conn.close()
        raise
    with _IDLE_LOCK:
        old = _IDLE.pop(t.dsn, None)
        _IDLE[t.dsn] = conn
    if old is not None:
        old.close()


def within(seconds: float, work: Callable[[], T], what: str = "the shared index") -> T:
    """work() if it finishes within `seconds`, else Unavailable; the thread is left to end
    on its own (a late publish still commits or rolls back whole)."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            box["error"] = exc

    thread = threading.Thread(target=run, name="mem-shared", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise Unavailable(f"{what} did not answer within {seconds:g}s (shared.search_timeout)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def local_settings(conn, **values) -> None:
    """SET LOCAL of each setting for the current transaction (parameters cannot go in SET)."""
    for name, value in values.items():
        conn.execute("SELECT set_config(%s, %s, true)", (name.replace("__", "."), str(value)))
