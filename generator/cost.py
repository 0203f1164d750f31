"""The seed's deletion-cost writer as a library: `DeletionCostManager`, for the single writer
(a sidecar, or the application itself) that keeps one Pod's deletion cost current.

It sends the seed's request through the official `kubernetes` Python client's ApiClient (the
optional extra `gitops-gen[cost]`): a JSON Patch that tests the Pod's UID before it adds the
annotation, so a recreated Pod of the same name is never written to; nothing is sent while the
cost is unchanged; every request is bounded by timeouts. No loop runs here: the caller decides
when a fresh sample arrives.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from generator.preview.cost import CostWeights, SampleError, calculate_cost, deletion_cost_patch, pod_uid

POD_PATH = "/api/v1/namespaces/{namespace}/pods/{name}"
TIMEOUTS = (3, 5)  # seconds: to connect, to read the answer


def default_weights() -> CostWeights:
    """The built-in DeletionCostPolicy's weights (the seed's)."""
    from generator.policies.policy import builtin_policy

    return CostWeights.from_policy(builtin_policy("DeletionCostPolicy"))


class DeletionCostManager:
    """Writes one admitted Pod's deletion cost; uses a configured `kubernetes.client.ApiClient`
    and starts no background loop. A single writer should own the annotation, and the Pod
    template must already carry it (gen's always does), so the patch's `add` has its parent."""

    def __init__(
        self,
        api_client: Any,
        namespace: str,
        pod_name: str,
        pod_uid: str,
        weights: CostWeights | None = None,
        last_cost: int | None = None,
    ) -> None:
        if api_client is None or not all((namespace, pod_name, pod_uid)):
            raise ValueError("API client and admitted Pod namespace/name/UID required")
        self.api_client = api_client
        self.namespace = namespace
        self.pod_name = pod_name
        self.pod_uid = pod_uid
        self.weights = weights or default_weights()
        self._last_cost = last_cost
        self._lock = threading.Lock()

    def update_from_metrics(self, sample: Mapping[str, Any], now: datetime | None = None) -> bool:
        """Patch the Pod's cost from one fresh sample; False when the cost is unchanged (nothing
        sent). A stale, future or malformed sample raises SampleError and sends nothing."""
        if pod_uid(sample) != self.pod_uid:
            raise SampleError("pod_uid", "metrics belong to a different Pod UID")
        cost = calculate_cost(sample, now or datetime.now(UTC), self.weights)
        with self._lock:
            if cost == self._last_cost:
                return False
            self.api_client.call_api(
                POD_PATH,
                "PATCH",
                path_params={"namespace": self.namespace, "name": self.pod_name},
                header_params={"Accept": "application/json", "Content-Type": "application/json-patch+json"},
                body=deletion_cost_patch(self.pod_uid, cost),
                response_type="V1Pod",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _request_timeout=TIMEOUTS,
            )
            self._last_cost = cost
            return True
