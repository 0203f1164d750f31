"""The shape of an output directory, shared by the writer and by `gen validate` reading one back."""

from __future__ import annotations

# Argo CD Applications and Flux Kustomizations live here, outside every directory they sync.
GITOPS_DIR = "_gitops"
# Fragments for tools gen does not render (Helm values, JSON patches): files, not resources.
FRAGMENTS_DIR = "integrations"
# Lists the files gen owns in a directory it writes.
MANIFEST_FILE = ".gen-manifest.json"
