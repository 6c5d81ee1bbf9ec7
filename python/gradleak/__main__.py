"""``python -m gradleak ARGS``: exec the gradleak binary with ARGS."""

import os
import sys

from gradleak import find_gradleak_bin


def main() -> None:
    try:
        binary = find_gradleak_bin()
    except FileNotFoundError as e:
        print("gradleak: error: " + str(e), file=sys.stderr)
        sys.exit(2)
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
