/**
 * The README's command table and `synthd --help` agree: every option of every command's help is in
 * the README row of that command, every flag a row names is an option of its command, the
 * environment variables a command's help lists are those its README rows name, and `-o`'s help
 * names every extension that picks an output format. A flag added to a command without the README
 * (or the other way round) fails here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../src/cli/main";
import { OUTPUT_EXTENSIONS } from "../src/sdk/io/formats";

const README = readFileSync(join(__dirname, "..", "..", "README.md"), "utf8");

/** Every command without subcommands, by its path (`models ls`, `keys create`, `fit`, ...). */
function leaves(c: Command, path: string[] = []): Map<string, Command> {
  const out = new Map<string, Command>();
  for (const sub of c.commands) {
    const p = [...path, sub.name()];
    if (sub.commands.length === 0) out.set(p.join(" "), sub);
    else for (const [k, v] of leaves(sub, p)) out.set(k, v);
  }
  return out;
}

/** A README row of a command: the `synthd ...` code spans of its first cell, and the whole row. */
interface Row {
  spans: string;
  text: string;
}

/**
 * The README's command table by command path (`models ls`, `fit`, ...). A row counts for every
 * command its first cell names: `synthd models ls \| get ID \| rm ID` for the three of them.
 */
function readmeRows(program: Command): Map<string, Row> {
  const rows = new Map<string, Row>();
  const table = README.split("\n").filter((l) => l.startsWith("| `synthd "));
  assert.ok(table.length >= 10, "the README has its command table");
  for (const line of table) {
    const first = line.split(/(?<!\\)\|/)[1]; // cells are split by | not written as \|
    for (const [, span] of first.matchAll(/`(synthd [^`]*)`/g)) {
      const [head, ...others] = span.split("\\|").map((a) => a.trim().split(/\s+/));
      let parent: Command = program;
      let cmd: Command = program;
      const path: string[] = [];
      for (const w of head.slice(1)) {
        const sub = cmd.commands.find((s) => s.name() === w);
        if (sub === undefined) break;
        [parent, cmd] = [cmd, sub];
        path.push(w);
      }
      assert.ok(path.length > 0, `a README row names an unknown command: ${span}`);
      // an alternative that starts with a sibling's name names that command (`\|` also separates option values)
      const siblings = path.length > 1 ? others.filter((a) => parent.commands.some((s) => s.name() === a[0])) : [];
      for (const p of [path, ...siblings.map((a) => [...path.slice(0, -1), a[0]])]) {
        const key = p.join(" ");
        const had = rows.get(key);
        rows.set(key, { spans: `${had?.spans ?? ""} ${span}`, text: `${had?.text ?? ""} ${line}` });
      }
    }
  }
  return rows;
}

/** The flags (`--long`, `-s`) written in `text`. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])(--?[a-zA-Z][\w-]*)/g)].map((m) => m[1]));
}

/** What `synthd ... --help` prints for `cmd`, with the text added before and after the options. */
function helpOf(cmd: Command): string {
  let out = "";
  cmd.configureOutput({ writeOut: (t) => (out += t), writeErr: (t) => (out += t) });
  cmd.outputHelp();
  return out;
}

/** The `SYNTHD_*` environment variables written in `text`. */
function envIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\bSYNTHD_[A-Z_]+\b/g)].map((m) => m[0]));
}

/** Options every client command takes, and their environment variables, documented once under the table. */
const CLIENT_OPTIONS = ["--url", "--key"];
const CLIENT_ENV = ["SYNTHD_URL", "SYNTHD_API_KEY"];

test("every option of every command's --help is in the README's row for that command, and every flag of a row is an option of its command", () => {
  const program = buildProgram();
  const rows = readmeRows(program);
  const problems: string[] = [];
  for (const [path, cmd] of leaves(program)) {
    const row = rows.get(path);
    if (row === undefined) {
      problems.push(`synthd ${path}: no row in the README's command table`);
      continue;
    }
    const written = flagsIn(row.spans);
    const known = new Set<string>();
    for (const o of cmd.options) {
      for (const f of [o.long, o.short]) if (f) known.add(f);
      if (o.long && CLIENT_OPTIONS.includes(o.long)) continue;
      if (!(o.long !== undefined && written.has(o.long)) && !(o.short !== undefined && written.has(o.short))) {
        problems.push(`synthd ${path}: ${o.flags} is in --help but not in the README`);
      }
    }
    for (const f of written) if (!known.has(f)) problems.push(`synthd ${path}: the README names ${f}, which --help does not have`);
  }
  assert.deepEqual(problems, []);
  for (const f of CLIENT_OPTIONS) assert.ok(README.includes(`\`${f}\``), `the README says what ${f} does`);
});

test("the environment variables of each command's --help are those its README rows name", () => {
  const program = buildProgram();
  const rows = readmeRows(program);
  const problems: string[] = [];
  for (const [path, cmd] of leaves(program)) {
    const help = envIn(helpOf(cmd));
    const row = envIn(rows.get(path)?.text ?? "");
    for (const v of help) if (!row.has(v) && !CLIENT_ENV.includes(v)) problems.push(`synthd ${path}: --help reads ${v}, the README's row does not say so`);
    for (const v of row) if (!help.has(v)) problems.push(`synthd ${path}: the README says it reads ${v}, --help does not`);
  }
  assert.deepEqual(problems, []);
  assert.match(README, /Client commands read `SYNTHD_URL` and `SYNTHD_API_KEY`/);
});

test("sample's and impute's -o help names every extension that picks an output format", () => {
  const program = buildProgram();
  for (const name of ["sample", "impute"]) {
    const o = program.commands.find((c) => c.name() === name)!.options.find((x) => x.long === "--output")!;
    for (const ext of Object.keys(OUTPUT_EXTENSIONS)) assert.ok(o.description.includes(ext), `${name} -o: ${ext} in "${o.description}"`);
  }
});
