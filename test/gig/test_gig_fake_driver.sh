#!/bin/sh
#
# Discovery through the driver code paths without a GPU: stand-in
# libcuda.so.1 and libnvidia-ml.so.1 (two H200s) on the library path.
#
set -e
top_builddir=${top_builddir:-../..}
dir=$(mktemp -d /tmp/gig_fake_driver.XXXXXX)
trap 'rm -rf "$dir"' EXIT
ln -s "$PWD/.libs/libgig_fake_cuda.so" "$dir/libcuda.so.1"
ln -s "$PWD/.libs/libgig_fake_nvml.so" "$dir/libnvidia-ml.so.1"
topo="$top_builddir/src/tools/mgi_topo/mgi_topo"
fail=0

check() {   # name, pattern, file
    if grep -q -- "$2" "$3"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1 (no '$2' in:)"; cat "$3"; fail=1
    fi
}

unset UCX_CUDA_MGI_TOPO_FILE
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$topo" > "$dir/switch.out"
check "two GPUs discovered" "(2 GPU, .* 1 NVSwitch" "$dir/switch.out"
check "bus id and model" "cuda=0 pci=0000:1b:00.0 model=H200" "$dir/switch.out"
check "NV18 to the NVSwitch" "gpu0 *-> nvsw *nvlink *x18 *478.00" \
      "$dir/switch.out"
check "PCIe Gen5 x16 from NVML" "gpu0 *-> cpu0 *pcie *x1 *55.00" \
      "$dir/switch.out"
check "direct NVLink path" "\[0\] direct .*478.00 GB/s.*gpu0 > nvsw > gpu1" \
      "$dir/switch.out"
check "host path, no relay" "\[1\] via-host via cpu0 *55.00" "$dir/switch.out"
check "exactly two paths" "gpu0 -> gpu1: 2 path(s), 533.00 GB/s" \
      "$dir/switch.out"

GIG_FAKE_NVML=mesh LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$topo" > "$dir/mesh.out"
check "mesh: GPU-GPU NVLink, NVML speed" "gpu0 *-> gpu1 *nvlink *x6 *150.00" \
      "$dir/mesh.out"
check "mesh: no NVSwitch" "0 NVSwitch" "$dir/mesh.out"

LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$topo" --write "$dir/h200.topo" graph > /dev/null
"$topo" --topo "$dir/h200.topo" paths 0 1 > "$dir/file.out"
check "written file plans the same" "gpu0 -> gpu1: 2 path(s), 533.00 GB/s" \
      "$dir/file.out"
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$topo" --calibrate=8 --write "$dir/calib.topo" graph > "$dir/calib.out"
check "calibration marks the graph" "calibrated" "$dir/calib.out"
check "calibration cached in the file" "^origin .*calibrated" "$dir/calib.topo"
if grep -q "gpu0 *-> cpu0 *pcie *x1 *55.00" "$dir/calib.out"; then
    echo "FAIL: calibration left the table's 55 GB/s"; fail=1
else
    echo "PASS: calibration measured the host path"
fi
"$topo" --calibrate graph > /dev/null 2>&1 && {
    echo "FAIL: calibration without a driver succeeded"; fail=1; } || \
    echo "PASS: calibration without a driver fails cleanly"
exit $fail
