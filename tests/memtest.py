"""Assertions and settings shared by test modules (a plain module: `conftest` is shadowed by
tests/providers/conftest.py when the whole suite runs)."""

# the environment every `mem` a test starts runs in: no colour, a fixed width, time zone,
# encoding and locale, and no embedding backend unless a test asks for one
PINNED = {
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "TZ": "UTC",
    "MEM_EMBEDDING_BACKEND": "none",
    "PYTHONIOENCODING": "utf-8",
    "LC_ALL": "C.UTF-8",
}


def assert_clean_failure(result, expected: int) -> str:
    """A failure as docs/architecture.md (Conventions) wants it: the exit code, empty stdout, one `mem: error:` line."""
    code, out, err = result
    assert code == expected, (code, out, err)
    assert out == "", out
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mem: error:"), err
    return lines[0]
