#!/usr/bin/env python3
"""Latency of ``fusionlint server``'s diagnostics after a save, against ``fusionlint FILE``.

    python bench/server_latency.py                # 7 runs of each measurement (medians)
    python bench/server_latency.py --runs 11 --json out.json

The server runs as a subprocess (``python -m fusionlint.cli server``) driven over stdio by the small
LSP client below (standard library only). Each measurement is the time from sending
``textDocument/didSave`` to the ``textDocument/publishDiagnostics`` that answers it; the command
line's is the wall time of a whole ``python -m fusionlint.cli ...`` process. The runs of the two
alternate, on the same cache state:

- cold: no result cache, no PCH: ``fusionlint --no-cache FILE`` against a server started with
  ``--no-cache`` (each save parses again);
- cached: the file unchanged and its result in the cache: ``fusionlint --cache-dir D FILE`` against
  a server with ``--cache-dir D`` (each save is a cache look-up);
- edited: the file changed on disk before each run (a comment appended), the include block's PCH
  built beforehand: ``fusionlint --cache-dir D FILE`` against ``didChange`` + ``didSave`` (the
  server waits ``--debounce 30`` after a change, so the save starts the check).

The file is a copy of fixtures/cublaslt/rules/FL100_transa_int64_size.cpp (with the probe header
it includes) in a temporary directory. The language server's target: its median at most 1.2x the
command line's in each case.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "cublaslt" / "rules" / "FL100_transa_int64_size.cpp"
TARGET = 1.2


class Client:
    """A minimal LSP client over a server subprocess's stdin/stdout."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, cwd=REPO)
        self.next_id = 0

    def send(self, method: str, params: object, request: bool = False) -> int | None:
        msg: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return msg.get("id")

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server exited")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: object) -> object:
        rid = self.send(method, params, request=True)
        while True:
            msg = self.receive()
            if msg.get("id") == rid and "method" not in msg:
                return msg.get("result")
            if "id" in msg and "method" in msg:  # a request from the server (e.g. a progress token): answer null
                self._reply(msg["id"])

    def _reply(self, rid: object) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": None}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def diagnostics(self, uri: str) -> list:
        """Wait for the next diagnostics published for ``uri``."""
        while True:
            msg = self.receive()
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                return msg["params"]["diagnostics"]
            if "id" in msg and "method" in msg:
                self._reply(msg["id"])

    def idle(self) -> None:
        """Wait until the server runs no check (e.g. the facts it parses for a cached result's quick fixes)."""
        while self.request("workspace/executeCommand", {"command": "fusionlint.stats"})["running"]:
            time.sleep(0.05)

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.send("exit", None)
            self.proc.wait(30)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()


def start_server(flags: list[str], env: dict[str, str]) -> Client:
    c = Client([sys.executable, "-m", "fusionlint.cli", "server", *flags], env)
    c.request("initialize", {"processId": os.getpid(), "rootUri": REPO.as_uri(), "capabilities": {}})
    c.send("initialized", {})
    return c


def cli_seconds(flags: list[str], path: Path, env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fusionlint.cli", *flags, str(path)], env=env, cwd=REPO,
                          capture_output=True, text=True)
    return time.perf_counter() - start, proc.stdout.count("[FL100]")


def project(work: Path) -> Path:
    """The fixture and the probe header it includes, copied to ``work`` (as tests/cli_helpers.project)."""
    (work / "src").mkdir(parents=True)
    probe = (REPO / "fixtures" / "cublaslt" / "probe.h").read_text(encoding="utf-8")
    real = (REPO / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h").as_posix()
    (work / "probe.h").write_text(probe.replace('"../../fusionlint/evidence/include/fusionlint_probe.h"', f'"{real}"'),
                                  encoding="utf-8")
    dest = work / "src" / FIXTURE.name
    shutil.copy(FIXTURE, dest)
    return dest


class Doc:
    def __init__(self, client: Client, path: Path) -> None:
        self.client, self.path, self.uri, self.version = client, path, path.as_uri(), 1

    def open(self) -> list:
        self.client.send("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "cpp", "version": 1, "text": self.path.read_text(encoding="utf-8")}})
        diagnostics = self.client.diagnostics(self.uri)
        self.client.idle()
        return diagnostics

    def save_seconds(self, changed: str | None = None) -> tuple[float, int]:
        if changed is not None:  # the editor sends the change, writes the file, then says it saved
            self.version += 1
            self.client.send("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                        "contentChanges": [{"text": changed}]})
            self.path.write_text(changed, encoding="utf-8")
        start = time.perf_counter()
        self.client.send("textDocument/didSave", {"textDocument": {"uri": self.uri}})
        diags = self.client.diagnostics(self.uri)
        return time.perf_counter() - start, sum(d.get("code") == "FL100" for d in diags)


def measure(runs: int, work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FUSIONLINT_")}
    env["NO_COLOR"] = "1"
    results: dict = {}

    def record(name: str, cli: list[float], server: list[float]) -> None:
        c, s = statistics.median(cli), statistics.median(server)
        results[name] = {"cli": c, "server": s, "ratio": s / c, "runs": runs, "cli_all": cli, "server_all": server}
        print(f"{name:8s} cli {c:7.3f} s   server {s:7.3f} s   ratio {s / c:5.2f}   "
              f"({'ok' if s <= TARGET * c else 'OVER'} against {TARGET}x)", flush=True)

    path = project(work / "cold")
    server = start_server(["--no-cache"], env)
    doc = Doc(server, path)
    assert sum(d.get("code") == "FL100" for d in doc.open()) == 1
    cli, srv = [], []
    for _ in range(runs):
        t, n = cli_seconds(["--no-cache"], path, env)
        assert n == 1
        cli.append(t)
        t, n = doc.save_seconds()
        assert n == 1
        srv.append(t)
    server.close()
    record("cold", cli, srv)

    path = project(work / "cached")
    cache_dir = work / "cache-cached"
    flags = ["--cache-dir", str(cache_dir)]
    cli_seconds(flags, path, env)  # the result in the cache
    server = start_server(flags, env)
    doc = Doc(server, path)
    doc.open()
    cli, srv = [], []
    for _ in range(runs):
        cli.append(cli_seconds(flags, path, env)[0])
        srv.append(doc.save_seconds()[0])
    server.close()
    record("cached", cli, srv)

    path = project(work / "edited")
    cache_dir = work / "cache-edited"
    flags = ["--cache-dir", str(cache_dir)]
    base = path.read_text(encoding="utf-8")
    for i in range(2):  # the first sighting notes the include block, the second builds its PCH
        path.write_text(base + f"// warm-up {i}\n", encoding="utf-8")
        cli_seconds(flags, path, env)
    server = start_server([*flags, "--debounce", "30"], env)
    doc = Doc(server, path)
    doc.open()
    cli, srv = [], []
    for i in range(runs):
        path.write_text(base + f"// cli edit {i}\n", encoding="utf-8")
        t, n = cli_seconds(flags, path, env)
        assert n == 1
        cli.append(t)
        t, n = doc.save_seconds(base + f"// server edit {i}\n")
        assert n == 1
        srv.append(t)
    server.close()
    record("edited", cli, srv)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs of each measurement (median; default 7)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    a = ap.parse_args()
    print(f"{FIXTURE.relative_to(REPO)}, {a.runs} runs each, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="fusionlint-server-bench-") as tmp:
        results = measure(a.runs, Path(tmp))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r["server"] <= TARGET * r["cli"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
