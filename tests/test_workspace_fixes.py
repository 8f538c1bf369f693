"""Small fixes: every skipped resource named, honest health summary, frontmatter."""

from __future__ import annotations

import json
import os

import memcli


def test_resource_scan_names_every_skipped_file_and_reads_yml(ws, run_mem):
    res = ws / "resource"
    res.mkdir()
    (res / "deploy.yml").write_text("service: billing\nreplicas: 3\n", encoding="utf-8")
    (res / "report.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    (res / "LICENSE").write_text("MIT\n", encoding="utf-8")
    (res / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    os.symlink(res / "deploy.yml", res / "link.yml")
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    skipped = {s["path"]: s["reason"] for s in rep["skipped"]}
    assert skipped["resource/report.pdf"] == "unsupported type (.pdf files are not read)"
    assert skipped["resource/LICENSE"] == "unsupported type (files without a suffix are not read)"
    assert skipped["resource/link.yml"] == "a symbolic link (not followed)"
    assert "binary" in skipped["resource/blob.txt"]
    assert [n["resource"] for n in rep["notes"]] == ["resource/deploy.yml"]
    code, out, err = run_mem("-w", ws, "resource", "scan")
    assert "Skipped resource/report.pdf: unsupported type (.pdf files are not read)" in out


def test_health_counts_warnings_and_an_index_never_built_is_not_healthy(ws, run_mem, note):
    note(ws, "memory/2026-05-18/a.md", "# A\n\nSome fact.\n", name="a", description="A note.")
    code, out, err = run_mem("-w", ws, "health", "--json")
    data = json.loads(out)
    index = next(c for c in data["checks"] if c["name"] == "index")
    assert code == 5 and data["healthy"] is False and index["status"] == "fail"
    assert index["message"] == "never indexed (1 file(s)); run `mem reindex`"
    assert run_mem("-w", ws, "reindex")[0] == 0
    (ws / "memory/2026-05-18/a.md").write_text(
        "---\nname: a\ndescription: A note.\n---\n# A\n\nEdited.\n", encoding="utf-8"
    )
    code, out, err = run_mem("-w", ws, "health")
    assert code == 0 and out.splitlines()[-1] == f"✅ mem {memcli.__version__} - healthy, 1 warning"
    code, out, err = run_mem("-w", ws, "health", "--json")
    assert json.loads(out)["warnings"] == 1


def test_frontmatter_is_read_by_pyyaml_and_written_by_python_frontmatter(monkeypatch):
    import subprocess
    import sys

    import frontmatter.default_handlers as fh

    from memcli.vault import frontmatter

    calls = []
    real_export = fh.YAMLHandler.export
    monkeypatch.setattr(
        fh.YAMLHandler, "export", lambda self, m, **kw: calls.append("export") or real_export(self, m, **kw)
    )
    assert frontmatter.parse("tags: [a, b]\nwhen: 2026-05-18\n") == ({"tags": ["a", "b"], "when": "2026-05-18"}, None)
    assert frontmatter.render({"name": "x", "description": "a: b"}) == "---\ndescription: 'a: b'\nname: x\n---\n"
    assert calls == ["export"]
    # reading a note (every update does) leaves python-frontmatter and its TOML handler unimported
    code = (
        "import sys; from memcli.vault import frontmatter as f; "
        "assert f.parse('a: 1') == ({'a': 1}, None); print(sorted({'frontmatter', 'toml'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
