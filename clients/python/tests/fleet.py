"""A fleet of ``rubricate serve`` replicas as docs/deployment.md describes it, for the replica
test and ``npm run bench -- replicas``: one ``redis-server`` (Debian's), the loopback fake judge
counting its calls, N ``serve`` processes sharing the Redis store, and Debian's ``nginx`` in
front of them (``least_conn``, the next replica on an error). Everything listens on loopback
ports of its own and is stopped by ``close()``.

The judge's rule makes every reward known in advance: a criterion is met when the response
contains its last word (``support.criterion_met``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .support import PROJECT_ROOT, FakeJudge

APPLES_RUBRIC = {"criteria": [{"id": "apples", "text": "mentions apples", "points": 1}]}
START_TIMEOUT = 60.0


def nginx_binary() -> Optional[str]:
    """Debian's nginx (in /usr/sbin, which is not on every user's PATH), or None."""
    return shutil.which("nginx") or next((path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(path, os.X_OK)), None)


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def wait_for_port(port: int, process: subprocess.Popen, what: str) -> None:
    """Returns once something accepts connections on the port; raises if the process exits first."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before it listened on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on port {port} within {START_TIMEOUT:g} s")


def step_items(step: str, count: int) -> Tuple[List[Dict[str, Any]], List[float]]:
    """``count`` samples no other step shares (64 prompts × their responses), and their rewards."""
    items, rewards = [], []
    for index in range(count):
        met = (index * 7) % 5 < 2
        items.append({"id": f"{step}-{index}", "prompt": f"[{step}] prompt {index // 64}", "response": f"answer {index}" + (" with apples" if met else ""), "rubric": APPLES_RUBRIC})
        rewards.append(1.0 if met else 0.0)
    return items, rewards


class CallCounter(list):  # type: ignore[type-arg]
    """The judge's list of requests, with actions due at a given call count (the N-th call, not a timer)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.due: List[Tuple[int, Callable[[], None]]] = []

    def append(self, request: Any) -> None:
        with self.lock:
            super().append(request)
            count = len(self)
            ready = [action for at, action in self.due if at == count]
        for action in ready:
            action()


class Replica:
    """One ``rubricate serve`` on a free port, sharing the Redis store."""

    def __init__(self, judge_url: str, store_url: str, extra: List[str]):
        args = ["node", "bin/rubricate.js", "serve", "--port", "0", "--judge", "openai:fake", "--judge-base-url", judge_url, "--store", store_url, "--log-level", "warn"] + extra
        environment = {key: value for key, value in os.environ.items() if key not in ("NODE_OPTIONS", "RUBRICATE_TOKEN", "RUBRICATE_STORE")}
        self.process = subprocess.Popen(args, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
        self.stderr: List[str] = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()  # type: ignore[arg-type]

    def ready(self) -> "Replica":
        """Waits for the address line serve prints once it listens."""
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            self.process.wait()
            raise RuntimeError("rubricate serve did not start: " + "".join(self.stderr[-20:]))
        self.url: str = json.loads(line)["url"]
        self.port = int(self.url.rsplit(":", 1)[1])
        return self

    def kill(self) -> None:
        """SIGKILL by PID: no drain, no goodbye, its claims in Redis lapse after --lease."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


NGINX_CONFIG = """
daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
  log_format upstreams '$status $upstream_addr $upstream_status';
  access_log {dir}/access.log upstreams;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  upstream rubricate {{
    least_conn;
{servers}
    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    client_max_body_size 16m;
    client_body_buffer_size 1m;
    location / {{
      proxy_pass http://rubricate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_read_timeout 180s;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
    }}
  }}
}}
"""


class Nginx:
    def __init__(self, binary: str, ports: List[int]):
        self.directory = tempfile.mkdtemp(prefix="rubricate-nginx-")
        self.port = free_port()
        servers = "\n".join(f"    server 127.0.0.1:{port} max_fails=1 fail_timeout=30s;" for port in ports)
        # Started as root, nginx's workers would switch to an account that cannot write here.
        user = "user root;" if os.geteuid() == 0 else ""
        config = os.path.join(self.directory, "nginx.conf")
        with open(config, "w") as handle:
            handle.write(NGINX_CONFIG.format(dir=self.directory, user=user, servers=servers, port=self.port))
        self.process = subprocess.Popen([binary, "-p", self.directory, "-c", config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_port(self.port, self.process, "nginx")
        except RuntimeError as error:
            raise RuntimeError(f"{error}: {self.process.stderr.read() if self.process.poll() is not None else ''}") from None  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{self.port}"

    def access_log(self) -> List[str]:
        with open(os.path.join(self.directory, "access.log")) as handle:
            return handle.read().splitlines()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: the workers finish, then the master exits
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class Redis:
    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="rubricate-redis-")
        self.port = free_port()
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.directory, "--save", "", "--appendonly", "no", "--protected-mode", "yes"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.process, "redis-server")
        self.url = f"redis://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)
        shutil.rmtree(self.directory, ignore_errors=True)


class Fleet:
    """Redis, the counting judge, ``replicas`` serve processes and (with ``nginx``) the balancer."""

    def __init__(self, replicas: int = 3, *, nginx: Optional[str] = None, judge_delay: float = 0.0, serve_args: Optional[List[str]] = None):
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)")
        self.started: List[Any] = []
        try:
            self.redis = self._keep(Redis())
            self.judge = self._keep(FakeJudge(delay=judge_delay))
            self.judge.requests = self.calls = CallCounter()
            # A killed replica's connections to the judge are reset: expected here, not worth a traceback.
            self.judge.server.handle_error = lambda request, address: None  # type: ignore[method-assign]
            # A killed replica's claims lapse after --lease (1 s here), when a waiting replica makes the call itself.
            args = ["--lease", "1", "--concurrency", "64"] + (serve_args or [])
            starting = [self._keep(Replica(self.judge.base_url, self.redis.url, args)) for _ in range(replicas)]
            self.replicas: List[Replica] = [replica.ready() for replica in starting]
            self.nginx = self._keep(Nginx(nginx, [replica.port for replica in self.replicas])) if nginx else None
        except BaseException:
            self.close()
            raise

    def _keep(self, thing: Any) -> Any:
        self.started.append(thing)
        return thing

    @property
    def urls(self) -> List[str]:
        return [replica.url for replica in self.replicas]

    def at_call(self, count: int, action: Callable[[], None]) -> None:
        """Runs ``action`` when the judge receives its ``count``-th call (from the judge's thread)."""
        self.calls.due.append((count, action))

    def close(self) -> None:
        for thing in reversed(self.started):
            try:
                thing.stop() if isinstance(thing, Replica) else thing.close()
            except Exception:  # noqa: BLE001 - stop everything that started, report the test's own failure
                pass
        self.started.clear()

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
