#!/usr/bin/env bash
# C++ speed on a CMake project (docs/cxx.md "Speed"): fixtures/cxx_project copied to a temporary
# folder, each source grown to ~300 lines (its functions copied under new names), configured by
# CMake against Debian's libtorch-dev (compile_commands.json), then per file CPU (user+sys) of
#   - gradleak with the stub (no compile database), warm PCH;
#   - gradleak with the real headers through the compile database, warm PCH (-j 1, --no-cache);
#   - gradleak from the cache (second run of the same command with the cache on);
#   - clang-tidy --checks=-*,bugprone-* on the same compile database (one process per file).
#   tools/cxx-bench-project.sh [build/gradleak]
set -u
cd "$(dirname "$0")/.." || exit 2
G=${1:-build/gradleak}
case $G in /*) ;; *) G=$PWD/$G ;; esac
W=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-cxxbench.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
cp -r fixtures/cxx_project "$W/p"
cd "$W/p" || exit 2
# grow each source to ~300 lines with copies of a (clean) training function that compiles
for f in src/train.cpp src/eval.cpp src/sample.cpp; do
    k=0
    while [ "$(wc -l <"$f")" -lt 300 ]; do
        k=$((k + 1))
        cat >>"$f" <<EOF

namespace copy$k {
double train_loop(Net& model, torch::optim::SGD& opt, const Batches& data, torch::Device device) {
  model->train();
  torch::Tensor running = torch::zeros({1});
  for (const auto& batch : data) {
    auto x = batch.first.to(device), y = batch.second.to(device);
    auto loss = torch::mse_loss(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    running += loss.detach();
  }
  return running.item<double>();
}
}  // namespace copy$k
EOF
    done
done
cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$W/cmake.log" 2>&1 || { echo "cmake failed: $(tail -3 "$W/cmake.log")"; exit 1; }
files="src/main.cpp src/train.cpp src/eval.cpp src/sample.cpp"
# the project headers these include are linted too (walk_add_cxx_headers): count every parse
nf=$(GRADLEAK_CXX_HEADERS=stub "$G" check -j 1 --no-cache --exit-zero $files 2>&1 | sed -nE 's/.*note: ([0-9]+) C\+\+ files? parsed.*/\1/p')
lines=$(cat $files | wc -l)
m() { # LABEL COMMAND...: CPU per file
    local label=$1 e u s
    shift
    /usr/bin/time -f "%e %U %S" -o "$W/t" "$@" >/dev/null 2>&1
    read -r e u s <"$W/t"
    awk -v l="$label" -v n="$nf" -v lines="$lines" -v e="$e" -v c="$(echo "$u + $s" | bc)" \
        'BEGIN { printf "%-44s parsed files %d lines %4d  wall %6.1f s  cpu/file %7.0f ms\n", l, n, lines, e, c * 1000 / n }'
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
export GRADLEAK_CACHE_DIR=$W/cache
GRADLEAK_CXX_HEADERS=stub "$G" check -j 1 --no-cache --exit-zero $files >/dev/null 2>&1 # warm the stub PCH
m "gradleak, stub, no compile db, warm PCH" env GRADLEAK_CXX_HEADERS=stub "$G" check -j 1 --no-cache --exit-zero $files
"$G" check -j 1 -p build --exit-zero $files >/dev/null 2>&1 # builds the LibTorch PCH, fills the cache
"$G" check -j 1 -p build --no-cache --exit-zero $files >/dev/null 2>&1 # and the --no-cache PCH ($TMPDIR)
m "gradleak, LibTorch (compile db), warm PCH" "$G" check -j 1 -p build --no-cache --exit-zero $files
m "gradleak, LibTorch (compile db), cached" "$G" check -j 1 -p build --exit-zero $files
if command -v clang-tidy >/dev/null; then
    nf=4 # one clang-tidy process per source
    m "clang-tidy --checks=-*,bugprone-* (same db)" sh -c "for f in $files; do clang-tidy -p build --checks='-*,bugprone-*' --quiet \$f; done"
fi
echo "findings (LibTorch): $("$G" check -j 1 -p build --no-cache --exit-zero --output-format concise $files 2>/dev/null | grep -c ': GL')"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
