#!/usr/bin/env bash
# Publishes a test Kubernetes inventory on NATS: ./scripts/k8s-seed.sh [client] [env] [cluster]
# (defaults internal development test-cluster). NATS_URL picks the server. Real
# cluster data when the current kube-context answers (read by the agent's own
# lister and collector), else built-in test data. Extra
# options (--size, --file, --gzip) are passed through to `npm run seed`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec npm run --silent seed -- "$@"
