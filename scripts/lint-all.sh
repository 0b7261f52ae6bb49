#!/usr/bin/env bash
# Applies the autofixes once over the whole tree (after the branches that were open when lint and
# format were added have merged), then runs the checks `npm test` will, plus the type check, since
# a fix that touched imports or assertions must still compile. Scope is eslint.config.mjs's and
# .prettierignore's: src/, test/, scripts/ and the root config files.
set -uo pipefail
cd "$(dirname "$0")/.."

# Exits non-zero when something unfixable remains; the check below lists it.
npx eslint --fix . >/dev/null
# Twice: Prettier is not idempotent on some member chains (a second pass joins
# `harness\n.fake()\n.enqueue(` that the first pass split), and --check must pass afterwards.
npx prettier --write --log-level warn .
npx prettier --write --log-level warn .

status=0
npx eslint . || status=1
npx prettier --check --log-level warn . || status=1
npx tsc -p tsconfig.json --noEmit || status=1
exit $status
