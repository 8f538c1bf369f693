import pytest
from fake_provider import serve


@pytest.fixture
def provider():
    """A fake embedding provider on 127.0.0.1 (see fake_provider.py)."""
    state, stop = serve()
    yield state
    stop()
