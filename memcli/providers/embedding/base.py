"""The embedder interface and the helpers every backend shares.

An Embedder turns texts into L2-normalised float32 rows. Its `identity`
(`backend:model:dims:endpoint`) is recorded next to the vectors it produced, so
vectors from another model or server are detected instead of mixed.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memcli.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np

# Truncation budget (ReMe 0.4.1+ style): max_input_length is an approximate character
# budget; a wide character (CJK, kana, hangul, full-width forms, most emoji) costs
# WIDE_UNITS because such text is token-dense, and SAFETY_MARGIN of the budget is kept free.
WIDE_UNITS = 3
SAFETY_MARGIN = 0.1


@runtime_checkable
class Embedder(Protocol):
    """What the vector branch needs from an embedding backend."""

    backend: str
    model: str
    dims: int
    endpoint: str

    @property
    def identity(self) -> str:
        """backend:model:dims:endpoint, what the vectors of this embedder are stored under."""
        ...

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dims), rows L2-normalised; raises ProviderError."""
        ...

    def close(self) -> None:
        """Release connections or model sessions; the embedder may be used again afterwards."""
        ...


def vector_space_id(backend: str, model: str, dims: int, endpoint: str) -> str:
    """The 12-hex-digit id of the space vectors from this backend live in (file names carry it)."""
    raw = "\x1f".join([backend, model, str(dims), endpoint])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]


def char_units(ch: str) -> int:
    """Budget units of one character: WIDE_UNITS for wide/full-width characters, else 1."""
    return WIDE_UNITS if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_units(text: str) -> int:
    """Budget units of `text` (see char_units)."""
    if text.isascii():
        return len(text)
    return sum(map(char_units, text))


def truncate(text: str, max_input_length: int) -> str:
    """The longest prefix of `text` that fits the budget; max_input_length <= 0 means no limit.

    The budget is max_input_length minus the safety margin, counted in units where
    a CJK/full-width character costs WIDE_UNITS. It stays an approximation of the
    model's tokens, so a small-context model still needs a smaller max_input_length.
    """
    if max_input_length <= 0:
        return text
    budget = max(1, math.floor(max_input_length * (1 - SAFETY_MARGIN)))
    if len(text) * WIDE_UNITS <= budget or text_units(text) <= budget:
        return text
    used = 0
    for i, ch in enumerate(text):
        used += char_units(ch)
        if used > budget:
            return text[:i]
    return text  # pragma: no cover - text_units said it does not fit


def batches(items: Sequence[str], size: int) -> list[list[str]]:
    """`items` in consecutive batches of at most `size` (size < 1 counts as 1)."""
    size = max(1, int(size))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def check_vectors(vectors: Any, count: int, dims: int) -> np.ndarray:
    """Validate a provider's answer for `count` texts and return normalised float32 rows.

    A wrong count or a wrong dimension is a ProviderError naming both numbers
    (actual != expected), as the health check reports it.
    """
    import numpy as np

    try:
        rows = list(vectors)
    except TypeError:
        raise ProviderError(f"embedding response is not a list of vectors: {type(vectors).__name__}") from None
    if len(rows) != count:
        raise ProviderError(
            f"embedding count mismatch: {len(rows)} != {count}",
            "the provider answered a different number of vectors than texts sent",
        )
    for row in rows:
        n = len(row) if hasattr(row, "__len__") else -1
        if n != dims:
            raise ProviderError(
                f"embedding dimension mismatch: {n} != {dims}",
                f"set embedding_model_config.dimensions to {n}, or use_dimensions: true "
                "if the model can shorten its vectors",
            )
    try:
        arr = np.asarray(rows, dtype=np.float32).reshape(count, dims)
    except (TypeError, ValueError):
        raise ProviderError("embedding response holds values that are not numbers") from None
    if not np.isfinite(arr).all():
        raise ProviderError("embedding response holds NaN or infinite values")
    return normalize(arr)


def normalize(arr: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (an all-zero row stays zero)."""
    import numpy as np

    arr = np.asarray(arr, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return (arr / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


class BaseEmbedder(ABC):
    """Shared behaviour: truncation, batching, checks. Subclasses implement `_embed`."""

    backend = ""

    def __init__(self, *, model: str, dims: int, endpoint: str, max_input_length: int = 0, max_batch_size: int = 10):
        self.model = model
        self.dims = int(dims)
        self.endpoint = endpoint
        self.max_input_length = int(max_input_length)
        self.max_batch_size = max(1, int(max_batch_size))

    @property
    def identity(self) -> str:
        return f"{self.backend}:{self.model}:{self.dims}:{self.endpoint}"

    @property
    def space_id(self) -> str:
        return vector_space_id(self.backend, self.model, self.dims, self.endpoint)

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed_batch takes a list of texts, not one string")
        texts = [truncate(t, self.max_input_length) for t in texts]
        parts = [
            check_vectors(self._embed(batch), len(batch), self.dims) for batch in batches(texts, self.max_batch_size)
        ]
        if not parts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    @abstractmethod
    def _embed(self, texts: list[str]) -> Sequence[Sequence[float]] | np.ndarray:
        """Vectors for one batch (each backend's own request)."""

    def close(self) -> None:  # noqa: B027 - most backends hold nothing to release
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identity}>"


def ordered(items: list, key: str) -> list:
    """Provider items sorted by their `key` index field when every item has one."""
    if items and all(isinstance(it, dict) and isinstance(it.get(key), int) for it in items):
        return sorted(items, key=lambda it: it[key])
    return items
