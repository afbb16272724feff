#!/usr/bin/env bash
# The radix sort experiments that wait for a GPU (CHANGELOG, Unreleased):
# the shortcuts (CUPRIM_TUNE_SORT_SHORTCUT) and shared counters with larger
# tiles (CUPRIM_TUNE_SORT_SHARE). Runs on the GPU machine from the
# repository root, after `scripts/gpu-test` and `scripts/gpu-bench` staged
# stage/ here (carry it):
#
#     bash scripts/sort-experiments.sh tests   # ~5 min: the sort tests three ways
#     bash scripts/sort-experiments.sh bench   # ~8 min: 2^28 rows per setting, then cub_bench
#
# Output in $OUT (default /tmp/out): sort-tests.txt, sort-bench.txt (bencher
# lines prefixed with the setting), cub.csv.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
stage=$root/stage
cd "$root"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export CUPRIM_DEVICE=cuda CRITERION_HOME=/tmp/crit CARGO_MANIFEST_DIR=$root
export CUPRIM_NVRTC_DIR=${CUPRIM_NVRTC_DIR:-/usr/local/cuda/lib64}
commit=$(cat "$stage/COMMIT" 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)

case "${1:-}" in
tests)
    log=$OUT/sort-tests.txt
    echo "commit $commit on $gpu" | tee "$log"
    export CUPRIM_REQUIRE_CUDA=1 CUPRIM_REQUIRE_NVRTC=1
    # Default policy; shortcuts on; shared counters at two blocks per SM
    # (the default tiles: what changes is where the counters live).
    for setting in "" "CUPRIM_TUNE_SORT_SHORTCUT=1" "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT_MINB=2" \
        "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT_MINB=2 CUPRIM_TUNE_SORT_SHORTCUT=1"; do
        s=$SECONDS
        env $setting timeout 170 "$stage/tests/test-sort" --test-threads=1 >"$OUT/sort-test-run.txt" 2>&1
        rc=$?
        echo "[${setting:-default}] exit $rc, $((SECONDS - s)) s: $(grep -a 'test result' "$OUT/sort-test-run.txt")" | tee -a "$log"
        grep -a -E "panicked|FAILED" "$OUT/sort-test-run.txt" | head -5 | tee -a "$log"
    done
    ;;
bench)
    log=$OUT/sort-bench.txt
    (/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 "$stage/anchors/cub_bench.cu" -o /tmp/cub_bench >"$OUT/nvcc.txt" 2>&1
        echo "nvcc exit $?" >>"$OUT/nvcc.txt") &
    nv=$!
    echo "commit $commit on $gpu" | tee "$log"
    run() { # setting filter
        local s=$SECONDS
        env $1 timeout 150 "$stage/bench/sort" --bench --output-format bencher "$2" 2>>"$OUT/sort-bench-err.txt" |
            grep bench: | sed "s/^/[$1] /" | tee -a "$log"
        echo "[$1] $((SECONDS - s)) s" >>"$log"
    }
    n=268435456
    run "CUPRIM_TUNE_SORT_SHORTCUT=0" "^sort_(keys|pairs)/.*/$n"
    run "CUPRIM_TUNE_SORT_SHORTCUT=1" "^sort_(keys/u32|pairs/(u32|f64)_u32)/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=512x16 CUPRIM_TUNE_SORT_MINB=2" "^sort_pairs/(u32|f32)_u32/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=384x23 CUPRIM_TUNE_SORT_MINB=2" "^sort_pairs/u32_u32/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=384x18 CUPRIM_TUNE_SORT_MINB=2" "^sort_pairs/f32_u32/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=384x14 CUPRIM_TUNE_SORT_MINB=2" "^sort_pairs/f64_u32/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=384x14 CUPRIM_TUNE_SORT_MINB=2 CUPRIM_TUNE_SORT_SHORTCUT=1" "^sort_pairs/f64_u32/$n"
    run "CUPRIM_TUNE_SORT_SHARE=1 CUPRIM_TUNE_SORT=384x20 CUPRIM_TUNE_SORT_MINB=2" "^sort_keys/u32/$n"
    wait $nv
    cat "$OUT/nvcc.txt"
    timeout 100 /tmp/cub_bench >"$OUT/cub.csv" 2>>"$OUT/sort-bench-err.txt"
    grep sort "$OUT/cub.csv" | tee -a "$log"
    ;;
*)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
