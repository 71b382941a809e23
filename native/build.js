#!/usr/bin/env node
/**
 * Builds the C++ compute core (native/) with node-gyp during `npm install` / `npm ci`, then the
 * CUDA core (native/src/gpu/gpu_core.cu -> build/Release/libsynthd_gpu.so) when `nvcc` and cuBLAS
 * are found.
 *
 * Headers come from the running Node's own installation (`--nodedir` = the directory above
 * `process.execPath`'s bin), so the build never downloads anything. A failed build does not fail
 * the install: synthd then uses its JavaScript fallback and logs that it does (see
 * src/model/native.ts). Set SYNTHD_REQUIRE_NATIVE=1 to make a failed build fatal (CI does).
 *
 * CUDA core: built only when `nvcc` (on PATH, or $CUDA_HOME/bin) and cuBLAS's header and library
 * (next to nvcc's toolkit, /usr/include + /usr/lib, or $SYNTHD_CUBLAS_DIR/{include,lib}) are all
 * found; otherwise it is skipped with one line saying what was missing, and the CPU path is the
 * only one. The addon loads the library at run time (native/src/gpu/gpu_loader.h), so neither the
 * addon's build nor its loading needs CUDA. A failed CUDA build is a warning (fatal with
 * SYNTHD_REQUIRE_GPU=1). SYNTHD_CUDA_ARCH overrides the targets (nvcc -gencode list, default:
 * sm_80 and sm_90 machine code plus compute_90 PTX). SYNTHD_SKIP_GPU=1 skips it.
 */
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const fs = require("node:fs");

const nodedir = path.dirname(path.dirname(process.execPath));
// node-gyp: the one npm names while it runs this script, else the copy bundled with npm next to
// this Node (so `node native/build.js` works without node-gyp on PATH), else `node-gyp` on PATH.
const bundled = path.join(nodedir, "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
const gyp = process.env.npm_config_node_gyp || (fs.existsSync(bundled) ? bundled : undefined);
const [cmd, args] = gyp
  ? [process.execPath, [gyp]]
  : ["node-gyp", []];
const res = spawnSync(cmd, [...args, "rebuild", `--nodedir=${nodedir}`, "--release"], {
  cwd: __dirname,
  stdio: "inherit",
});
if (res.status !== 0) {
  const why = res.error ? res.error.message : `exit ${res.status}`;
  const msg = `synthd: native compute core failed to build (${why}); the JavaScript fallback will be used`;
  if (process.env.SYNTHD_REQUIRE_NATIVE === "1") {
    console.error(msg);
    process.exit(1);
  }
  console.warn(msg);
} else {
  buildGpu();
}

/** The first existing path of `candidates`, or undefined. */
function firstExisting(candidates) {
  return candidates.find((p) => p && fs.existsSync(p));
}

/** `nvcc` on PATH or under $CUDA_HOME / /usr/local/cuda, resolved through symlinks and wrappers. */
function findNvcc() {
  const dirs = (process.env.PATH || "").split(path.delimiter).filter(Boolean);
  for (const root of [process.env.CUDA_HOME, process.env.CUDA_PATH, "/usr/local/cuda"]) if (root) dirs.push(path.join(root, "bin"));
  return firstExisting(dirs.map((d) => path.join(d, "nvcc")));
}

/** cuBLAS's include and library directories, or a string saying what is missing. */
function findCublas(nvcc) {
  // The toolkit nvcc belongs to: ask it (a wrapper script may sit on PATH).
  const roots = [];
  if (process.env.SYNTHD_CUBLAS_DIR) roots.push(process.env.SYNTHD_CUBLAS_DIR);
  const probe = spawnSync(nvcc, ["--dryrun", "-x", "cu", "-c", "/dev/null", "-o", "/dev/null"], { encoding: "utf8" });
  const top = /TOP=(\S+)/.exec(`${probe.stdout}${probe.stderr}`);
  if (top) roots.push(top[1]);
  for (const r of [process.env.CUDA_HOME, process.env.CUDA_PATH, path.dirname(path.dirname(fs.realpathSync(nvcc))), "/usr/local/cuda"]) if (r) roots.push(r);
  const incs = [];
  const libs = [];
  for (const r of roots) {
    incs.push(path.join(r, "include"), path.join(r, "targets", "x86_64-linux", "include"));
    libs.push(path.join(r, "lib64"), path.join(r, "lib"), path.join(r, "targets", "x86_64-linux", "lib"));
  }
  incs.push("/usr/include");
  libs.push("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib");
  const inc = incs.find((d) => fs.existsSync(path.join(d, "cublas_v2.h")));
  const lib = libs.find((d) => fs.existsSync(path.join(d, "libcublas.so")) || fs.existsSync(path.join(d, "libcublas.so.13")) || fs.existsSync(path.join(d, "libcublas.so.12")));
  if (!inc) return "cublas_v2.h not found";
  if (!lib) return "libcublas.so not found";
  return { inc, lib };
}

function buildGpu() {
  const out = path.join(__dirname, "build", "Release", "libsynthd_gpu.so");
  fs.rmSync(out, { force: true });
  const skip = (why) => console.log(`synthd: CUDA core skipped (${why}); the CPU path is the only one`);
  if (process.env.SYNTHD_SKIP_GPU === "1") return skip("SYNTHD_SKIP_GPU=1");
  const nvcc = findNvcc();
  if (!nvcc) return skip("nvcc not found");
  const blas = findCublas(nvcc);
  if (typeof blas === "string") return skip(blas);
  // -lcublas needs the unversioned name: link the versioned file directly when only that exists.
  const unversioned = path.join(blas.lib, "libcublas.so");
  const versioned = firstExisting([13, 12].map((v) => path.join(blas.lib, `libcublas.so.${v}`)));
  const link = fs.existsSync(unversioned) ? ["-L", blas.lib, "-lcublas"] : ["-L", blas.lib, "-Xlinker", `-l:${path.basename(versioned)}`];
  const arch = (process.env.SYNTHD_CUDA_ARCH || "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=[sm_90,compute_90]").split(/\s+/).filter(Boolean);
  const argv = [
    "-O3", "--fmad=false", "-std=c++17", ...arch, "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
    "-I", blas.inc, "-o", out, path.join(__dirname, "src", "gpu", "gpu_core.cu"), ...link,
    `-Xlinker`, `-rpath,${blas.lib}`,
  ];
  console.log(`synthd: building the CUDA core with ${nvcc} (cuBLAS ${blas.inc}, ${blas.lib})`);
  const r = spawnSync(nvcc, argv, { stdio: "inherit" });
  if (r.status !== 0) {
    const msg = `synthd: the CUDA core failed to build (${r.error ? r.error.message : `exit ${r.status}`}); the CPU path is the only one`;
    if (process.env.SYNTHD_REQUIRE_GPU === "1") {
      console.error(msg);
      process.exit(1);
    }
    console.warn(msg);
  }
}
