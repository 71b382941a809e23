/**
 * The layout rules of docs/architecture.md, read from the sources' own import statements: no
 * import cycle among the files of `src` (type-only imports, re-exports and `require` calls count:
 * each one is an arrow a reader follows), and no file imports from a floor above its own (the
 * "Floors" table). `ts.preProcessFile` (the TypeScript compiler's own import scanner) reads the
 * specifiers; relative ones are resolved as the compiler does (`x.ts`, `x/index.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import * as ts from "typescript";

const ROOT = resolve(__dirname, "..", "..");
const SRC = join(ROOT, "src");

/** Every .ts file under `dir` (declaration files excluded), as paths relative to the repository. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith(".ts") && !p.endsWith(".d.ts") ? [relative(ROOT, p)] : [];
  });
}

/** The files of `src` that `file` imports (relative specifiers only; packages are not ours). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
  const out: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const base = resolve(ROOT, dirname(file), fileName.replace(/\.js$/, ""));
    const target = [`${base}.ts`, join(base, "index.ts")].find((p) => existsSync(p));
    assert.ok(target !== undefined, `${file}: import "${fileName}" resolves to no source file`);
    out.push(relative(ROOT, target));
  }
  return out;
}

/** The import graph of `src`: file -> the files it imports. */
function graph(): Map<string, string[]> {
  return new Map(sources(SRC).map((f) => [f, importsOf(f)]));
}

/** Strongly connected components of more than one file, or of one file importing itself (Tarjan). */
function cycles(g: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** The floor of a source file (docs/architecture.md, "Floors"): the first matching prefix. */
const FLOORS: [string, number][] = [
  ["src/cli/", 7],
  ["src/cluster/", 6],
  ["src/server/", 5],
  ["src/usage/", 4],
  ["src/engine/", 4],
  ["src/model/", 3],
  ["src/sdk/", 3],
  ["src/rule-scores.ts", 3],
  ["src/store/", 2],
  ["src/contract/", 1],
];

function floorOf(file: string): number {
  const hit = FLOORS.find(([prefix]) => file.startsWith(prefix));
  assert.ok(hit !== undefined, `${file} is on no floor of docs/architecture.md`);
  return hit[1];
}

test("no import cycle among the files of src (type-only imports and require calls included)", () => {
  const g = graph();
  assert.ok(g.size > 100, `read ${g.size} files`);
  assert.deepEqual(cycles(g), []);
});

test("the cycle check finds a cycle when there is one", () => {
  const g = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a", "d"]],
    ["d", []],
    ["e", ["e"]],
  ]);
  assert.deepEqual(cycles(g), [["a", "b", "c"], ["e"]]);
});

test("no file imports from a floor above its own (docs/architecture.md, Floors)", () => {
  const upward: string[] = [];
  for (const [file, targets] of graph()) {
    for (const t of targets) if (floorOf(t) > floorOf(file)) upward.push(`${file} (floor ${floorOf(file)}) -> ${t} (floor ${floorOf(t)})`);
  }
  assert.deepEqual(upward, []);
});
