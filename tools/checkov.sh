#!/usr/bin/env bash
# Scan the rendered prod stack with checkov (Kubernetes framework). Fails on any finding
# except the ones SECURITY.md accepts, each skipped below with its reason.
#
# checkov lives in its own virtualenv (.venv-checkov at the repository root, created on first
# use) because its pins clash with pulumi's. Offline: --skip-download keeps checkov from
# fetching guidelines from Prisma Cloud.
#
#   tools/checkov.sh [STACK]        # default: prod
#
# Environment: PYTHON (default python3) must have langop-infra installed; CHECKOV_VERSION
# (default below) is what a fresh .venv-checkov gets; PROJECT_DIR (default: the repository)
# is the Pulumi project whose stack is rendered.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK="${1:-prod}"
PYTHON="${PYTHON:-python3}"
CHECKOV_VERSION="${CHECKOV_VERSION:-3.3.30}"
VENV="$ROOT/.venv-checkov"
CHECKOV="$VENV/bin/checkov"

# Accepted findings (see SECURITY.md, "Scanner findings we accept"):
SKIPS=(
  # Secrets as env vars: the agent contract delivers MCP header secrets
  # (ARK_MCP_<SERVER>_HEADER_<HEADER>) and webhook credentials (AGENT_WEBHOOK_<TOOL>_AUTH)
  # as env vars through secretKeyRef; agent images read them there.
  CKV_K8S_35
  # Liveness and readiness probes: the agent contract defines no health endpoint for agents
  # (they are clients; nothing listens). Tools keep their /health probes, which
  # tests/test_pod_security.py checks, since this skip is global.
  CKV_K8S_8
  CKV_K8S_9
)

if [[ ! -x "$CHECKOV" ]]; then
  echo "checkov.sh: creating $VENV with checkov $CHECKOV_VERSION" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
fi

OUT="$(mktemp -d "${TMPDIR:-/tmp}/langop-checkov.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

PROJECT_DIR="${PROJECT_DIR:-$ROOT}"
"$PYTHON" -m langop_infra.cli render --stack "$STACK" --project-dir "$PROJECT_DIR" --out "$OUT/manifests"
if ! find "$OUT/manifests" -name 'deployment-*.yaml' | grep -q .; then
  echo "checkov.sh: the $STACK render holds no Deployment; nothing to scan" >&2
  exit 2
fi

skip_list="$(IFS=,; echo "${SKIPS[*]}")"
set +e
"$CHECKOV" --directory "$OUT/manifests" --framework kubernetes --quiet --compact \
  --skip-download --skip-check "$skip_list" 2>"$OUT/checkov.err" | tee "$OUT/checkov.out"
status="${PIPESTATUS[0]}"
set -e

# checkov exits 0 when it parsed nothing; insist that it looked at the manifests.
if ! grep -Eq 'Passed checks: [1-9][0-9]*' "$OUT/checkov.out"; then
  echo "checkov.sh: checkov ran no check on the $STACK manifests" >&2
  cat "$OUT/checkov.err" >&2
  exit 2
fi
if [[ "$status" -ne 0 ]]; then
  echo "checkov.sh: findings above are not accepted in SECURITY.md; fix them or document them" >&2
  exit "$status"
fi
echo "checkov.sh: $STACK passes checkov (accepted and skipped: $skip_list)" >&2
