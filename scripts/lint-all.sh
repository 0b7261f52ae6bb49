#!/usr/bin/env bash
# Applies the autofixes once over the whole tree (after the branches that were open when lint and
# format were added have merged), then runs the same checks `npm test` will: eslint's fixes first
# (type imports), then Prettier over the result, then both checks and the type check, since a fix
# that touched imports must still compile. Scope is eslint.config.mjs's and .prettierignore's:
# src/, test/, scripts/ and the root config files.
set -euo pipefail
cd "$(dirname "$0")/.."

npx eslint --fix .
npx prettier --write --log-level warn .
npx eslint .
npx prettier --check .
npx tsc -p tsconfig.json --noEmit
