#!/usr/bin/env bash
# Rule fixtures: every `# expect:` line must be reported, nothing else may be (clang -verify style).
set -u
cd "$(dirname "$0")/../.."
GRADLEAK=${GRADLEAK:-build/gradleak}
out=$("$GRADLEAK" debug verify fixtures/rules 2>&1)
rc=$?
# one ok/FAIL line per fixture, with the reasons indented below a FAIL
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL'; then
    echo "FAIL rules-runner gradleak debug verify exited $rc"
fi
exit $rc
