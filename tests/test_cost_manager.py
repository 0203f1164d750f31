"""The seed's DeletionCostManager through the official kubernetes client, against a local HTTP
endpoint that records what arrives: method, path, media type, body; and `gen cost --apply`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from generator.cost import TIMEOUTS, DeletionCostManager
from generator.preview.cost import SampleError
from tests.test_cost import NOW, sample

UID = sample()["pod_uid"]


class _Recorder(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    status: ClassVar[int] = 200

    def do_PATCH(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).requests.append(
            {
                "method": "PATCH",
                "path": self.path,
                "content_type": self.headers["Content-Type"],
                "authorization": self.headers.get("Authorization"),
                "body": json.loads(body),
            }
        )
        answer = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache-0", "uid": UID}}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.requests = []
    _Recorder.status = 200
    httpd = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def _client(url: str) -> Any:
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = url
    configuration.api_key = {"authorization": "token-of-the-writer"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(configuration)


def test_the_manager_sends_the_seeds_patch(server: str) -> None:
    api = _client(server)
    timeouts: list[Any] = []
    pool = api.rest_client.pool_manager
    real = pool.request

    def recording(*args: Any, **kwargs: Any) -> Any:
        timeouts.append(kwargs.get("timeout"))
        return real(*args, **kwargs)

    pool.request = recording
    manager = DeletionCostManager(api, "deletion-cost-lab", "cache-0", UID)
    assert manager.update_from_metrics(sample(), NOW) is True
    (request,) = _Recorder.requests
    assert request["method"] == "PATCH"
    assert request["path"] == "/api/v1/namespaces/deletion-cost-lab/pods/cache-0"
    assert request["content_type"] == "application/json-patch+json"
    assert request["authorization"] == "Bearer token-of-the-writer"
    assert request["body"] == [
        {"op": "test", "path": "/metadata/uid", "value": UID},
        {"op": "add", "path": "/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost", "value": "200"},
    ]
    assert (timeouts[0].connect_timeout, timeouts[0].read_timeout) == TIMEOUTS
    # the same cost again: nothing is sent
    assert manager.update_from_metrics(sample(), NOW) is False and len(_Recorder.requests) == 1


def test_the_manager_refuses_another_pods_sample_and_a_stale_one(server: str) -> None:
    manager = DeletionCostManager(_client(server), "ns", "cache-0", UID)
    with pytest.raises(SampleError):
        manager.update_from_metrics(sample(pod_uid="another"), NOW)
    with pytest.raises(SampleError):
        manager.update_from_metrics(sample(observed_at="2026-12-02T09:50:00Z"), NOW)
    assert _Recorder.requests == []
    with pytest.raises(ValueError):
        DeletionCostManager(None, "ns", "cache-0", UID)


def _kubeconfig(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "lab", "cluster": {"server": url}}],
                "users": [{"name": "writer", "user": {"token": "token-of-the-writer"}}],
                "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "writer"}}],
                "current-context": "lab",
            }
        )
    )
    return path


def test_gen_cost_apply_sends_it_through_a_kubeconfig(gen, server: str, tmp_path: Path) -> None:
    samples = tmp_path / "sample.json"
    samples.write_text(json.dumps(sample()))
    config = _kubeconfig(tmp_path, server)

    def apply(*extra: str):
        return gen("cost", "--sample", samples, "--now", NOW.isoformat(), "--apply", "--pod", "lab/cache-0",
                   "--kubeconfig", config, *extra)  # fmt: skip

    run = apply()
    assert run.code == 0 and "Pod lab/cache-0: deletion cost set" in run.err, run.err
    assert _Recorder.requests[0]["path"] == "/api/v1/namespaces/lab/pods/cache-0"
    unchanged = apply("--last-cost", "200")
    assert unchanged.code == 0 and "unchanged" in unchanged.err and len(_Recorder.requests) == 1
    _Recorder.status = 422  # a Pod of another UID: the test operation fails
    refused = apply()
    assert refused.code == 1 and "was not applied: 422" in refused.err


def test_gen_cost_apply_usage(gen, tmp_path: Path) -> None:
    samples = tmp_path / "sample.json"
    samples.write_text(json.dumps(sample()))
    assert gen("cost", "--sample", samples, "--apply").code == 2  # --apply needs --pod
    bad = gen(
        "cost",
        "--sample",
        samples,
        "--now",
        NOW.isoformat(),
        "--apply",
        "--pod",
        "cache-0",
        "--kubeconfig",
        tmp_path / "none",
    )
    assert bad.code == 2 and "NAMESPACE/NAME" in bad.err
    missing = gen(
        "cost",
        "--sample",
        samples,
        "--now",
        NOW.isoformat(),
        "--apply",
        "--pod",
        "a/b",
        "--kubeconfig",
        tmp_path / "none",
    )
    assert missing.code == 2 and "no cluster to talk to" in missing.err


WRITER = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: cache}
spec:
  namespace: lab
  image: registry.example.com/cache:1
  downwardEnv: [POD_NAME, POD_NAMESPACE, POD_UID]
  deletionCost: {initial: 0, tier: default}
  costWriter: {serviceAccount: cost-writer, container: cost-writer}
  pod:
    initContainers:
    - name: cost-writer
      image: registry.example.com/cost-writer:1
      restartPolicy: Always
"""


def test_downward_env_lands_on_the_writer_sidecar(gen, tmp_path: Path) -> None:
    import yaml

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "cache.yaml").write_text(WRITER)
    assert gen("render", tmp_path / "p", "--out", tmp_path / "out").code == 0
    pod = yaml.safe_load((tmp_path / "out/default/lab/deployment-cache.yaml").read_text())["spec"]["template"]["spec"]
    (sidecar,) = pod["initContainers"]
    assert [e["name"] for e in sidecar["env"]][:3] == ["POD_NAME", "POD_NAMESPACE", "POD_UID"]
    assert "POD_UID" not in [e["name"] for e in pod["containers"][0]["env"]]
    (tmp_path / "p" / "cache.yaml").write_text(WRITER.replace("container: cost-writer}", "container: writer}"))
    run = gen("lint", tmp_path / "p")
    assert run.code == 1 and " cost-writer-container " in run.out and "restartPolicy: Always (cost-writer)" in run.out
