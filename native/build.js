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
}
