#!/usr/bin/env bash
# Packs what the GPU machine needs into DEST (default /work/main/.gpu, a folder the device tool
# carries): that machine has no Node.js, no package registry and no network. See docs/compute.md,
# "On a GPU machine". Run from the repository root after `npm run build`.
#   node.xz          this machine's Node binary (x86-64 Linux), xz-compressed
#   npm.tar.xz       npm itself (to run `npm run test:gpu` there)
#   repo.tar.xz      package.json, native/ sources, dist/ (compiled TypeScript), bench/pytorch_compute.py,
#                    the node_modules the GPU test and bench load (tfjs-core and its dependencies,
#                    node-addon-api's headers), Node-API headers, the Adult dataset
#   run-device.sh    unpacks, builds the addon (g++) and the CUDA core (nvcc), runs test:gpu and the bench
set -euo pipefail
DEST=${1:-/work/main/.gpu}
ROOT=$(pwd)
NODE_MODULES=$(readlink -f node_modules)
DATASETS=${SYNTHD_DATASETS:-$ROOT/../shared/datasets}
[ -d "$DATASETS" ] || DATASETS=/work/shared/datasets
mkdir -p "$DEST"
rm -f "$DEST/repo.tar.xz" "$DEST/run-device.sh"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/repo/node_modules/@tensorflow" "$STAGE/repo/node-headers" "$STAGE/repo/datasets"
cp package.json "$STAGE/repo/"
cp -r native "$STAGE/repo/native"
rm -rf "$STAGE/repo/native/build"
cp -r dist "$STAGE/repo/dist"
mkdir -p "$STAGE/repo/bench" && cp bench/pytorch_compute.py "$STAGE/repo/bench/"
cp -r "$NODE_MODULES/@tensorflow/tfjs-core" "$STAGE/repo/node_modules/@tensorflow/"
# Only the CommonJS build tfjs-core's "main" names (the other bundles are 30 MB of the 40).
find "$STAGE/repo/node_modules/@tensorflow/tfjs-core/dist" -mindepth 1 -maxdepth 1 ! -name 'tf-core.node.js' -exec rm -rf {} +
for m in long seedrandom node-fetch whatwg-url tr46 webidl-conversions node-addon-api; do cp -r "$NODE_MODULES/$m" "$STAGE/repo/node_modules/"; done
cp /usr/include/node/node_api.h /usr/include/node/node_api_types.h /usr/include/node/js_native_api.h \
   /usr/include/node/js_native_api_types.h "$STAGE/repo/node-headers/"
cp "$DATASETS/adult-discrete.csv" "$DATASETS/adult-discrete-domain.json" "$STAGE/repo/datasets/"
tar -C "$STAGE/repo" -cf - . | xz -T2 -6 > "$DEST/repo.tar.xz"
# Node and npm change only with this machine's Node: packed once.
[ -f "$DEST/node.xz" ] || xz -T2 -6 -c "$(readlink -f "$(command -v node)")" > "$DEST/node.xz"
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")  # .../node_modules/npm
[ -f "$DEST/npm.tar.xz" ] || tar -C "$(dirname "$NPM_DIR")" -cf - npm | xz -T2 -6 > "$DEST/npm.tar.xz"
cp native/gpu/run-device.sh "$DEST/run-device.sh"
du -sh "$DEST"/*
