"""gen: GitOps policy/manifest generator for GPU and scale-sensitive Kubernetes workloads.

The pipeline is load -> validate policies -> render -> validate manifests -> write
(`pipeline.py`); the folders are its concerns, and imports run down this list only:

    cli.py, commands/   flags -> options -> one core call -> report -> exit code
    pipeline.py         strings the stages together for render, lint and check
    preview/            beside the pipeline: `gen explain gpu`, `gen explain scale-down`, `gen cost`
    render/             stages 3 and 5: templates -> objects, patches, the plan per target, the writer
    policies/           stages 1-2: the policy model, targets, derived values and Pods, cross-policy rules
    kube/               stage 4 and `gen validate`: what Kubernetes refuses, per version
    yamlio/             YAML in (with positions for findings) and out (canonical bytes)
    problems.py, reporters.py, catalogue.py, suppressions.py, errors.py, schemas.py,
    resources.py, layout.py, parallel.py
                        shared by all: findings, their output, the rule catalogue, gen:ignore
                        comments, fatal errors, bundled schemas and data, the output
                        directory's shape, and the process fan-out
    config.py, baseline.py
                        `gen validate`'s .gen.yaml and baselines
"""

__version__ = "0.1.0"
