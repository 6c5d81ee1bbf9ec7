#!/bin/sh
# `ninja bench`: lint time against the parse-only floor on the same files, in one process.
# The corpus is BENCH_CORPUS (a folder of real PyTorch code kept outside the repository, e.g. one
# brought in with the search tool's fetch); without it, the repository's own fixtures.
set -eu
cd "$(dirname "$0")/.."
corpus=${BENCH_CORPUS:-fixtures}
echo "gradleak bench on $corpus (single thread, best of 3; lint/parse is the figure to watch)"
exec build/gradleak debug bench "$corpus"
