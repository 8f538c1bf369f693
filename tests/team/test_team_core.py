"""Team memory in-process: the SQL ranking equals the local one, publishing is safe under
concurrency, migrations are numbered, row-level security keeps teams apart, and the MCP
tools see other agents."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

DAY = "memory/2026-05-18"
NOTES = {
    f"{DAY}/db.md": "# Database\n\nWe chose PostgreSQL over MySQL for the billing service.\n",
    f"{DAY}/deploy.md": "# 部署流程\n\n部署流程先跑测试，然后发布到生产环境。\n\n## Rollout\n\nKubernetes rollout of "
    "billing-api INV-20931-QX, handleWebSocketReconnect fixed.\n",
    f"{DAY}/oncall.md": "# Oncall\n\nThe pager rotation changes every Monday; billing outages page twice.\n",
    "MEMORY.md": "# Memory\n\n- prefers PostgreSQL\n- the billing service owns invoices\n",
    "digest/wiki/billing.md": "# Billing\n\nInvoices are generated nightly; billing billing reruns are idempotent.\n",
}
QUERIES = [
    "billing",
    "PostgreSQL invoices",
    "部署流程",
    "生产环境 测试",
    "INV-20931-QX",
    "websocket reconnect",
    "rotation monday",
    "nightly reruns billing",
]


def workspace(open_ws, root, **over):
    from memcli.vault.workspace import open_workspace

    return open_workspace(root.resolve(), dict(os.environ), over) if over else open_ws(root)


def reindex(ws):
    from memcli.jobs import reindex as job

    return job.run(ws)


def search(ws, query, **kw):
    from memcli.jobs import search as job

    return job.run(ws, query, **kw)


def scores(result):
    return [(h.path, h.start_line, h.end_line, round(h.score, 6)) for h in result.hits]


def test_keyword_ranking_equals_the_local_index(agent, open_ws):
    root = agent("alice", NOTES, memory_isolation=True)
    ws = workspace(open_ws, root)
    assert reindex(ws).shared.chunks >= 5
    local = workspace(open_ws, root, **{"shared.backend": "none"})
    for q in QUERIES:
        shared_result, local_result = search(ws, q), search(local, q)
        assert not shared_result.warnings
        assert scores(shared_result) == scores(local_result), q
        assert shared_result.text() == local_result.text(), q  # the same output, links included


def test_hybrid_ranking_matches_the_local_index(agent, open_ws, embedder, monkeypatch):
    monkeypatch.delenv("MEM_EMBEDDING_BACKEND")
    root = agent("alice", NOTES, memory_isolation=True, embedding=embedder)
    ws = workspace(open_ws, root)
    rep = reindex(ws)
    assert rep.embed is not None and rep.shared.chunks >= 5
    local = workspace(open_ws, root, **{"shared.backend": "none"})
    for q in QUERIES:
        a, b = search(ws, q, links=False), search(local, q, links=False)
        assert not a.warnings and a.hybrid == b.hybrid, q
        assert [h.path for h in a.hits] == [h.path for h in b.hits], q
        for x, y in zip(a.hits, b.hits):
            assert x.score == pytest.approx(y.score, abs=2e-3), q  # vectors travel as 5-digit text
            assert (x.vector is None) == (y.vector is None)


def test_definitions_expand_the_team_search_as_the_local_one(agent, open_ws, embedder, monkeypatch):
    """A query no note covers well, close to WordNet's definition of an invoice (the embedder
    here counts shared words): the defined word joins both searches' keyword terms."""
    from memcli.index.keyword.tokenizer import query_terms

    monkeypatch.delenv("MEM_EMBEDDING_BACKEND")
    root = agent("alice", NOTES, memory_isolation=True, embedding=embedder)
    ws = workspace(open_ws, root)
    assert reindex(ws).embed is not None
    local = workspace(open_ws, root, **{"shared.backend": "none"})
    q = "an itemized statement of money owed for the service"  # "service": one word of the query matches
    a, b = search(ws, q, links=False), search(local, q, links=False)
    assert query_terms("invoices")[0] in b.expansion, b.expansion
    assert a.expansion == b.expansion and [h.path for h in a.hits] == [h.path for h in b.hits]
    for x, y in zip(a.hits, b.hits):
        assert x.score == pytest.approx(y.score, abs=2e-3)
    assert b.hits and any(query_terms("invoices")[0] in query_terms(h.text) for h in b.hits), b.hits


def test_other_agents_vectors_are_searched(agent, open_ws, embedder, monkeypatch):
    monkeypatch.delenv("MEM_EMBEDDING_BACKEND")
    a = agent("alice", {f"{DAY}/a.md": "# A\n\nNothing to see here.\n"}, embedding=embedder)
    b = agent("bob", NOTES, embedding=embedder)
    for root in (a, b):
        reindex(workspace(open_ws, root))
    result = search(workspace(open_ws, a), "billing service", mode="vector")
    assert result.hits and all(h.path.startswith("@bob/") and h.vector is not None for h in result.hits)


def test_hnsw_index_serves_the_vector_branch(agent, open_ws, embedder, monkeypatch, pg):
    import psycopg

    from memcli import team
    from memcli.team import schema
    from memcli.team import search as ssearch

    monkeypatch.delenv("MEM_EMBEDDING_BACKEND")
    root = agent("bob", NOTES, embedding=embedder)
    ws = workspace(open_ws, root)
    reindex(ws)
    exact = search(ws, "billing invoices", mode="vector", links=False)
    monkeypatch.setattr(ssearch, "EXACT_MAX", 0)
    approx = search(ws, "billing invoices", mode="vector", links=False)
    assert [h.path for h in approx.hits] == [h.path for h in exact.hits]  # 5 chunks: HNSW is exact here
    space = {"id": ws_space(ws), "dims": 16}
    ask = ssearch.Ask([], [0.1] * 16, space, 30)
    query, args = ssearch.vector_sql(team.target(ws), ask, hnsw=True)
    with psycopg.connect(pg) as conn:
        conn.execute("SET enable_seqscan = off")  # 5 rows: make the planner show it can use the index
        plan = "\n".join(r[0] for r in conn.execute(b"EXPLAIN " + query.as_bytes(conn), args))
    assert schema.index_name("team", space["id"]) in plan


def ws_space(ws) -> str:
    from memcli.index.vectors import vectors

    return vectors.active_space(ws.metadata)["id"]


def test_concurrent_publishers_lose_and_duplicate_nothing(agent, sql):
    """Five agents reindex while searches of two of them publish the same state, and two
    machines publish as one agent (agent0): every agent ends with exactly its local chunks,
    agent0 with one machine's whole state, never a mix."""
    roots = [
        agent(
            f"agent{i}",
            {f"{DAY}/n{j}.md": f"# Note {j}\n\nagent {i} writes note {j} about topic{j}.\n" for j in range(6)},
        )
        for i in range(6)
    ]
    twin = agent("twin", {f"{DAY}/t{j}.md": f"# Twin {j}\n\nthe twin machine\n" for j in range(3)}, agent_id="agent0")
    for rnd in range(2):
        for i, root in enumerate(roots):
            (root / DAY / f"n{rnd}.md").write_text(f"# Note\n\nround {rnd} rewrote agent {i}.\n", encoding="utf-8")
            (root / DAY / f"n{5 - rnd}.md").unlink()
        runs = [(r, "reindex") for r in roots] + [(twin, "reindex")] + [(r, "search") for r in roots[1:3]]
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "memcli", "-w", str(r), cmd, *(["topic1"] * (cmd == "search"))],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for r, cmd in runs
        ]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        for i in range(1, len(roots)):  # each agent's rows are its local index, exactly
            rows = sql("SELECT path, ord, text FROM mem.chunks WHERE agent_id = %s ORDER BY path, ord", f"agent{i}")
            assert [p for p, _, _ in rows] == [f"{DAY}/n{j}.md" for j in range(5 - rnd)]
            assert f"round {rnd} rewrote agent {i}" in rows[rnd][2]
            assert sql("SELECT files, chunks FROM mem.agents WHERE agent_id = %s", f"agent{i}") == [(5 - rnd,) * 2]
        zero = [p for (p,) in sql("SELECT path FROM mem.files WHERE agent_id = 'agent0' ORDER BY path")]
        assert zero in ([f"{DAY}/n{j}.md" for j in range(5 - rnd)], [f"{DAY}/t{j}.md" for j in range(3)])
    assert sql("SELECT count(*) = count(DISTINCT (agent_id, path, ord)) FROM mem.chunks") == [(True,)]


def test_an_older_state_never_overwrites_a_newer_one(agent, open_ws, sql):
    from memcli import team
    from memcli.index import sync
    from memcli.team import db, local, publish

    root = agent("alice", NOTES)
    ws = workspace(open_ws, root)
    reindex(ws)
    old = local.read(ws)  # a slow search read this state...
    (root / DAY / "db.md").write_text("# Database\n\nWe moved to SQLite.\n", encoding="utf-8")
    sync.sync(ws)
    publish.run(ws, team.target(ws))  # ...and a reindex published a newer one meanwhile
    with db.session(team.target(ws)) as conn:
        rep = publish._publish(ws, team.target(ws), conn, old)
    old.close()
    assert rep.skipped and "SQLite" in sql("SELECT text FROM mem.files WHERE path = %s", f"{DAY}/db.md")[0][0]


def test_migrations_are_numbered_and_run_once(pg, sql):
    import psycopg

    from memcli.team import schema

    errors: list[BaseException] = []

    def migrate():
        try:
            with psycopg.connect(pg, autocommit=True) as conn:
                assert schema.migrate(conn) == schema.LATEST
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert [v for v, _ in sql("SELECT version, name FROM mem.schema_migrations ORDER BY version")] == [
        n for n, _, _ in schema.MIGRATIONS
    ]


def test_row_level_security_keeps_teams_apart(agent, cli, pg, sql, embedder):
    """The roles and grants docs/team.md gives: a team role publishes (a new vector space
    included, through mem.ensure_space) and searches its namespace only."""
    alice = agent("alice", NOTES, namespace="red")
    agent_b = agent("bob", {f"{DAY}/b.md": "# B\n\nblue team billing secrets\n"}, namespace="blue")
    for root in (alice, agent_b):
        assert cli(root, "reindex")[0] == 0
    for statement in (
        "CREATE ROLE mem_team_red",
        "GRANT USAGE ON SCHEMA mem TO mem_team_red",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON mem.agents, mem.files, mem.chunks TO mem_team_red",
        "GRANT SELECT ON mem.spaces, mem.schema_migrations TO mem_team_red",
        "CREATE ROLE carol LOGIN IN ROLE mem_team_red",
    ):
        sql(statement)
    carol_dsn = pg.replace("postgres:", "carol:", 1)
    carol = agent(
        "carol", {f"{DAY}/c.md": "# C\n\ncarol's billing note\n"}, namespace="red", dsn=carol_dsn, embedding=embedder
    )
    code, out, err = cli(carol, "reindex")
    assert code == 0 and "Published 1 files" in out, err
    assert sql("SELECT namespace, dims FROM mem.spaces") == [("red", 16)]
    assert sql("SELECT count(*) FROM mem.chunks WHERE agent_id = 'carol' AND embedding IS NOT NULL") == [(1,)]
    code, out, _ = cli(carol, "search", "billing")
    assert "@alice/" in out and "@bob/" not in out and "blue team" not in out
    spy = agent("spy", {f"{DAY}/s.md": "# S\n\nspy billing\n"}, namespace="blue", dsn=carol_dsn)
    code, out, err = cli(spy, "reindex")
    assert code == 0 and "row-level security" in err  # may not write the blue namespace
    code, out, _ = cli(spy, "search", "billing")
    assert "blue team" not in out and "@bob/" not in out


def test_mcp_tools_see_other_agents(agent, open_ws):
    from memcli.mcp.tools import Tools

    a = agent("alice", {f"{DAY}/a.md": "# A\n\nalpha\n"})
    b = agent("bob", NOTES)
    for root in (a, b):
        reindex(workspace(open_ws, root))
    tools = Tools(workspace(open_ws, a))
    text = tools.call("memory_search", {"query": "rotation monday"})
    assert text.startswith(f"========== @bob/{DAY}/oncall.md:1-3") and f"Source: @bob/{DAY}/oncall.md#L1-L3" in text
    assert "pager rotation" in tools.call("memory_get", {"path": f"@bob/{DAY}/oncall.md"})
