"""Opt-in rerankers (issue 13, item 6), against a scripted rerank server on loopback.

The server speaks the common shape (``{query, documents, top_n}`` → ``{results: [{index,
relevance_score}]}``) and TEI's (``{query, texts}`` → ``[{index, score}]``), and misbehaves on
request: fewer scores, duplicate or out-of-range indexes, NaN, HTML error pages, non-JSON, hangs.
Every misbehaviour must leave the fused order exactly as it is without a reranker, with a note;
a good answer must re-order by score whatever order the server lists its results in.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp import ENV, KENNING, data

from kenning.answers import result_path
from kenning.api import Vault
from kenning.errors import KenningError
from kenning.recall.rerank import RerankConfig

NOTES = {
    # Lexically "budget" ranks Alpha, then Beta, then Gamma; the reranker prefers Gamma.
    "Alpha plan": "The budget, the budget, the budget and the budget again.\n",
    "Beta plan": "A budget and a second budget line.\n",
    "Gamma plan": "Our budget answer: the relevant relevant relevant figure is 40,000 EUR.\n",
}


class RerankServer:
    """A loopback rerank server; ``behaviour`` says how it answers the next requests."""

    def __init__(self) -> None:
        self.behaviour = "good"
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                server.requests.append({"path": self.path, "body": body})
                server.answer(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that gave up
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    @staticmethod
    def send(h: BaseHTTPRequestHandler, status: int, data: bytes,
             kind: str = "application/json") -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", kind)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass

    def answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        tei = "texts" in body
        docs = body["texts"] if tei else body["documents"]
        scores = [doc.count("relevant") + 0.01 * i for i, doc in enumerate(docs)]
        key = "score" if tei else "relevance_score"
        items: list[dict[str, Any]] = [{"index": i, key: s} for i, s in enumerate(scores)]
        items.sort(key=lambda item: -item[key])  # the servers list best first
        how = self.behaviour
        if how == "ascending":  # listed worst first: the scores, not the listing, decide
            items.reverse()
        elif how == "fewer":
            items = items[:-1]
        elif how == "duplicate":
            items[-1] = {**items[-1], "index": items[0]["index"]}
        elif how == "out-of-range":
            items[0] = {**items[0], "index": len(docs) + 3}
        elif how == "nan":
            items[0] = {**items[0], key: float("nan")}
        elif how == "inf":
            items[0] = {**items[0], key: float("inf")}
        elif how == "string-score":
            items[0] = {**items[0], key: "high"}
        elif how == "html-200":
            return self.send(h, 200, b"<html><body>Welcome to nginx</body></html>", "text/html")
        elif how == "html-502":
            return self.send(h, 502, b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                             "text/html")
        elif how == "not-json":
            return self.send(h, 200, b"ok\n", "text/plain")
        elif how == "hang":
            time.sleep(5)
        payload = items if tei else {"model": body.get("model"), "results": items}
        self.send(h, 200, json.dumps(payload).encode())

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[RerankServer]:
    s = RerankServer()
    yield s
    s.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    v, _ = Vault.init(tmp_path / "v")
    for title, text in NOTES.items():
        (v.root / "notes").mkdir(exist_ok=True)
        (v.root / "notes" / f"{title}.md").write_text(f"# {title}\n\n{text}", encoding="utf-8")
    v.index(embed=False)
    v.close()
    return v.root


def configure(root: Path, **rerank: Any) -> None:
    """Append a ``rerank:`` section to the vault config (replacing an earlier one)."""
    config = root / ".kenning" / "config.yaml"
    text = config.read_text(encoding="utf-8").split("\nrerank:\n")[0]
    lines = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in rerank.items())
    config.write_text(f"{text.rstrip()}\nrerank:\n{lines}", encoding="utf-8")


def titles(root: Path, query: str = "budget", **kw: Any) -> tuple[list[str], list[str], Any]:
    with Vault.open(root) as v:
        results = v.search(query, **{"mode": "lexical", **kw})
        return [r.title for r in results], list(results.notes), results


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    monkeypatch.delenv("KENNING_RERANK", raising=False)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=60)


def test_the_default_is_no_reranker(root: Path, server: RerankServer) -> None:
    fused, notes, _ = titles(root)
    assert fused[0] == "Alpha plan" and fused[-1] == "Gamma plan"
    assert notes == []
    assert server.requests == []


@pytest.mark.parametrize("shape", ["http", "tei"])
def test_each_shape_reranks_the_fused_order(root: Path, server: RerankServer,
                                            shape: str) -> None:
    fused, _, _ = titles(root)
    configure(root, provider=shape, url=server.url, model="bge-reranker-v2-m3", timeout=5)
    ranked, notes, results = titles(root, explain=True)
    assert notes == []
    assert ranked[0] == "Gamma plan" and sorted(ranked) == sorted(fused)
    assert results[0].explain["rerank"] == pytest.approx(3.0, abs=0.05)
    assert results[0].explain["rerank_rank"] == 1
    (request,) = server.requests
    assert request["path"] == "/v1/rerank"
    body = request["body"]
    assert body["query"] == "budget"
    if shape == "tei":
        assert set(body) == {"query", "texts", "truncate"} and len(body["texts"]) == 3
    else:
        assert body["model"] == "bge-reranker-v2-m3" and body["top_n"] == len(body["documents"])
        assert any("Gamma plan" in d and "40,000" in d for d in body["documents"])


def test_listing_order_is_not_trusted_scores_are(root: Path, server: RerankServer) -> None:
    configure(root, provider="http", url=server.url, timeout=5)
    server.behaviour = "ascending"
    ranked, notes, _ = titles(root)
    assert notes == [] and ranked[0] == "Gamma plan"


@pytest.mark.parametrize(("behaviour", "said"), [
    ("fewer", "2 scores for 3 passages"),
    ("duplicate", "twice"),
    ("out-of-range", "out-of-range 'index'"),
    ("nan", "not a finite number"),
    ("inf", "not a finite number"),
    ("string-score", "not a finite number"),
    ("html-200", "not JSON"),
    ("html-502", "HTTP 502"),
    ("not-json", "not JSON"),
    ("hang", "did not answer within 0.3 s"),
])
@pytest.mark.parametrize("shape", ["http", "tei"])
def test_a_bad_answer_keeps_the_fused_order_with_a_note(root: Path, server: RerankServer,
                                                        behaviour: str, said: str,
                                                        shape: str) -> None:
    fused, _, _ = titles(root)
    configure(root, provider=shape, url=server.url, timeout=0.3)
    server.behaviour = behaviour
    ranked, notes, results = titles(root, explain=True)
    assert ranked == fused
    assert all("rerank" not in r.explain for r in results)
    assert len(notes) == 1 and said in notes[0] and "not reranked" in notes[0], notes


def test_a_server_that_is_down_keeps_the_fused_order(root: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    fused, _, _ = titles(root)
    configure(root, provider="http", url=f"http://127.0.0.1:{port}/v1")
    ranked, notes, _ = titles(root)
    assert ranked == fused
    assert "cannot reach the reranker" in notes[0] and "connection refused" in notes[0]


def test_the_pool_is_top_n_and_does_not_depend_on_limit(root: Path,
                                                        server: RerankServer) -> None:
    configure(root, provider="http", url=server.url, timeout=5)
    firsts = {titles(root, limit=n)[0][0] for n in (1, 2, 3, 10)}
    assert firsts == {"Gamma plan"}
    assert {len(r["body"]["documents"]) for r in server.requests} == {3}
    # A pool of two leaves Gamma (fused third) out: it stays below the reranked two.
    configure(root, provider="http", url=server.url, timeout=5, top_n=2)
    ranked, _, _ = titles(root)
    assert ranked[-1] == "Gamma plan" and len(server.requests[-1]["body"]["documents"]) == 2


@pytest.mark.parametrize(("raw", "field"), [
    ({"provider": "cohere-ish"}, "rerank.provider"),
    ({"provider": "http", "topn": 5}, "rerank"),
    ({"provider": "http", "top_n": 0}, "rerank.top_n"),
    ({"provider": "http", "timeout": "soon"}, "rerank.timeout"),
    ({"provider": "http", "timeout": -1}, "rerank.timeout"),
    ("http", "rerank"),
])
def test_bad_config_names_the_field(raw: Any, field: str) -> None:
    with pytest.raises(KenningError) as info:
        RerankConfig.from_raw(raw)
    assert info.value.field == field


@pytest.mark.parametrize(("fields", "said"), [
    ({"provider": "http"}, "'rerank.url' is missing"),
    ({"provider": "tei", "url": "ftp://host/rerank"}, "must start with http://"),
    ({"provider": "http", "url": "http://u:p@127.0.0.1:1/v1"}, "holds credentials"),
    ({"provider": "http", "url": "http://127.0.0.1:1/v1", "api_key_env": "KENNING_NO_SUCH_KEY"},
     "KENNING_NO_SUCH_KEY, which is not set"),
    ({"provider": "sentence-transformers"}, "'rerank.path' is missing"),
    ({"provider": "sentence-transformers", "path": "/nonexistent/model"}, "does not exist"),
])
def test_a_misconfigured_reranker_searches_in_fused_order(root: Path, fields: dict[str, Any],
                                                          said: str) -> None:
    fused, _, _ = titles(root)
    configure(root, **fields)
    ranked, notes, _ = titles(root)
    assert ranked == fused and said in notes[0] and "not reranked" in notes[0]


def test_a_cross_encoder_without_sentence_transformers_says_so(root: Path,
                                                               tmp_path: Path) -> None:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed")
    model = tmp_path / "cross-encoder"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    fused, _, _ = titles(root)
    configure(root, provider="sentence-transformers", path=str(model))
    ranked, notes, _ = titles(root)
    assert ranked == fused
    assert "sentence-transformers package, which is not installed" in notes[0]


def test_cli_search_explains_the_rerank_score_and_notes_failures(root: Path,
                                                                 server: RerankServer) -> None:
    configure(root, provider="http", url=server.url, timeout=5)
    shown = cli(root, "search", "budget", "--mode", "lexical", "--explain")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.index("Gamma plan") < shown.stdout.index("Alpha plan")
    assert "rerank=" in shown.stdout and "rerank_rank=1" in shown.stdout
    server.behaviour = "nan"
    as_json = cli(root, "search", "budget", "--mode", "lexical", "--json")
    assert as_json.returncode == 0 and "Traceback" not in as_json.stderr
    doc = json.loads(as_json.stdout)
    assert result_path(doc["results"][0]) == "notes/Alpha plan.md"
    assert any("not reranked" in n for n in doc["notes"])


def test_doctor_says_when_the_reranker_is_unreachable_or_misconfigured(
        root: Path, server: RerankServer) -> None:
    def finding(name: str) -> list[dict[str, Any]]:
        out = cli(root, "doctor", "--json")
        assert "Traceback" not in out.stderr
        return [f for f in json.loads(out.stdout)["findings"] if f["check"] == name]

    assert finding("rerank") == []  # nothing configured, nothing said
    configure(root, provider="http", url=server.url, timeout=5)
    (ok,) = finding("rerank")
    assert ok["level"] == "ok" and "answers" in ok["message"]
    server.behaviour = "html-502"
    (down,) = finding("rerank")
    assert down["level"] == "warn" and "HTTP 502" in down["message"]
    configure(root, provider="http")
    (missing,) = finding("rerank")
    assert missing["level"] == "warn" and "rerank.url" in missing["message"]
    configure(root, provider="bogus")
    assert any("rerank.provider" in f["message"] for f in finding("config"))


def test_mcp_search_carries_the_note(root: Path, server: RerankServer) -> None:
    from test_mcp import stdio

    configure(root, provider="tei", url=server.url, timeout=0.3)
    server.behaviour = "hang"

    async def run() -> Any:
        async with stdio(root, "recall") as client:
            return data(await client.call_tool("search", {"query": "budget"}))

    answer = anyio.run(run)
    assert any("did not answer within 0.3 s" in n and "not reranked" in n
               for n in answer["notes"]), answer
    assert result_path(answer["results"][0]) == "notes/Alpha plan.md"
