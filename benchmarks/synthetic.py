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


def service_file(i: int, targets: int = TARGETS) -> str:
    return SERVICE.format(i=i, t=i % targets, ns=i % NAMESPACES)


def make_repo(root: Path, services: int, targets: int = TARGETS) -> Path:
    """Write the policy repository (its services spread over `targets` targets) and return its
    policy directory."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    for t in range(targets):
        (policies / f"target-{t}.yaml").write_text(TARGET.format(t=t))
    for i in range(services):
        (policies / f"svc-{i:05d}.yaml").write_text(service_file(i, targets))
    return policies


MANIFESTS = """\
apiVersion: gen/v1alpha1
kind: Manifests
metadata:
  name: platform
spec:
  namespace: apps
  files: [../manifests/]
"""

RAW = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{i:05d}
data:
  LOG_LEVEL: info
  FEATURE_X: "true"
---
apiVersion: v1
kind: Service
metadata:
  name: svc-{i:05d}
spec:
  selector: {{app: svc-{i:05d}}}
  ports:
  - {{name: http, port: 80, targetPort: http}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: svc-{i:05d}
spec:
  podSelector: {{matchLabels: {{app: svc-{i:05d}}}}}
  policyTypes: [Ingress]
  ingress:
  - from:
    - namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: ingress}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-{i:05d}
spec:
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 10Gi}}}}
"""


def make_manifests_repo(root: Path, objects: int) -> Path:
    """One Manifests policy over `objects` raw objects (four kinds, four to a file); returns the
    policy directory."""
    policies, manifests = root / "policies", root / "manifests"
    policies.mkdir(parents=True, exist_ok=True)
    manifests.mkdir(parents=True, exist_ok=True)
    (policies / "manifests.yaml").write_text(MANIFESTS)
    for i in range(objects // 4):
        (manifests / f"app-{i:05d}.yaml").write_text(RAW.format(i=i))
    return policies


GPU_SCHEDULER = """\
apiVersion: gen/v1alpha1
kind: Scheduler
metadata:
  name: gpu-scheduler
spec:
  namespace: gpu-scheduler
  image: registry.example.com/gpu-scheduler:v1
  outOfTreePlugins: [GPUPacking, Coscheduling]
  profiles:
  - schedulerName: gpu-scheduler
    plugins:
      multiPoint:
        enabled: [{name: Coscheduling}]
      queueSort:
        enabled: [{name: Coscheduling}]
        disabled: [{name: "*"}]
      score:
        enabled: [{name: GPUPacking, weight: 10}]
"""

GPU_SERVICE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: infer-{i:03d}
spec:
  namespace: inference
  schedulerName: gpu-scheduler
  image: registry.example.com/infer:v1
  gpu: {{count: {count}, models: [{model}], minMemoryMiB: 40960, labels: nvidia-gfd}}
  resources:
    requests: {{cpu: "4", memory: 32Gi}}
  autoscaling:
    minReplicas: 2
    maxReplicas: 8
    metrics:
    - type: Pods
      pods: {{metric: {{name: queue}}, target: {{type: AverageValue, averageValue: "4"}}}}
"""

GPU_GANG = """\
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata:
  name: train-{i:03d}
spec:
  namespace: ml
  workloadKind: Job
  schedulerName: gpu-scheduler
  restartPolicy: Never
  job: {{completionMode: Indexed, completions: 4, parallelism: 4}}
  gang: {{}}
  gpu: {{count: 8, models: [{model}], labels: nvidia-gfd}}
  container: {{image: registry.example.com/train:v1}}
"""

GPU_MODELS = ("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S")


def make_gpu_repo(root: Path, nodes: int, policies: int) -> tuple[Path, Path]:
    """`policies` GPU policies (services with an HPA, and four-member gangs, half each) and an
    inventory of `nodes` GPU nodes labelled as GPU Feature Discovery labels them, partly used;
    returns the policy directory and the inventory file."""
    directory = root / "policies"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "scheduler.yaml").write_text(GPU_SCHEDULER)
    for i in range(policies):
        model = GPU_MODELS[i % len(GPU_MODELS)]
        text = GPU_SERVICE.format(i=i, count=1 + i % 2, model=model) if i % 2 else GPU_GANG.format(i=i, model=model)
        (directory / f"gpu-{i:03d}.yaml").write_text(text)
    lines = []
    for n in range(nodes):
        model = GPU_MODELS[n % len(GPU_MODELS)]
        lines += [
            f"- name: gpu-node-{n:04d}",
            f"  labels: {{nvidia.com/gpu.product: {model}, nvidia.com/gpu.memory: '81920'}}",
            "  allocatable: {nvidia.com/gpu: 8, cpu: '96', memory: 1000Gi, pods: 110}",
            f"  requested: {{nvidia.com/gpu: {n // 3 % 9}, cpu: '{n % 40}', memory: {n % 500}Gi, pods: {n % 30}}}",
        ]
    inventory = root / "nodes.yaml"
    inventory.write_text("\n".join(lines) + "\n")
    return directory, inventory


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets{i:03d}.g{i:03d}.bench.example.com
spec:
  group: g{i:03d}.bench.example.com
  names: {{kind: Widget{i:03d}, listKind: Widget{i:03d}List, plural: widgets{i:03d}, singular: widget{i:03d}}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {{type: string}}
          kind: {{type: string}}
          metadata: {{type: object}}
          spec:
            type: object
            required: [image]
            properties:
              image: {{type: string, pattern: '^[a-z0-9./-]+:[a-z0-9.]+$'}}
              replicas: {{type: integer, minimum: 0, maximum: 100, default: 1}}
              tier: {{type: string, enum: [basic, standard, premium], default: basic}}
              size:
                anyOf: [{{type: integer}}, {{type: string}}]
                x-kubernetes-int-or-string: true
                pattern: '^[0-9]+(Mi|Gi)?$'
              selector:
                type: object
                additionalProperties: {{type: string}}
                maxProperties: 8
              ports:
                type: array
                maxItems: 16
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name, port]
                  properties:
                    name: {{type: string, maxLength: 15}}
                    port: {{type: integer, minimum: 1, maximum: 65535}}
                    protocol: {{type: string, enum: [TCP, UDP], default: TCP}}
                x-kubernetes-validations:
                - rule: self.all(p, p.port > 1024 || p.name == 'http')
                  message: only the http port may be privileged
            x-kubernetes-validations:
            - rule: self.replicas <= 50 || self.tier == 'premium'
              message: more than 50 replicas needs the premium tier
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""

CUSTOM_RESOURCE = """\
apiVersion: g{g:03d}.bench.example.com/v1
kind: Widget{g:03d}
metadata:
  name: widget-{i:05d}
  namespace: team-{ns:02d}
  labels: {{app.kubernetes.io/name: widget-{i:05d}}}
spec:
  image: registry.example.com/widget:v{i}
  replicas: {replicas}
  tier: standard
  size: 512Mi
  selector: {{app: widget-{i:05d}}}
  ports:
  - {{name: http, port: 80}}
  - {{name: metrics, port: 9090, protocol: TCP}}
"""


def make_crd_repo(root: Path, crds: int, resources: int, files: int) -> Path:
    """`files` files: one CRD in each of the first `crds`, then `resources` custom resources
    spread over the rest (each CRD defines as many)."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(crds):
        (root / f"crd-{i:03d}.yaml").write_text(CRD.format(i=i))
    holders = max(1, files - crds)
    docs: list[list[str]] = [[] for _ in range(holders)]
    for i in range(resources):
        cr = CUSTOM_RESOURCE.format(g=i % crds, i=i, ns=i % NAMESPACES, replicas=i % 40)
        docs[i % holders].append(cr)
    for n, held in enumerate(docs):
        (root / f"cr-{n:05d}.yaml").write_text("---\n".join(held))
    return root
