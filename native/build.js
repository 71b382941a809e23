#!/usr/bin/env node
/**
 * Builds the C++ compute core (native/) with node-gyp during `npm install` / `npm ci`.
 *
 * Headers come from the running Node's own installation (`--nodedir` = the directory above
 * `process.execPath`'s bin), so the build never downloads anything. A failed build does not fail
 * the install: synthd then uses its JavaScript fallback and logs that it does (see
 * src/model/native.ts). Set SYNTHD_REQUIRE_NATIVE=1 to make a failed build fatal (CI does).
 */
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const nodedir = path.dirname(path.dirname(process.execPath));
const gyp = process.env.npm_config_node_gyp;
const [cmd, args] = gyp
  ? [process.execPath, [gyp]]
  : ["node-gyp", []];
const res = spawnSync(cmd, [...args, "rebuild", `--nodedir=${nodedir}`, "--release"], {
  cwd: __dirname,
  stdio: "inherit",
});
if (res.status !== 0) {
  const msg = `synthd: native compute core failed to build (exit ${res.status}); the JavaScript fallback will be used`;
  if (process.env.SYNTHD_REQUIRE_NATIVE === "1") {
    console.error(msg);
    process.exit(1);
  }
  console.warn(msg);
}
