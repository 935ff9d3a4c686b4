"""Opt-in rerankers: re-order the top passages of the fused order with a cross-encoder.

Configured in ``.kenning/config.yaml`` like the embedders (off unless configured)::

    rerank:
      provider: http        # none (default) | http | tei | sentence-transformers
      url: http://127.0.0.1:8080/v1   # the API base; Kenning POSTs to {url}/rerank
      model: bge-reranker-v2-m3       # sent when set (Cohere and Jina need it)
      api_key_env: JINA_API_KEY       # the key is read from this variable, never stored
      top_n: 50             # how many passages of the fused order are reranked
      timeout: 0.5          # seconds for the whole call; over it, the fused order stands

``http`` speaks the common shape (llama.cpp, vLLM, LocalAI, Jina, Cohere):
``{model, query, documents, top_n}`` → ``{results: [{index, relevance_score}]}``. ``tei`` speaks
Hugging Face text-embeddings-inference: ``{query, texts, truncate}`` → ``[{index, score}]``.
``sentence-transformers`` loads a cross-encoder from a model directory (``path``) with
``local_files_only``; it never downloads.

A reranker either returns one finite score for every passage or fails with
:class:`RerankUnavailable`; search then keeps the fused order and says why in its notes. The
order a server lists its results in is never trusted: passages are ranked by their scores.
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kenning.errors import KenningError

if TYPE_CHECKING:
    from kenning.index.store.base import Store

PROVIDERS = ("none", "http", "tei", "sentence-transformers")
CONFIG_FILE = ".kenning/config.yaml"
MAX_PASSAGE_CHARS = 2000  # a cross-encoder reads ~512 tokens; more only costs transfer time
_KNOWN = ("provider", "url", "model", "api_key_env", "path", "top_n", "timeout", "batch_size")


class RerankUnavailable(KenningError):
    """The reranker cannot score these passages; search keeps the fused order."""

    def __init__(self, message: str, fix: str) -> None:
        self.fix = fix
        super().__init__(message)


class Reranker(Protocol):
    """What search needs from a reranker."""

    model_id: str
    top_n: int
    timeout: float

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """One finite relevance score per passage, in passage order (higher is better)."""
        ...


@dataclass(frozen=True)
class RerankConfig:
    """The ``rerank`` section of the vault config."""

    provider: str = "none"
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    path: str | None = None
    top_n: int = 50
    timeout: float | None = None  # None: 0.5 s over HTTP, 5 s for a local model
    batch_size: int = 16

    @classmethod
    def from_raw(cls, raw: Any) -> RerankConfig:
        """Read and validate the config section; errors name the field."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise KenningError("config field 'rerank' must be a mapping", field="rerank")
        provider = str(raw.get("provider", "none")).strip().lower()
        if provider not in PROVIDERS:
            raise KenningError(f"config field 'rerank.provider' is {provider!r}; allowed: "
                               + ", ".join(PROVIDERS), field="rerank.provider")
        unknown = sorted(set(raw) - set(_KNOWN))
        if unknown:
            raise KenningError(f"unknown config field(s) rerank.{', rerank.'.join(unknown)}"
                               f"; allowed: {', '.join(sorted(_KNOWN))}", field="rerank")
        top_n = _number(raw, "top_n", 50, int)
        if top_n < 1:
            raise KenningError(f"config field 'rerank.top_n' is {top_n}; it must be ≥ 1",
                               field="rerank.top_n")
        timeout = _number(raw, "timeout", None, float)
        if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
            raise KenningError(f"config field 'rerank.timeout' is {raw['timeout']!r}; it must "
                               "be a number of seconds > 0", field="rerank.timeout")
        return cls(provider=provider, url=_opt_str(raw.get("url")),
                   model=_opt_str(raw.get("model")), api_key_env=_opt_str(raw.get("api_key_env")),
                   path=_opt_str(raw.get("path")), top_n=top_n, timeout=timeout,
                   batch_size=max(1, _number(raw, "batch_size", 16, int)))


def _number(raw: dict[str, Any], name: str, default: Any, kind: type) -> Any:
    value = raw.get(name)
    if value is None or value == "":
        return default
    try:
        if isinstance(value, bool):
            raise ValueError
        return kind(value)
    except (TypeError, ValueError):
        raise KenningError(f"config field 'rerank.{name}' is {value!r}; it must be a number",
                           field=f"rerank.{name}") from None


def _opt_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def load_reranker(config: RerankConfig) -> Reranker | None:
    """The configured reranker, None when none is configured, or RerankUnavailable."""
    if config.provider == "none":
        return None
    if config.provider == "sentence-transformers":
        return CrossEncoderDir(config)
    return HTTPReranker(config)


# -- HTTP ------------------------------------------------------------------------------------------


class HTTPReranker:
    """A rerank endpoint: the common ``results``/``relevance_score`` shape, or TEI's."""

    def __init__(self, config: RerankConfig) -> None:
        from kenning.index.embedders_remote import local_opener

        if not config.url:
            raise RerankUnavailable(
                f"config field 'rerank.url' is missing (provider {config.provider} needs the "
                "API base, e.g. http://127.0.0.1:8080/v1)", f"set rerank.url in {CONFIG_FILE}")
        parts = urllib.parse.urlsplit(config.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise RerankUnavailable(
                f"config field 'rerank.url' is {config.url!r}; it must start with http:// or "
                "https://", f"fix rerank.url in {CONFIG_FILE}, e.g. http://127.0.0.1:8080/v1")
        if "@" in parts.netloc:
            raise RerankUnavailable(
                "config field 'rerank.url' holds credentials (user:password@); Kenning does not "
                "keep keys or passwords in its config",
                "remove them and name the key's environment variable in rerank.api_key_env")
        self.shape = config.provider
        base = config.url.rstrip("/")
        self.endpoint = base if base.endswith("/rerank") else base + "/rerank"
        self.model = config.model
        self.api_key_env = config.api_key_env
        self.top_n = config.top_n
        self.timeout = config.timeout if config.timeout is not None else 0.5
        self.model_id = f"{self.shape}:{self.model or 'default'}@{base}"
        if self.api_key_env:
            self._key()  # fail now, not on the first search, when the variable is unset
        self._opener = local_opener(base)

    def __repr__(self) -> str:
        return f"HTTPReranker({self.model_id!r})"

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise RerankUnavailable(
                f"config field 'rerank.api_key_env' names the environment variable "
                f"{self.api_key_env}, which is not set",
                f"export {self.api_key_env}=<your key>, or remove rerank.api_key_env")
        return key

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """Ask the endpoint once (no retry: the time budget is short); validate every score."""
        if self.shape == "tei":
            body: dict[str, Any] = {"query": query, "texts": list(passages), "truncate": True}
        else:
            body = {"query": query, "documents": list(passages), "top_n": len(passages)}
            if self.model:
                body["model"] = self.model
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.endpoint, data=json.dumps(body).encode("utf-8"),
                                         headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            from kenning.index.embedders_remote import _error_detail

            detail = _error_detail(exc)
            raise RerankUnavailable(
                f"the reranker at {self.endpoint} answered HTTP {exc.code}"
                + (f": {detail}" if detail else ""),
                f"check rerank.url and rerank.model in {CONFIG_FILE} and the server's log",
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise self._unreachable(getattr(exc, "reason", exc)) from None
        except Exception as exc:  # http.client's bad status lines and the like
            raise self._unreachable(exc) from None
        return self._parse(payload, len(passages))

    def _unreachable(self, reason: Any) -> RerankUnavailable:
        from kenning.index.embedders_remote import _one_line

        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            return _too_slow(self.endpoint, self.timeout)
        what = ("connection refused" if isinstance(reason, ConnectionRefusedError)
                else _one_line(str(getattr(reason, "strerror", None) or reason)))
        return RerankUnavailable(f"cannot reach the reranker at {self.endpoint}: {what}",
                                 f"start the server, or fix rerank.url in {CONFIG_FILE}")

    def _parse(self, payload: bytes, n: int) -> list[float]:
        from kenning.index.embedders_remote import _one_line

        expected = ('{"results": [{"index": i, "relevance_score": x}, ...]}'
                    if self.shape == "http" else '[{"index": i, "score": x}, ...]')

        def bad(what: str) -> RerankUnavailable:
            return RerankUnavailable(
                f"the reranker at {self.endpoint} returned {what}; expected {expected}",
                f"check that rerank.provider ({self.shape}) matches the server's API in "
                f"{CONFIG_FILE}")

        try:
            doc = json.loads(payload)
        except (UnicodeDecodeError, ValueError):
            raise bad(f"something that is not JSON ({_one_line(repr(payload[:60]))})") from None
        if self.shape == "tei":
            items, field = doc, "score"
        else:
            items = doc.get("results") if isinstance(doc, dict) else None
            field = "relevance_score"
        if not isinstance(items, list):
            raise bad("JSON of another shape")
        if len(items) != n:
            raise bad(f"{len(items)} scores for {n} passages")
        scores: list[float | None] = [None] * n
        for position, item in enumerate(items):
            index = item.get("index") if isinstance(item, dict) else None
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
                raise bad(f"a missing or out-of-range 'index' at item {position}")
            if scores[index] is not None:
                raise bad(f"the index {index} twice")
            score = item.get(field)
            if isinstance(score, bool) or not isinstance(score, int | float) \
                    or not math.isfinite(score):
                raise bad(f"a score that is not a finite number ({_one_line(repr(score), 40)}) "
                          f"at item {position}")
            scores[index] = float(score)
        return [s for s in scores if s is not None]


def _too_slow(where: str, timeout: float) -> RerankUnavailable:
    return RerankUnavailable(
        f"the reranker at {where} did not answer within {timeout:g} s",
        f"check the server, or raise rerank.timeout (or lower rerank.top_n) in {CONFIG_FILE}")


# -- local cross-encoder ---------------------------------------------------------------------------


class CrossEncoderDir:
    """A sentence-transformers cross-encoder in a model directory on disk; never downloads."""

    def __init__(self, config: RerankConfig) -> None:
        from kenning.index.embedders_remote import _one_line

        if not config.path:
            raise RerankUnavailable(
                "config field 'rerank.path' is missing (provider sentence-transformers needs a "
                "local cross-encoder directory)", f"set rerank.path in {CONFIG_FILE}")
        path = Path(config.path).expanduser().resolve()
        if not path.is_dir():
            raise RerankUnavailable(f"rerank.path {path} does not exist or is not a directory",
                                    f"fix rerank.path in {CONFIG_FILE}")
        if not (path / "config.json").is_file():
            raise RerankUnavailable(
                f"rerank.path {path} is not a model directory (it has no config.json)",
                f"point rerank.path in {CONFIG_FILE} at the folder that holds config.json")
        from kenning.index.embedders_remote import sentence_transformers

        CrossEncoder = sentence_transformers(RerankUnavailable, "reranker").CrossEncoder
        try:
            self._model = CrossEncoder(str(path), local_files_only=True)
        except Exception as exc:
            raise RerankUnavailable(
                f"cannot load the cross-encoder at {path}: {type(exc).__name__}: "
                f"{_one_line(str(exc))}", f"check that {path} holds a complete model") from None
        self.path = path
        self.top_n = config.top_n
        self.timeout = config.timeout if config.timeout is not None else 5.0
        self.batch_size = config.batch_size
        self.model_id = f"sentence-transformers:{path}"

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """Score (query, passage) pairs with the model."""
        out = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                  show_progress_bar=False)
        values = [float(v) for v in list(out)]
        if len(values) != len(passages) or not all(math.isfinite(v) for v in values):
            raise RerankUnavailable(f"the cross-encoder at {self.path} gave unusable scores",
                                    f"check the model at {self.path}")
        return values


# -- the hook search calls -------------------------------------------------------------------------

_pool: ThreadPoolExecutor | None = None


def _worker() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-rerank")
    return _pool


def rerank_fused(store: Store, query: str, fused: dict[int, dict[str, float]],
                 reranker: Reranker) -> list[str]:
    """Re-order the top ``top_n`` chunks of the fused order by the reranker; notes on failure.

    The pool is the same whatever ``--limit`` is. On success the rerank scores are mapped
    linearly onto the pool's range of fused scores (the reranked first gets the pool's best
    fused score, the last its lowest): the scale the page signals multiply stays the mode's own,
    a clear lead by the reranker stays a clear lead, and chunks outside the pool stay below. Each
    pooled chunk keeps its ``rerank`` score and ``rerank_rank`` for ``--explain``. On any failure
    ``fused`` is left exactly as it was.
    """
    if not fused or not query.strip():
        return []
    pool = sorted(fused, key=lambda c: (-fused[c]["score"], c))[: reranker.top_n]
    texts = _passage_texts(store, pool)
    passages = [texts.get(c, "") for c in pool]
    future = _worker().submit(reranker.scores, query[:MAX_PASSAGE_CHARS], passages)
    try:
        scores = future.result(timeout=reranker.timeout + 0.05)
    except FutureTimeout:
        exc: RerankUnavailable = _too_slow(getattr(reranker, "endpoint", reranker.model_id),
                                           reranker.timeout)
        return [f"{exc.message}: results are in fused order, not reranked (fix: {exc.fix})"]
    except RerankUnavailable as exc:
        return [f"{exc.message}: results are in fused order, not reranked (fix: {exc.fix})"]
    except Exception as exc:  # a local model can fail in many ways; never a traceback here
        return [f"the reranker {reranker.model_id} failed ({type(exc).__name__}: "
                f"{str(exc)[:120]}): results are in fused order, not reranked"]
    if len(scores) != len(pool) or not all(math.isfinite(s) for s in scores):
        return [f"the reranker {reranker.model_id} gave unusable scores: results are in fused "
                "order, not reranked"]
    high, low = fused[pool[0]]["score"], fused[pool[-1]]["score"]
    top, bottom = max(scores), min(scores)
    by_rerank = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
    for rank, i in enumerate(by_rerank, 1):
        parts = fused[pool[i]]
        parts["fused"] = parts["score"]
        if top > bottom:  # all scores equal say nothing: the fused order stands
            parts["score"] = low + (high - low) * (scores[i] - bottom) / (top - bottom)
        parts["rerank"] = scores[i]
        parts["rerank_rank"] = rank
    return []


def probe(reranker: Reranker) -> None:
    """Score two short passages within the time budget, or raise RerankUnavailable."""
    passages = ["Kenning keeps notes as Markdown pages.", "The weather was mild."]
    future = _worker().submit(reranker.scores, "where are notes kept", passages)
    try:
        future.result(timeout=reranker.timeout + 0.05)
    except FutureTimeout:
        raise _too_slow(getattr(reranker, "endpoint", reranker.model_id),
                        reranker.timeout) from None
    except RerankUnavailable:
        raise
    except Exception as exc:
        raise RerankUnavailable(f"the reranker {reranker.model_id} failed: "
                                f"{type(exc).__name__}: {str(exc)[:120]}",
                                "check the model and its dependencies") from None


def _passage_texts(store: Store, chunk_ids: list[int]) -> dict[int, str]:
    """Each chunk's page title and text, as the reranker reads it (frontmatter left out)."""
    from kenning.index.queries import recall as recall_sql

    rows = recall_sql.passage_texts(store, chunk_ids)
    out = {}
    for chunk_id, title, body in rows:
        body = _strip_frontmatter(body or "")
        out[chunk_id] = f"{title}\n{body}"[:MAX_PASSAGE_CHARS] if title else body[
            :MAX_PASSAGE_CHARS]
    return out


def _strip_frontmatter(body: str) -> str:
    if body.startswith("---\n"):
        end = body.find("\n---", 4)
        if end != -1:
            return body[end + 4:].lstrip("\n")
    return body
