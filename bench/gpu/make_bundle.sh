#!/usr/bin/env bash
# Builds .gpu/faiss_gpu_sm90.tar.xz: a faiss GPU build that fits the device tool's 64 MiB carry and
# loads on its machines (CUDA 13 libraries only, no network). Run from the repository's root:
#
#   bash bench/gpu/make_bundle.sh            # then, on the device (carry .gpu):
#   mkdir -p /tmp/site && tar -xJf .gpu/faiss_gpu_sm90.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD
#   export CUBLAS13_PATH=$(find /opt -name 'libcublas.so.13*' | head -1) CUBLAS_SHIM_LOG=/tmp/cublas.log
#   cd bench && python3 bench_gpu.py --json $OUT/bench.json
#
# What it does: faiss-gpu 1.15.1 (PyPI, CUDA 12) is 135 MB and needs CUDA 12's cuBLAS (hundreds of
# MB); the machines hold CUDA 13. So: its cubins for every architecture but sm_90 are zeroed
# (prune_fatbin.py), CUDA 12's small runtime library (libcudart.so.12, which the 580 driver runs)
# is added, and libcublas.so.12 is a shim (cublas_shim.c) forwarding faiss's eight cuBLAS calls to
# cuBLAS 13 and logging the math mode and data types asked for (CUBLAS_SHIM_LOG), which is how a
# run shows that no TF32 or half-precision product is used. faiss's preload of the CUDA 12 wheels
# is skipped: the libraries sit in faiss_gpu.libs, on its RPATH.
set -euo pipefail
root=$(pwd); here=$root/bench/gpu; work=$(mktemp -d)
grep -qx "/.gpu/" .git/info/exclude || echo "/.gpu/" >> .git/info/exclude
plat="--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
python3 -m pip download -q --no-deps $plat -d "$work" faiss-gpu==1.15.1 "nvidia-cuda-runtime-cu12==12.8.*"
mkdir -p "$work/site" && cd "$work/site"
unzip -q "$work"/faiss_gpu-*.whl
python3 "$here/prune_fatbin.py" faiss/libfaiss.so faiss/libfaiss.so --keep 90
unzip -q -j "$work"/nvidia_cuda_runtime_cu12-*.whl 'nvidia/cuda_runtime/lib/libcudart.so.12' -d faiss_gpu.libs
printf 'libcublas.so.12 { global: cublas*; local: *; };\n' > "$work/cublas.map"
printf 'libcublasLt.so.12 { global: *; };\n' > "$work/lt.map"
echo 'void embedeval_cublaslt_shim(void) {}' > "$work/lt.c"
gcc -O2 -shared -fPIC -Wl,-soname,libcublas.so.12 -Wl,--version-script="$work/cublas.map" \
  -o faiss_gpu.libs/libcublas.so.12 "$here/cublas_shim.c" -ldl
gcc -shared -fPIC -Wl,-soname,libcublasLt.so.12 -Wl,--version-script="$work/lt.map" \
  -o faiss_gpu.libs/libcublasLt.so.12 "$work/lt.c"
sed -i 's/^_preload_gpu_libs()$/pass  # the CUDA 12 runtime and the cuBLAS shim sit in faiss_gpu.libs/' faiss/__init__.py
mkdir -p "$root/.gpu"
tar -cf - faiss faiss_gpu.libs | xz -T2 -6 > "$root/.gpu/faiss_gpu_sm90.tar.xz"
ls -la "$root/.gpu/faiss_gpu_sm90.tar.xz"
rm -rf "$work"
