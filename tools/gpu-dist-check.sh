#!/bin/sh
# The release tarball on a GPU machine (nothing built there): unpack it in a fresh folder and run its
# binary's `validate --device cuda` on fixtures/run/ with the machine's own python3 and torch; prints
# the glibc, the binary's version and the verdict table. Exit 1 = some finding confirmed (expected:
# the leaky fixtures grow), 2 = an error. From the repository root:
#   tools/gpu-dist-check.sh [dist/gradleak-VERSION-x86_64-linux.tar.gz] [PATHS, default fixtures/run/]
set -eu; t=${1:-$(ls dist/gradleak-*-x86_64-linux.tar.gz | tail -n 1)}; d=$(mktemp -d); tar -xzf "$t" -C "$d"; g=$(echo "$d"/gradleak-*/bin/gradleak); ldd --version | head -n 1; "$g" version; "$g" validate --device cuda --no-history "${2:-fixtures/run/}"
