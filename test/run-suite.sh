#!/usr/bin/env bash
# npm test's runner (under c8, which follows every child through NODE_V8_COVERAGE): the compiled
# test files of dist/test, in two runs of node's test runner, and fails if either fails.
# - Unit and contract files, two at a time: they assert no timings (bench/ holds those) and each
#   has its own store, port, PostgreSQL database and Redis key prefix.
# - Integration files (dist/test/integration), one at a time: they run real processes against
#   behaviour bounds (a DELETE answered within 1 s, GET p99 under 100 ms while a heavy model
#   trains, a shutdown within its timeout) and a memory budget, which a second file on the same
#   two cores would make them miss.
# - --test-timeout: a file that hangs (a child it left stopped, a handle never closed) fails after
#   this long and the run goes on, instead of keeping node --test alive for ever. Node 20 applies
#   it to each test file as a whole, so it must be well above the slowest file: contract-shared,
#   over 200 s on 2 busy cores, with its own 900 s bound on the nested run it waits for.
set -u
shopt -s extglob nullglob
cd "$(dirname "$0")/.."
FILE_TIMEOUT_MS=1200000
node --test --test-concurrency=2 --test-timeout="$FILE_TIMEOUT_MS" dist/test/*.test.js dist/test/!(integration)/*.test.js
unit=$?
node --test --test-concurrency=1 --test-timeout="$FILE_TIMEOUT_MS" dist/test/integration/*.test.js
integration=$?
if [ "$unit" -ne 0 ] || [ "$integration" -ne 0 ]; then
  echo "npm test: unit and contract tests exited $unit, integration tests $integration" >&2
  exit 1
fi
