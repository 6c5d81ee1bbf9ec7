#!/bin/sh
# `ninja check` (tools/check.sh INSTALL_DEPS WITH_TESTS, from build/config.ninja). The README's test
# command is `./configure --install-deps && ninja check`: `--install-deps` alone installs what building
# needs, so when configure was asked to install and the test tools were not asked for yet, they are
# installed here, where the tests are asked for (`./configure --install-deps --with-tests`). Then
# everything the suites use is built and tests/run runs (its last line: N passed, N failed).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-0}" = 1 ] && [ "${2:-0}" != 1 ]; then
    ./configure --install-deps --with-tests
fi
ninja all dist wheel
exec tests/run
