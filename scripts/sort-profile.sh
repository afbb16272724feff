#!/usr/bin/env bash
# Nsight Compute profiles of cuprim's radix sort beside CUB's, on the GPU
# machine from the repository root after `scripts/gpu-bench` staged stage/
# (carry it). Profiles, at n (default 2^28), the histogram and onesweep
# kernels of one sort for cuprim (the sort bench) and CUB
# (scripts/cub_sort_profile.cu: keys u32, pairs u32/u32, pairs f32/u32, in
# that order), with the full section set; writes per-kernel details and
# per-SASS-line source counters.
#
#     bash scripts/sort-profile.sh [n] [what]   # what: keys (default), pairs_u32, pairs_f32
#
# Output in $OUT (default /tmp/out): {cuprim,cub}-WHAT-details.txt and
# {cuprim,cub}-WHAT-source.csv.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
n=${1:-268435456}
what=${2:-keys}
case $what in
keys) filter="^sort_keys/u32/$n\$" skip=0 ;;
pairs_u32) filter="^sort_pairs/u32_u32/$n\$" skip=10 ;;
pairs_f32) filter="^sort_pairs/f32_u32/$n\$" skip=20 ;;
*) echo "what: keys, pairs_u32 or pairs_f32" >&2; exit 2 ;;
esac
export CUPRIM_DEVICE=cuda CRITERION_HOME=/tmp/crit CARGO_MANIFEST_DIR=$root
export CUPRIM_NVRTC_DIR=${CUPRIM_NVRTC_DIR:-/usr/local/cuda/lib64}
ncu=(ncu --clock-control none --set full --import-source no -f)
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo scripts/cub_sort_profile.cu -o /tmp/cub_sort_profile >"$OUT/nvcc.txt" 2>&1 &
nv=$!

report() { # name
    ncu --import "/tmp/$1.ncu-rep" --page details >"$OUT/$1-details.txt" 2>&1
    ncu --import "/tmp/$1.ncu-rep" --page source --csv --print-source sass >"$OUT/$1-source.csv" 2>&1
}
s=$SECONDS
"${ncu[@]}" --kernel-name regex:'cuprim_radix_(histogram|onesweep)' --launch-count 5 -o "/tmp/cuprim-$what" \
    stage/bench/sort --bench --profile-time 1 "$filter" >"$OUT/cuprim-$what-log.txt" 2>&1
echo "cuprim profiles: $((SECONDS - s)) s" >>"$OUT/times.txt"
wait $nv
echo "nvcc exit $?" >>"$OUT/nvcc.txt"
s=$SECONDS
"${ncu[@]}" --kernel-name regex:'DeviceRadixSort' --launch-skip $skip --launch-count 10 -o "/tmp/cub-$what" /tmp/cub_sort_profile "$n" >"$OUT/cub-$what-log.txt" 2>&1
echo "cub profile: $((SECONDS - s)) s" >>"$OUT/times.txt"
for r in "cuprim-$what" "cub-$what"; do report "$r"; done
ls -la /tmp/*.ncu-rep >>"$OUT/times.txt"
