"""Assertions shared by test modules (a plain module: `conftest` is shadowed by
tests/providers/conftest.py when the whole suite runs)."""


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
