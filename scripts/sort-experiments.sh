#!/usr/bin/env bash
# The radix sort experiments (CHANGELOG, Unreleased): the default policy
# against the shortcuts off (CUPRIM_TUNE_SORT_SHORTCUT=0), counters apart
# from the exchange buffer (CUPRIM_TUNE_SORT_SHARE=0) and other tiles. Runs on the GPU machine from the
# repository root, after `scripts/gpu-test` and `scripts/gpu-bench` staged
# stage/ here (carry it):
#
#     bash scripts/sort-experiments.sh tests   # ~6 min: the sort tests three ways
#     bash scripts/sort-experiments.sh bench   # ~4 min: sort rows per setting, then cub_bench
#
# SORT_AB="SETTING|FILTER;..." chooses the settings the bench mode times
# beside the defaults.
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
    # The defaults first, then the shortcuts off, then the counters apart.
    for setting in "" "CUPRIM_TUNE_SORT_SHORTCUT=0" "CUPRIM_TUNE_SORT_SHARE=0 CUPRIM_TUNE_SORT_MINB=3 CUPRIM_TUNE_SORT=384x9"; do
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
    all="(1048576|16777216|268435456)"
    # The defaults (shortcuts on; keys alone 384 x 20 at three blocks per
    # SM; pairs with shared counters at 384 x 24, 384 x 23 for float keys,
    # 384 x 14 past 4 bytes), then other tiles: ${SORT_AB:-...} as
    # "setting|filter" pairs separated by ";".
    run "" "^sort_(keys/u32|pairs/(u32|f32|f64)_u32)/$all$"
    ab=${SORT_AB:-"CUPRIM_TUNE_SORT=384x21|^sort_keys/u32/$n;CUPRIM_TUNE_SORT_SHORTCUT=0|^sort_(keys/u32|pairs/(u32|f64)_u32)/$n"}
    IFS=';' read -ra pairs <<<"$ab"
    for p in "${pairs[@]}"; do run "${p%%|*}" "${p#*|}"; done
    wait $nv
    cat "$OUT/nvcc.txt"
    timeout 100 /tmp/cub_bench >"$OUT/cub.csv" 2>>"$OUT/sort-bench-err.txt"
    grep sort "$OUT/cub.csv" | tee -a "$log"
    ;;
*)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
