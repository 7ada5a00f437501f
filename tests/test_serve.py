"""`alaya serve`: resident recall over HTTP on loopback, the stdlib-only client path, security."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.fast import try_server
from cli.locate import find_vault
from cli.main import cli
from compilers.serve import RecallServer, read_serve_file
from vault_engine.errors import UsageError
from vault_engine.store.vault import Vault

from .test_recall import graph_vault  # noqa: F401  (fixture)


@pytest.fixture
def server(graph_vault: Path):  # noqa: F811
    srv = RecallServer(Vault.open(graph_vault), token=None, watch=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    for _ in range(100):
        if read_serve_file(graph_vault / ".alaya"):
            break
        threading.Event().wait(0.05)
    yield srv
    srv.stop.set()
    thread.join(10)


def post(url: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url + "/recall", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_server_answers_like_in_process_recall(server: RecallServer, graph_vault: Path) -> None:  # noqa: F811
    code, served = post(server.url, {"concepts": ["outage"], "relations": ["CAUSED_BY"],
                                     "depth": 2})
    assert code == 200
    local = CliRunner().invoke(cli, ["--vault", str(graph_vault), "recall", "--concepts",
                                     "outage", "--rel", "CAUSED_BY", "--depth", "2", "--json"])
    assert [n["id"] for n in served["nodes"]] == [n["id"] for n in json.loads(local.output)["nodes"]]
    code, bad = post(server.url, {"depth": "two"})
    assert code == 400 and bad["error"] == "UsageError"


def test_client_path_imports_neither_numpy_nor_click(server: RecallServer,
                                                     graph_vault: Path) -> None:  # noqa: F811
    script = (
        "import sys; from cli.fast import try_server; "
        f"out = try_server(['--vault', {str(graph_vault)!r}, 'recall', 'checkout outage', "
        "'--json', '--top-k', '2']); "
        "import json; print(json.dumps({'served': out is not None, "
        "'numpy': 'numpy' in sys.modules, 'click': 'click' in sys.modules, "
        "'engine': 'vault_engine' in sys.modules, "
        "'first': json.loads(out[1])['nodes'][0]['id'] if out else None}))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, check=True)
    data = json.loads(result.stdout)
    assert data == {"served": True, "numpy": False, "click": False, "engine": False,
                    "first": "card-outage"}


def test_client_finds_the_vault_from_the_working_directory_and_sends_the_token(
        graph_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    srv = RecallServer(Vault.open(graph_vault), token="t0ken", watch=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        threading.Event().wait(0.3)
        monkeypatch.delenv("ALAYA_VAULT", raising=False)
        monkeypatch.chdir(graph_vault / "cards")  # inside the vault, no --vault
        out = try_server(["recall", "checkout outage", "--json", "--top-k", "1"])
        assert out is not None and out[0] == 0
        assert json.loads(out[1])["nodes"][0]["id"] == "card-outage"
        bad = try_server(["recall", "--json", "--depth", "0"])  # no text: the server says 400
        assert bad is not None and bad[0] == 2 and "error" in json.loads(bad[1])
    finally:
        srv.stop.set()
        thread.join(10)
    monkeypatch.chdir(graph_vault.parent)
    assert find_vault(str(graph_vault / "cards")) == str(graph_vault)
    monkeypatch.setenv("ALAYA_VAULT", "/elsewhere")
    assert find_vault(str(graph_vault)) == "/elsewhere"  # the environment wins


def test_only_loopback_unless_told_and_then_a_token(graph_vault: Path) -> None:  # noqa: F811
    vault = Vault.open(graph_vault)
    with pytest.raises(UsageError, match="only loopback"):
        RecallServer(vault, host="0.0.0.0", watch=False)
    with pytest.raises(UsageError, match="needs a token"):
        RecallServer(vault, host="0.0.0.0", allow_remote=True, watch=False)


def test_token_is_required_when_set(graph_vault: Path) -> None:  # noqa: F811
    srv = RecallServer(Vault.open(graph_vault), token="s3cret", watch=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        threading.Event().wait(0.3)
        assert post(srv.url, {"query": "outage"})[0] == 401
        assert post(srv.url, {"query": "outage"}, token="wrong")[0] == 401
        code, ok = post(srv.url, {"query": "outage"}, token="s3cret")
        assert code == 200 and ok["nodes"]
    finally:
        srv.stop.set()
        thread.join(10)
    assert read_serve_file(graph_vault / ".alaya") is None  # announcement removed on stop


def test_resident_recall_reads_turn_context_like_a_one_shot_recall(
        vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server keeps the context vectors in RAM, a one-shot recall maps them: same turns."""
    from compilers.options import CompileOptions
    from compilers.pipeline import compile_vault

    from .test_recall import HASH, _chat_vault

    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    vault = _chat_vault(vault_path)
    toml = vault_path / "alaya.toml"  # turn context alone: the best turns by score are shown
    toml.write_text(toml.read_text("utf-8").replace("other_speaker_factor = 0.6",
                                                    "other_speaker_factor = 1.0")
                    .replace("asking_factor = 0.6", "asking_factor = 1.0"), "utf-8")
    assert compile_vault(vault, CompileOptions(embedder=HASH)).context_vectors == 5
    srv = RecallServer(Vault.open(vault_path), token=None, watch=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        for _ in range(100):
            if read_serve_file(vault_path / ".alaya"):
                break
            threading.Event().wait(0.05)
        query = "how long has Nate had his turtles"
        code, served = post(srv.url, {"text": query, "mode": "vector", "top_k": 3})
        assert code == 200
        local = CliRunner().invoke(cli, ["--vault", str(vault_path), "recall", query, "--mode",
                                         "vector", "--top-k", "3", "--json"])
        anchors = json.loads(local.output)["nodes"][0]["anchors"]
        assert served["nodes"][0]["anchors"] == anchors and anchors[:2] == ["t1", "t2"]
    finally:
        srv.stop.set()
        thread.join(10)


def test_the_client_path_imports_no_more_than_it_needs(server: RecallServer,
                                                       graph_vault: Path) -> None:  # noqa: F811
    """Each module costs every `alaya recall --json` through the server: typing (~3 ms),
    hashlib's OpenSSL (~3 ms), urllib and http.client (20–35 ms) stay out."""
    script = (
        "import sys; from cli.fast import try_server; "
        f"out = try_server(['--vault', {str(graph_vault)!r}, 'recall', 'checkout outage', "
        "'--json']); assert out is not None and out[0] == 0; "
        "print(sorted(m for m in ('typing', '_hashlib', 'hashlib', 'hmac', 'urllib.request', "
        "'http.client', 'subprocess') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, check=True)
    assert result.stdout.strip() == "[]"
