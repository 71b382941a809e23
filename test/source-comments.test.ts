/**
 * Comments in src say what and why, and stay a minority of the lines (issue 43: at most 0.30 of
 * the code lines; measurement histories and rejected alternatives go to docs/ and commit messages).
 * A comment line is a non-blank line whose first non-space characters are `//`, `/*` or `*`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SRC = join(__dirname, "..", "..", "src");
const MAX_RATIO = 0.3;

/** [comment lines, code lines] of one TypeScript source text. */
export function commentAndCodeLines(text: string): [number, number] {
  let comments = 0;
  let code = 0;
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "") continue;
    if (t.startsWith("//") || t.startsWith("/*") || t.startsWith("*")) comments++;
    else code++;
  }
  return [comments, code];
}

test("the line count: blank lines are neither, a comment's lines are comments, code is code", () => {
  assert.deepEqual(commentAndCodeLines("/**\n * Doc.\n */\nconst a = 1; // trailing\n\n  // own line\nf();\n"), [4, 2]);
});

test(`comment lines in src are at most ${MAX_RATIO} of the code lines`, () => {
  let comments = 0;
  let code = 0;
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const [c, k] = commentAndCodeLines(readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8"));
    comments += c;
    code += k;
  }
  assert.ok(code > 20000, `src read: ${code} code lines`);
  const ratio = comments / code;
  assert.ok(ratio <= MAX_RATIO, `${comments} comment lines / ${code} code lines = ${ratio.toFixed(3)}`);
});
