/**
 * Extraction in passes with counts (issue 42 item 1, docs/extract.md): the worker threads' byte
 * ranges of a CSV file give the metadata of the one-thread reader, whatever the thread count; a
 * table larger than the sample keeps exact marginals; what the byte parser cannot decide goes to
 * the csv-parse reader, errors and lines included.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { analyzeTable, DataError, type Analysis } from "../src/sdk";
import { RankedSample, sampleRank } from "../src/sdk/metadata/csv-chunks";
import { removeDir, tempDir } from "../bench/harness";

let dir = "";
before(() => {
  dir = tempDir("synthd-extract-passes-");
});
after(() => removeDir(dir));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const COLORS = ["red", "green", "blue", "  teal  ", "ünïcode", ""];

/** A mixed table: numbers, categories with blanks and padding, quoted cells with commas, quotes and newlines. */
function mixedCsv(rows: number, eol = "\n"): string {
  const lines = ["id,color,amount,note,when"];
  for (let r = 0; r < rows; r++) {
    const note = r % 7 === 0 ? `"says ""hi"", twice"` : r % 11 === 0 ? `"two${eol}lines"` : r % 5 === 0 ? `"a, b"` : `plain${r % 3}`;
    const when = `2024-0${1 + (r % 9)}-1${r % 10}`;
    lines.push([r, COLORS[r % COLORS.length], ((r * 37) % 101) / 4, note, when].join(","));
  }
  return lines.join(eol) + eol;
}

function withoutSource(a: Analysis): unknown {
  return JSON.parse(JSON.stringify(a.metadata));
}

test("worker threads give the one-thread metadata, codes included, for 1 to 4 threads (LF and CRLF)", async () => {
  for (const eol of ["\n", "\r\n"]) {
    const path = file(`mixed${eol.length}.csv`, mixedCsv(3000, eol));
    const one = await analyzeTable(path, { threads: 0 });
    for (const threads of [1, 2, 4]) {
      const a = await analyzeTable(path, { threads });
      assert.deepEqual(withoutSource(a), withoutSource(one), `${threads} threads, eol ${JSON.stringify(eol)}`);
      assert.equal(a.n, 3000);
      a.codes.forEach((c, f) => assert.deepEqual(Array.from(c), Array.from(one.codes[f]), `codes of ${a.columns[f]}`));
    }
    // The values are read as csv-parse reads them: unquoted, trimmed, escapes undone.
    const color = one.metadata.value_mappings!.color;
    assert.ok("teal" in color && "ünïcode" in color, JSON.stringify(color));
    const note = one.metadata.value_mappings!.note;
    assert.ok('says "hi", twice' in note && "a, b" in note && `two${eol}lines` in note, JSON.stringify(note));
  }
});

test("worker threads report each pass's progress up to all rows and the whole file", async () => {
  const path = file("progress.csv", mixedCsv(2000));
  const seen: { rows: number; fraction?: number }[] = [];
  const a = await analyzeTable(path, { threads: 2, sampleRows: 500, onReadProgress: (p) => seen.push({ ...p }) });
  const ends = seen.filter((p, i) => i === seen.length - 1 || seen[i + 1].rows < p.rows);
  assert.equal(ends.length, 2, JSON.stringify(seen));
  for (const p of ends) assert.deepEqual(p, { rows: a.n, fraction: 1 });
});

test("a table larger than the sample: exact 1-way and 2-way marginals, the sample's rows in codes, the same for any thread count", async () => {
  const path = file("sampled.csv", mixedCsv(5000));
  const whole = await analyzeTable(path, { threads: 0 });
  const runs = await Promise.all([0, 1, 3].map((threads) => analyzeTable(path, { threads, sampleRows: 700 })));
  for (const a of runs) {
    assert.equal(a.n, 5000);
    assert.equal(a.sampledRows, 700);
    assert.equal(a.codes[0].length, 700);
    assert.deepEqual(a.metadata.empirical_probs, whole.metadata.empirical_probs);
    assert.deepEqual(a.metadata.marginals, whole.metadata.marginals);
    assert.deepEqual(withoutSource(a), withoutSource(runs[0]));
  }
  assert.equal(whole.sampledRows, undefined);
});

test("a range that starts inside a quoted cell, or a record the byte parser refuses, is read by csv-parse", async () => {
  // Most line feeds are inside quotes: the cuts between ranges land in quoted cells.
  const lines = ["a,b,c"];
  for (let r = 0; r < 400; r++) lines.push(`${r % 4},"x\n\n\n\n\n\n\n\n${r % 3}\n",${r % 2}`);
  const quoted = file("quoted.csv", lines.join("\n") + "\n");
  const one = await analyzeTable(quoted, { threads: 0 });
  for (const threads of [2, 3, 5]) assert.deepEqual(withoutSource(await analyzeTable(quoted, { threads })), withoutSource(one));
  // A quote inside an unquoted cell: csv-parse's error, with its line, whatever the threads.
  const bad = file("bad-quote.csv", `a,b\n${"1,2\n".repeat(50)}3,x"y\n`);
  await assert.rejects(analyzeTable(bad, { threads: 2 }), (e: unknown) => e instanceof DataError && /line 52/.test(e.message));
  // A ragged record: the reader's message naming its line.
  const ragged = file("ragged.csv", `a,b\n${"1,2\n".repeat(30)}1,2,3\n${"1,2\n".repeat(30)}`);
  await assert.rejects(analyzeTable(ragged, { threads: 2 }), /line 32 has 3 fields but the header has 2/);
});

test("first lines are the file's: a datetime value that does not parse is named at its line", async () => {
  const rows = ["d,x"];
  for (let r = 0; r < 300; r++) rows.push(`2021-03-${String(1 + (r % 28)).padStart(2, "0")},${r % 5}`);
  rows.push("", "03/04/2001,1");
  for (let r = 0; r < 300; r++) rows.push(`2022-05-${String(1 + (r % 28)).padStart(2, "0")},${r % 5}`);
  const path = file("dates.csv", rows.join("\n") + "\n");
  for (const threads of [0, 3]) {
    await assert.rejects(analyzeTable(path, { threads }), (e: unknown) => e instanceof DataError && /line 303\b/.test(e.message) && /03\/04\/2001/.test(e.message));
  }
});

test("bottom-k sampling keeps the same rows however the keys are split and merged", () => {
  const keys = Array.from({ length: 5000 }, (_, i) => i * 3 + 2);
  const kept = (parts: number[][]): number[] => {
    const all: { key: number; rank: number }[] = [];
    for (const part of parts) {
      const s = new RankedSample(100, 1);
      for (const k of part) {
        const rank = sampleRank(k);
        if (s.wants(rank, k)) s.add(rank, k, k, [k]);
      }
      const rows = s.rows();
      rows.keys.forEach((key, i) => all.push({ key, rank: rows.ranks[i] }));
    }
    return all.sort((a, b) => a.rank - b.rank || a.key - b.key).slice(0, 100).map((x) => x.key).sort((a, b) => a - b);
  };
  const whole = kept([keys]);
  assert.equal(whole.length, 100);
  assert.deepEqual(kept([keys.slice(0, 1234), keys.slice(1234)]), whole);
  assert.deepEqual(kept([keys.slice(0, 10), keys.slice(10, 4000), keys.slice(4000)]), whole);
  // Spread over the keys, not their head.
  assert.ok(whole[whole.length - 1] > keys[keys.length - 1] / 2);
});
