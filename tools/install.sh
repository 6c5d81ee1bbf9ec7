#!/bin/sh
# `ninja install`: copies the binary, the validation harness, the man page and the shell completions
# into $DESTDIR$PREFIX (PREFIX defaults to /usr/local):
#   bin/gradleak
#   share/gradleak/harness/...                 (the binary finds it from its own location)
#   share/man/man1/gradleak.1
#   share/bash-completion/completions/gradleak
#   share/zsh/site-functions/_gradleak
#   share/fish/vendor_completions.d/gradleak.fish
# GRADLEAK_BIN names another binary to install (tools/dist.sh installs the release binary this way);
# SHARE_SRC the folder with the generated share/ files (default build/share).
set -eu
cd "$(dirname "$0")/.."
prefix=${PREFIX-/usr/local}
dest=${DESTDIR-}
bin=${GRADLEAK_BIN:-build/gradleak}
src=${SHARE_SRC:-build/share}
root=$dest$prefix
case $root in '') root=/ ;; esac

for f in "$bin" "$src/gradleak/harness/gradleak_harness/__init__.py" "$src/man/man1/gradleak.1" \
    "$src/bash-completion/completions/gradleak" "$src/zsh/site-functions/_gradleak" \
    "$src/fish/vendor_completions.d/gradleak.fish"; do
    [ -f "$f" ] || { echo "install: $f is missing (run ninja install, which builds it)" >&2; exit 1; }
done

# put SRC DST MODE
put() {
    mkdir -p "$(dirname "$2")"
    rm -f "$2"
    cp "$1" "$2"
    chmod "$3" "$2"
}

put "$bin" "$root/bin/gradleak" 755
rm -rf "$root/share/gradleak/harness"
(cd "$src/gradleak/harness" && find . -type f -name '*.py' | LC_ALL=C sort) | while read -r f; do
    put "$src/gradleak/harness/$f" "$root/share/gradleak/harness/${f#./}" 644
done
put "$src/man/man1/gradleak.1" "$root/share/man/man1/gradleak.1" 644
put "$src/bash-completion/completions/gradleak" "$root/share/bash-completion/completions/gradleak" 644
put "$src/zsh/site-functions/_gradleak" "$root/share/zsh/site-functions/_gradleak" 644
put "$src/fish/vendor_completions.d/gradleak.fish" "$root/share/fish/vendor_completions.d/gradleak.fish" 644
echo "installed gradleak into $root (bin/gradleak, share/gradleak/harness, share/man/man1/gradleak.1, completions)"
