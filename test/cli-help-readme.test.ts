/**
 * docs/cli.md and `synthd --help` agree, and the README stays a short page that names every command.
 *
 * docs/cli.md has one `## synthd PATH` section per command (`## synthd models ls`, ...). In it, every
 * option of the command's --help has a row of the section's flag table, with its default and its
 * choices; every flag the section's tables or its `synthd PATH ...` examples name is an option of the
 * command; each option's environment variable has a row that names the option; and the `SYNTHD_*`
 * variables the section names are those --help lists. `--url` and `--key`, which every client
 * command takes, are documented once under "Client options". A flag added to a command without
 * docs/cli.md (or the other way round) fails here. The links of both pages must resolve.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command, Option } from "commander";
import { buildProgram } from "../src/cli/main";
import { OUTPUT_EXTENSIONS } from "../src/sdk/io/formats";

const ROOT = join(__dirname, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const CLI_DOC = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");

/** Options every client command takes, and their environment variables: docs/cli.md's "Client options". */
const CLIENT_OPTIONS = ["--url", "--key"];
const CLIENT_ENV = ["SYNTHD_URL", "SYNTHD_API_KEY"];
const CLIENT_SECTION = "Client options";

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

/** The cells of a Markdown table row (`| a | b \| c |` gives `a`, `b \| c`). */
function cells(line: string): string[] {
  return line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
}

/** The flags (`--long`, `-s`) written in `text`. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])(--?[a-zA-Z][\w-]*)/g)].map((m) => m[1]));
}

/** The `SYNTHD_*` environment variables written in `text`. */
function envIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\bSYNTHD_[A-Z0-9_]+\b/g)].map((m) => m[0]));
}

/** What `synthd ... --help` prints for `cmd`, with the text added before and after the options. */
function helpOf(cmd: Command): string {
  let out = "";
  cmd.configureOutput({ writeOut: (t) => (out += t), writeErr: (t) => (out += t) });
  cmd.outputHelp();
  return out;
}

/** A `## ...` section of a Markdown page, its `###` subsections included. */
interface Section {
  text: string;
  /** Rows of its flag tables (first cell `` `-n, --num-rows <n>` ``), by each flag of the first cell: the row's cells. */
  flags: Map<string, string[]>;
  /** Rows of its environment tables (first cell `` `SYNTHD_PORT` ``), by variable: the row's cells. */
  env: Map<string, string[]>;
}

/** The `##` sections of a Markdown page by heading (`synthd fit`, `Client options`, ...). */
function sections(markdown: string): Map<string, Section> {
  const out = new Map<string, Section>();
  for (const part of markdown.split(/^(?=## )/m).slice(1)) {
    const heading = part.slice(3, part.indexOf("\n")).trim();
    const section: Section = { text: part, flags: new Map(), env: new Map() };
    for (const line of part.split("\n")) {
      const row = cells(line);
      if (line.startsWith("| `-")) for (const f of flagsIn(row[0])) section.flags.set(f, row);
      if (line.startsWith("| `SYNTHD_")) section.env.set(row[0].replace(/`/g, ""), row);
    }
    out.set(heading, section);
  }
  return out;
}

/** The flags of the `synthd PATH ...` commands written in `text` (usage lines, examples), up to a comment or the span's end. */
function exampleFlags(text: string, path: string): Set<string> {
  const calls = text.matchAll(new RegExp(`synthd ${path}\\b([^\`\\n#]*)`, "g"));
  return new Set([...calls].flatMap((m) => [...flagsIn(m[1])]));
}

/**
 * What docs/cli.md gets wrong about `program`'s commands, one sentence each; empty when the page
 * and --help agree (see the module comment).
 */
function cliDocProblems(program: Command, doc: string): string[] {
  const problems: string[] = [];
  const all = sections(doc);
  const client = all.get(CLIENT_SECTION);
  if (client === undefined) return [`docs/cli.md has no "## ${CLIENT_SECTION}" section`];
  for (const [path, cmd] of leaves(program)) {
    const section = all.get(`synthd ${path}`);
    if (section === undefined) {
      problems.push(`synthd ${path}: no "## synthd ${path}" section in docs/cli.md`);
      continue;
    }
    const where = `synthd ${path}`;
    const usage = `\`synthd ${path} ${cmd.usage()}\``;
    if (!section.text.includes(usage)) problems.push(`${where}: the section does not give the usage ${usage}`);
    const isClient = cmd.options.some((o) => o.long === CLIENT_OPTIONS[0]);
    if (isClient && !section.text.includes("(#client-options)")) problems.push(`${where}: the section does not link to the client options`);

    const known = new Set(cmd.options.flatMap((o) => [o.long, o.short]).filter((f) => f !== undefined));
    for (const o of cmd.options) {
      const table = isClient && CLIENT_OPTIONS.includes(o.long!) ? client : section;
      problems.push(...optionProblems(where, o, table));
    }
    for (const f of [...section.flags.keys(), ...exampleFlags(section.text, path)]) {
      if (!known.has(f)) problems.push(`${where}: docs/cli.md names ${f}, which --help does not have`);
    }

    const helpEnv = envIn(helpOf(cmd));
    const docEnv = envIn(section.text);
    for (const v of helpEnv) if (!docEnv.has(v) && !CLIENT_ENV.includes(v)) problems.push(`${where}: --help reads ${v}, the section does not say so`);
    for (const v of docEnv) if (!helpEnv.has(v)) problems.push(`${where}: the section says it reads ${v}, --help does not`);
  }
  return problems;
}

/** What the section's tables get wrong about one option: its row, default, choices and environment variable. */
function optionProblems(where: string, o: Option, table: Section): string[] {
  const flag = o.long ?? o.short!;
  const row = table.flags.get(flag);
  if (row === undefined) return [`${where}: ${o.flags} is in --help but has no row in docs/cli.md`];
  const problems: string[] = [];
  if (o.short !== undefined && o.long !== undefined && table.flags.get(o.short) !== row) {
    problems.push(`${where}: the row of ${o.long} does not give its short form ${o.short}`);
  }
  const [, what = "", byDefault = ""] = row;
  if (o.defaultValue !== undefined && typeof o.defaultValue !== "boolean" && !byDefault.includes(`\`${String(o.defaultValue)}\``)) {
    problems.push(`${where}: ${flag}'s default is ${String(o.defaultValue)}, docs/cli.md's default cell says "${byDefault}"`);
  }
  for (const choice of o.argChoices ?? []) {
    if (!what.includes(`\`${choice}\``)) problems.push(`${where}: ${flag} takes ${choice}, its row does not name it`);
  }
  if (o.envVar !== undefined && !(table.env.get(o.envVar)?.join(" ") ?? "").includes(`\`${flag}\``)) {
    problems.push(`${where}: ${flag} reads ${o.envVar}, docs/cli.md has no row of ${o.envVar} naming ${flag}`);
  }
  return problems;
}

test("docs/cli.md has a section per command that documents every option, default, choice and environment variable of its --help, and no other", () => {
  assert.deepEqual(cliDocProblems(buildProgram(), CLI_DOC), []);
});

test("a flag added to a command without docs/cli.md, or a row of a flag the command lacks, is reported", () => {
  const program = buildProgram();
  leaves(program).get("sample")!.option("--undocumented-flag", "an option no page describes");
  const added = cliDocProblems(program, CLI_DOC);
  assert.ok(added.some((p) => p.startsWith("synthd sample: --undocumented-flag is in --help")), added.join("\n"));

  const realRow = CLI_DOC.split("\n").find((l) => l.startsWith("| `--real <file>`"))!;
  const extraRow = CLI_DOC.replace(realRow, `${realRow}\n| \`--no-such-flag\` | nothing | none |`);
  const extra = cliDocProblems(buildProgram(), extraRow);
  assert.ok(extra.includes("synthd sample: docs/cli.md names --no-such-flag, which --help does not have"), extra.join("\n"));
});

test("sample's and impute's -o, in --help and in docs/cli.md, name every extension that picks an output format", () => {
  const program = buildProgram();
  const doc = sections(CLI_DOC);
  for (const name of ["sample", "impute"]) {
    const o = program.commands.find((c) => c.name() === name)!.options.find((x) => x.long === "--output")!;
    const row = doc.get(`synthd ${name}`)!.flags.get("--output")!.join(" ");
    for (const ext of Object.keys(OUTPUT_EXTENSIONS)) {
      assert.ok(o.description.includes(ext), `${name} -o: ${ext} in "${o.description}"`);
      assert.ok(row.includes(`\`${ext}\``), `${name} -o: ${ext} in docs/cli.md's "${row}"`);
    }
  }
});

test("the README is under 120 lines, none over 200 characters, and its command table has a row per command", () => {
  const lines = README.split("\n");
  if (lines.at(-1) === "") lines.pop();
  assert.ok(lines.length < 120, `the README has ${lines.length} lines`);
  const long = lines.map((l, i) => `line ${i + 1}: ${l.length} characters`).filter((_, i) => lines[i].length > 200);
  assert.deepEqual(long, []);

  const named = lines.filter((l) => l.startsWith("| ")).map((l) => /`synthd ([^`]*)`/.exec(cells(l)[0])?.[1]);
  const commands = [...leaves(buildProgram()).keys()];
  assert.deepEqual(
    commands.filter((c) => !named.includes(c)),
    [],
    "every command has a README row whose first cell names it",
  );
  assert.deepEqual(
    named.filter((c) => c !== undefined && !commands.includes(c)),
    [],
    "every README row names a command of synthd",
  );
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown page's headings (outside code blocks; repeated headings get `-1`, `-2`, ...). */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (m === null) continue;
    const base = anchorOf(m[1].trim());
    let anchor = base;
    for (let i = 1; out.has(anchor); i++) anchor = `${base}-${i}`;
    out.add(anchor);
  }
  return out;
}

test("every relative link of the README and docs/cli.md names a file that exists, and a heading of it", () => {
  const problems: string[] = [];
  for (const page of ["README.md", "docs/cli.md"]) {
    const text = readFileSync(join(ROOT, page), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split("#");
      const path = file === "" ? join(ROOT, page) : join(ROOT, dirname(page), file);
      if (!existsSync(path)) problems.push(`${page}: ${target}: no such file`);
      else if (anchor !== undefined && !anchors(readFileSync(path, "utf8")).has(anchor)) problems.push(`${page}: ${target}: no such heading`);
    }
  }
  assert.deepEqual(problems, []);
});
