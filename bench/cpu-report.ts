/**
 * Preloaded into a benchmarked CLI child (`node --require dist/bench/cpu-report.js`, through
 * NODE_OPTIONS): when the process exits, writes its own CPU time to the file named by
 * `SYNTHD_BENCH_CPU_FILE` as JSON `{ user_s, system_s }`. `process.cpuUsage()` is getrusage(2)
 * of the whole process (RUSAGE_SELF): every thread (the main thread, V8's GC and compiler
 * threads, libuv's pool, WebAssembly) from start to exit, not a child's children.
 */
import { writeFileSync } from "node:fs";

const file = process.env.SYNTHD_BENCH_CPU_FILE;
if (file) {
  process.on("exit", () => {
    const u = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ user_s: u.user / 1e6, system_s: u.system / 1e6 }));
  });
}
