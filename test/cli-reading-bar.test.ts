/**
 * `synthd fit`'s extraction bar (`src/cli/progress.ts` readingBar): what it prints of a file read
 * (share, rows, rows/s, time left), of a database read (rows and rows/s, no share), and that a
 * second pass starts a fresh bar. The stream is not a terminal, so each drawn line arrives once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { readingBar, timeLeft } from "../src/cli/progress";

function sink(): { stream: Writable; text(): string } {
  let out = "";
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  return { stream, text: () => out };
}

test("the reading bar shows the share read, rows, rows/s and time left of a file", () => {
  const s = sink();
  const bar = readingBar("t.csv", s.stream);
  bar.update({ rows: 4096, fraction: 0.25 });
  bar.update({ rows: 16384, fraction: 1 });
  bar.stop();
  const lines = s.text().trim().split("\n");
  assert.match(lines[0], /^reading \|-+\| 0% \| 0 rows \| - rows\/s \| - left$/, "unknown at the start");
  assert.match(lines.at(-1)!, /^reading \|[=█]+\| 100% \| 16,384 rows \| [\d,-]+ rows\/s \| 0s left$/, s.text());
});

test("time left reads as seconds, minutes or hours", () => {
  assert.deepEqual([timeLeft(4.4), timeLeft(185), timeLeft(3720)], ["4s", "3m 05s", "1h 02m"]);
});

test("a database read shows rows and rows/s without a share, and a second pass restarts the bar", () => {
  const s = sink();
  const bar = readingBar("postgres://h/db table t", s.stream);
  bar.update({ rows: 4096 });
  bar.update({ rows: 8192 });
  bar.update({ rows: 4096 });
  bar.stop();
  const lines = s.text().trim().split("\n");
  assert.ok(lines.every((l) => /^reading postgres:\/\/h\/db table t \| [\d,]+ rows \| [\d,-]+ rows\/s$/.test(l)), s.text());
  assert.deepEqual(lines.map((l) => /\| ([\d,]+) rows/.exec(l)![1]), ["0", "8,192", "0", "4,096"], "each pass drawn at its start and its stop");
});
