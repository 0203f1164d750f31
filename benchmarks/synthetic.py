"""Synthetic policy repositories: N ReplicatedServices (the seed's cache-app shape) over 20
namespaces and 4 targets, one policy file per service."""

from __future__ import annotations

from pathlib import Path

NAMESPACES = 20
TARGETS = 4

TARGET = """\
apiVersion: gen/v1alpha1
kind: Target
metadata:
  name: cluster-{t}
spec:
  kubernetesVersion: "1.35"
  selector:
    matchLabels:
      cluster: cluster-{t}
  commonLabels:
    app.kubernetes.io/part-of: bench
"""

SERVICE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: svc-{i:05d}
  labels:
    cluster: cluster-{t}
spec:
  namespace: team-{ns:02d}
  image: registry.example.com/bench/svc-{i:05d}:v1
  ports:
  - name: http
    containerPort: 8080
  readinessProbe:
    httpGet:
      path: /readyz
      port: http
    periodSeconds: 5
  resources:
    requests:
      cpu: 100m
      memory: 128Mi
    limits:
      memory: 256Mi
  downwardEnv: [POD_NAME, POD_NAMESPACE, POD_UID]
  deletionCost:
    initial: 0
    tier: default
  autoscaling:
    minReplicas: 3
    maxReplicas: 10
    cpuUtilization: 70
    scaleDown:
      stabilizationWindowSeconds: 300
      policies:
      - type: Percent
        value: 50
        periodSeconds: 60
      - type: Pods
        value: 2
        periodSeconds: 60
      selectPolicy: Min
"""


def service_file(i: int) -> str:
    return SERVICE.format(i=i, t=i % TARGETS, ns=i % NAMESPACES)


def make_repo(root: Path, services: int) -> Path:
    """Write the policy repository and return its policy directory."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    for t in range(TARGETS):
        (policies / f"target-{t}.yaml").write_text(TARGET.format(t=t))
    for i in range(services):
        (policies / f"svc-{i:05d}.yaml").write_text(service_file(i))
    return policies
