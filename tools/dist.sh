#!/bin/sh
# `ninja dist`: dist/gradleak-VERSION-x86_64-linux.tar.gz (and its .sha256), a release that runs on
# glibc 2.31+ (Debian 11/12, Ubuntu 22.04/24.04) with nothing else installed: the stripped release
# binary (build/dist/gradleak: tree-sitter, the grammar, SQLite and jansson linked in; libclang and
# NVML loaded at run time when present), the validation harness, the man page, the completions and
# the README, LICENSE and the notices of the libraries linked in, laid out as an installed prefix (bin/, share/). The staged tree
# (build/dist/stage/gradleak-VERSION-x86_64-linux) is also what tools/make-wheel.py packs.
#
#   tools/dist.sh DIST_CXX        (DIST_CXX: 1 when the build has the C++ front end)
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-0}" != 1 ]; then
    echo "dist: this build has no C++ front end (libclang's headers were not found at configure time)." >&2
    echo "dist: a release must lint C++ where libclang is installed: ./configure --install-deps --with-cxx" >&2
    exit 1
fi
bin=build/dist/gradleak
version=$("$bin" version | sed -n '1s/^gradleak //p')
[ -n "$version" ] || { echo "dist: $bin version printed no version" >&2; exit 1; }
name=gradleak-$version-x86_64-linux

# glibc 2.31: no symbol may need a newer version (src/base/glibc_compat.c forwards the ones that do)
newer=$(objdump -T "$bin" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\(?GLIBC_[0-9.]+\)?$/) {
    v = $i; gsub(/[()]/, "", v); sub(/^GLIBC_/, "", v); split(v, p, ".")
    if (p[1] > 2 || (p[1] == 2 && p[2] + 0 > 31)) print $NF "@GLIBC_" v } }' | sort -u | tr '\n' ' ')
if [ -n "$newer" ]; then
    echo "dist: $bin needs symbols newer than glibc 2.31: $newer" >&2
    echo "dist: forward them to their old versions in src/base/glibc_compat.c" >&2
    exit 1
fi

stage=build/dist/stage
rm -rf "$stage" && mkdir -p "$stage/$name"
strip --strip-all -o build/dist/gradleak.stripped "$bin"
GRADLEAK_BIN=build/dist/gradleak.stripped PREFIX= DESTDIR=$PWD/$stage/$name tools/install.sh >/dev/null
cp README.md LICENSE "$stage/$name/"

# The release links tree-sitter, the tree-sitter-python grammar, SQLite and jansson in: their
# licences (MIT; SQLite is public domain) ask that their notices travel with it.
notices=$stage/$name/THIRD_PARTY_NOTICES
{
    printf 'gradleak statically links the following software. Their licences follow.\n'
    for pkg in libtree-sitter0 libjansson4 libsqlite3-0; do
        f=/usr/share/doc/$pkg/copyright
        [ -f "$f" ] || { echo "dist: $f is missing: install $pkg's -dev package (./configure --install-deps)" >&2; exit 1; }
        printf '\n==== %s (Debian copyright file) ====\n\n' "$pkg"
        cat "$f"
    done
    grammar=$(ls build/deps/tree-sitter-python-*.tgz 2>/dev/null | head -1)
    [ -n "$grammar" ] || { echo "dist: build/deps/tree-sitter-python-*.tgz is missing (./configure fetches it)" >&2; exit 1; }
    printf '\n==== %s (package/LICENSE) ====\n\n' "$(basename "$grammar" .tgz)"
    tar -xzOf "$grammar" package/LICENSE
} >"$notices"

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p dist
out=dist/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --mode='u+rwX,go+rX,go-w' \
    -C "$stage" -cf - "$name" | gzip -n -9 >"$out.tmp"
mv -f "$out.tmp" "$out"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "dist: $out ($(wc -c <"$out" | tr -d ' ') bytes)"
