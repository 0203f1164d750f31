"""The Kapitan equivalent of a synthetic repository: one target per service (Kapitan's usual
layout), each compiling the same Deployment and HPA with jinja2, without validation."""

from __future__ import annotations

from pathlib import Path

from synthetic import NAMESPACES, TARGETS

SERVICE_CLASS = """\
parameters:
  kapitan:
    vars:
      target: ${target_name}
    compile:
    - output_path: manifests
      input_type: jinja2
      input_paths:
      - templates/deployment.yaml
      - templates/hpa.yaml
  service:
    port: 8080
    readiness_path: /readyz
    cpu_request: 100m
    memory_request: 128Mi
    memory_limit: 256Mi
    deletion_cost: "0"
    min_replicas: 3
    max_replicas: 10
    cpu_utilization: 70
"""

TARGET = """\
classes:
- service
parameters:
  target_name: svc-{i:05d}
  service:
    name: svc-{i:05d}
    namespace: team-{ns:02d}
    cluster: cluster-{t}
    image: registry.example.com/bench/svc-{i:05d}:v1
"""

LABELS = """\
  labels:
    app: {{ s.name }}
    app.kubernetes.io/managed-by: kapitan
    app.kubernetes.io/part-of: bench
"""


def _head(api_version: str, kind: str) -> str:
    """What both templates start with: the service's parameters, type and metadata."""
    return (
        "{% set s = inventory.parameters.service %}\n"
        f"apiVersion: {api_version}\nkind: {kind}\n"
        "metadata:\n  name: {{ s.name }}\n  namespace: {{ s.namespace }}\n" + LABELS
    )


DEPLOYMENT = (
    _head("apps/v1", "Deployment")
    + """\
spec:
  selector:
    matchLabels:
      app: {{ s.name }}
  template:
    metadata:
      labels:
        app: {{ s.name }}
      annotations:
        controller.kubernetes.io/pod-deletion-cost: '{{ s.deletion_cost }}'
    spec:
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: app
        image: {{ s.image }}
        ports:
        - name: http
          containerPort: {{ s.port }}
          protocol: TCP
        readinessProbe:
          httpGet:
            path: {{ s.readiness_path }}
            port: http
          periodSeconds: 5
        livenessProbe:
          tcpSocket:
            port: http
          periodSeconds: 10
          timeoutSeconds: 1
          failureThreshold: 3
        resources:
          requests:
            cpu: {{ s.cpu_request }}
            memory: {{ s.memory_request }}
          limits:
            memory: {{ s.memory_limit }}
        env:
{% for name, path in [("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace"), ("POD_UID", "metadata.uid")] %}
        - name: {{ name }}
          valueFrom:
            fieldRef:
              fieldPath: {{ path }}
{% endfor %}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          runAsNonRoot: true
          capabilities:
            drop:
            - ALL
"""
)

HPA = (
    _head("autoscaling/v2", "HorizontalPodAutoscaler")
    + """\
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ s.name }}
  minReplicas: {{ s.min_replicas }}
  maxReplicas: {{ s.max_replicas }}
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: {{ s.cpu_utilization }}
  behavior:
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
)


def make_kapitan_repo(root: Path, services: int) -> Path:
    """Write the Kapitan inventory and templates; return the directory to run `kapitan compile` in."""
    repo = root / "kapitan"
    (repo / "inventory" / "classes").mkdir(parents=True)
    (repo / "inventory" / "targets").mkdir()
    (repo / "templates").mkdir()
    (repo / "inventory" / "classes" / "service.yml").write_text(SERVICE_CLASS)
    (repo / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    (repo / "templates" / "hpa.yaml").write_text(HPA)
    for i in range(services):
        target = TARGET.format(i=i, t=i % TARGETS, ns=i % NAMESPACES)
        (repo / "inventory" / "targets" / f"svc-{i:05d}.yml").write_text(target)
    return repo
