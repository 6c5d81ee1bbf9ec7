#!/usr/bin/env bash
# Rule fixtures: every `# expect:` line must be reported, nothing else may be (clang -verify style).
set -u
cd "$(dirname "$0")/../.."
GRADLEAK=${GRADLEAK:-build/gradleak}
# C++ fixtures are parsed against gradleak's LibTorch stub header, so the results do not depend on
# whether (and which) LibTorch is installed here; tests/cxx checks the real headers when present.
export GRADLEAK_CXX_HEADERS=stub
out=$("$GRADLEAK" debug verify fixtures/rules 2>&1)
rc=$?
# one ok/FAIL line per fixture, with the reasons indented below a FAIL
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL'; then
    echo "FAIL rules-runner gradleak debug verify exited $rc"
fi
exit $rc
