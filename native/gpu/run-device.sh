#!/usr/bin/env bash
# On the GPU machine (no Node.js, no registry, no network): unpacks the bundle of native/gpu/pack.sh,
# builds the addon with g++ and the CUDA core with the machine's nvcc, runs `npm run test:gpu` and
# the GPU compute bench (ours beside PyTorch on the same GPU), and writes logs under $OUT.
# Usage (from the checkout root there): bash .gpu/run-device.sh [.gpu]
set -uo pipefail
B=$(readlink -f "${1:-.gpu}")
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=/tmp/synthd-gpu
rm -rf "$W" && mkdir -p "$W/bin"
log() { echo "== $(date -u +%T) $*"; }
SECONDS=0

log "unpack"
xz -dc "$B/node.xz" > "$W/bin/node" && chmod +x "$W/bin/node"
tar -C "$W" -xJf "$B/npm.tar.xz"
printf '#!/bin/sh\nexec "%s/bin/node" "%s/npm/bin/npm-cli.js" "$@"\n' "$W" "$W" > "$W/bin/npm" && chmod +x "$W/bin/npm"
mkdir -p "$W/repo" && tar -C "$W/repo" -xJf "$B/repo.tar.xz"
export PATH="$W/bin:$PATH"
node --version
# At most 8 files come back from $OUT: run.log (this output), test-gpu.log, bench.json, bench2.json,
# bench.err, build-addon.log, build-gpu.log, summary.txt.
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
nvcc --version | tail -2
cd "$W/repo"

log "build the addon (g++)"
mkdir -p native/build/Release
# The flags of native/binding.gyp; node-gyp is not needed (it would fetch headers). One g++ per file.
mkdir -p /tmp/synthd-obj
(ls native/src/*.cc native/src/train/*.cc native/src/gpu/gpu_loader.cc | xargs -P "$(nproc)" -I{} sh -c \
  'g++ -std=c++17 -O3 -ffp-contract=off -fno-math-errno -pthread -fPIC -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS \
   -DNODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS -DBUILDING_NODE_EXTENSION -I node-headers -I node_modules/node-addon-api \
   -c {} -o /tmp/synthd-obj/$(echo {} | tr / _).o' &&
 g++ -shared -pthread -o native/build/Release/synthd_native.node /tmp/synthd-obj/*.o -ldl) > "$OUT/build-addon.log" 2>&1 &
ADDON=$!

log "build the CUDA core (nvcc)"
CUBLAS_INC=""
for d in ${SYNTHD_CUBLAS_DIR:+$SYNTHD_CUBLAS_DIR/include} /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include /usr/include \
         $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, "cu13", "include") for p in nvidia.__path__))' 2>/dev/null); do
  [ -f "$d/cublas_v2.h" ] && CUBLAS_INC=$d && break
done
CUBLAS_LIB=""
for d in ${SYNTHD_CUBLAS_DIR:+$SYNTHD_CUBLAS_DIR/lib} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu \
         $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, "cu13", "lib") for p in nvidia.__path__))' 2>/dev/null); do
  ls "$d"/libcublas.so* >/dev/null 2>&1 && CUBLAS_LIB=$d && break
done
echo "cuBLAS: include $CUBLAS_INC lib $CUBLAS_LIB"
LINK="-L$CUBLAS_LIB -lcublas"
# Only a versioned file (pip's nvidia-cublas): name it to the linker (nvcc takes no .so.N argument).
[ -f "$CUBLAS_LIB/libcublas.so" ] || LINK="-L$CUBLAS_LIB -Xlinker -l:$(basename "$(ls "$CUBLAS_LIB"/libcublas.so.* | head -1)")"
nvcc -O3 --fmad=false -std=c++17 -gencode=arch=compute_90,code=sm_90 -shared -Xcompiler -fPIC,-fvisibility=hidden \
  -I "$CUBLAS_INC" -o native/build/Release/libsynthd_gpu.so native/src/gpu/gpu_core.cu $LINK -Xlinker -rpath,"$CUBLAS_LIB" \
  > "$OUT/build-gpu.log" 2>&1
echo "nvcc exit $?"; tail -5 "$OUT/build-gpu.log"
wait $ADDON; echo "g++ exit $?"; tail -5 "$OUT/build-addon.log"
export LD_LIBRARY_PATH="$CUBLAS_LIB:${LD_LIBRARY_PATH:-}"
node -e 'const m = require("./native/build/Release/synthd_native.node"); console.log(JSON.stringify(m.gpuInfo()))' 2>&1
log "built in ${SECONDS}s"

export SYNTHD_DATASETS="$W/repo/datasets"
log "npm run test:gpu"
timeout 240 npm run test:gpu > "$OUT/test-gpu.log" 2>&1
echo "test:gpu exit $?"
grep -E "^# (tests|pass|fail)|^not ok|^ *# (dense|blocks|GPU)" "$OUT/test-gpu.log"

log "bench: ours beside PyTorch"
export PYTHONUNBUFFERED=1
timeout 300 node dist/bench/compute-gpu.js --json --pytorch python3 > "$OUT/bench.json" 2> "$OUT/bench.err"
echo "bench exit $?"; tail -c 1500 "$OUT/bench.err"
# Twice: the spread between two runs of the same code bounds what a difference can mean.
if [ "${BENCH_TWICE:-1}" = 1 ]; then
  timeout 300 node dist/bench/compute-gpu.js --json --pytorch python3 --no-tf32 > "$OUT/bench2.json" 2>> "$OUT/bench.err"
  echo "bench (second run) exit $?"
fi
for J in "$OUT/bench.json" "$OUT/bench2.json"; do [ -s "$J" ] || continue; node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const o = r.ours, t = r.pytorch || {}, q = r.ratio_vs_pytorch;
const f = (x, d = 3) => (typeof x === "number" ? x.toFixed(d) : "-");
console.log(`device ${o.device}; torch ${t.torch}; first loss ours ${o.first_loss} torch ${t.first_loss}`);
console.log(`parity vs CPU: loss ${o.fp32_vs_cpu.loss_rel_err.toExponential(2)} grad ${o.fp32_vs_cpu.grad_rel_err.toExponential(2)}`);
console.log(`train b256  ms: ours ${f(o.train_ms_b256)} torch ${f(t.train_ms_b256)} (device-latents ${f(t.train_ms_b256_device_latents)}) ratio ${f(q.train_b256, 2)}`);
console.log(`train b8192 ms: ours ${f(o.train_ms_b8192)} torch ${f(t.train_ms_b8192)} (device-latents ${f(t.train_ms_b8192_device_latents)}) ratio ${f(q.train_b8192, 2)}`);
console.log(`generate rows/s: ours ${Math.round(o.generate_rows_per_s)} torch ${Math.round(t.generate_rows_per_s)} ratio ${f(q.generate, 2)}`);
if (r.tf32) console.log(`tf32: ${JSON.stringify(r.tf32)}`);
if (r.pytorch_error) console.log(`pytorch error: ${r.pytorch_error.slice(0, 800)}`);
' "$J" 2>&1 | tee -a "$OUT/summary.txt"; done
log "done in ${SECONDS}s"
