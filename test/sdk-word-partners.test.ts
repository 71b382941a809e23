/**
 * Words of a text tied to one value of another column (issue 40, `src/sdk/semantic/word-partners.ts`):
 * a fresh mission name's `Starlink` is written only beside SpaceX, on small tables made here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import typia from "typia";
import type { CreateModelRequest } from "../src/contract";
import { Decoder, Rng } from "../src/sdk";
import { analyzed, decodeIndependent, cells } from "./rules-fixtures";

/** 360 launches: each company's missions in its own words, every name distinct, a shared word (`Mission`). */
function launches(): { columns: string[]; rows: string[][] } {
  const rng = new Rng(3);
  const rows: string[][] = [];
  const kinds: [string, (i: number) => string][] = [
    ["SpaceX", (i) => `Starlink Group ${1 + (i % 9)}-${10 + i}`],
    ["Roscosmos", (i) => `Progress MS-${100 + i}`],
    ["ISRO", (i) => `Cartosat ${1 + (i % 4)}${"ABCD"[i % 4]} Mission ${i}`],
    ["NASA", (i) => `Mission ${i} Explorer`],
  ];
  for (let i = 0; i < 360; i++) {
    const [company, name] = kinds[i % 4];
    rows.push([name(i), company, String(1 + rng.int(5))]);
  }
  return { columns: ["mission", "company", "crew"], rows };
}

test("a word seen only beside one value of another column is written only beside it; a word shared by several is free", async () => {
  const meta = await analyzed(launches());
  assert.ok(typia.is<CreateModelRequest["metadata"]>(meta), "the metadata passes the contract's validator");
  const st = meta.column_stats!.mission;
  assert.equal(st.type, "id");
  const wp = (st.id_shape as { semantic?: { word_partner?: { column: string; words: [string, number][] } } }).semantic?.word_partner;
  assert.ok(wp, "mission has tied words");
  assert.equal(wp.column, "company");
  const codeOf = meta.value_mappings!.company;
  const tied = new Map(wp.words);
  assert.equal(tied.get("Starlink"), codeOf.SpaceX);
  assert.equal(tied.get("Progress"), codeOf.Roscosmos);
  assert.equal(tied.has("Mission"), false, "a word of two companies' missions ties to neither");

  // Codes drawn independently: the company of each row is unrelated to its mission's draw.
  const out = cells(decodeIndependent(meta, 400), ["mission", "company"]);
  const starlink = out.filter(([m]) => /Starlink/.test(m));
  assert.ok(starlink.length > 40, `${starlink.length} Starlink missions`);
  assert.deepEqual(starlink.filter(([, c]) => c !== "SpaceX").slice(0, 5), [], "Starlink only beside SpaceX");
  assert.deepEqual(out.filter(([m, c]) => /Progress/.test(m) && c !== "Roscosmos").slice(0, 5), []);
  assert.equal(new Set(out.map(([m]) => m)).size, out.length, "mission names stay distinct");
});

test("tied words are kept after the rows' cells change: the writer exchanges texts between rows", async () => {
  const meta = await analyzed(launches());
  const d = new Decoder(meta);
  const f = meta.features.indexOf("mission");
  const g = meta.features.indexOf("company");
  const rows = [
    ["Starlink Group 1-99", "ISRO", "1"],
    ["Mission 7", "SpaceX", "2"],
    ["Progress MS-900", "Roscosmos", "3"],
  ].map((r) => meta.features.map((name) => r[["mission", "company", "crew"].indexOf(name)]));
  const grid = { length: rows.length, get: (r: number, c: number) => rows[r][c], set: (r: number, c: number, t: string) => void (rows[r][c] = t) };
  d.enforceCells(grid, 1);
  assert.deepEqual(rows.map((r) => [r[f], r[g]]), [
    ["Mission 7", "ISRO"],
    ["Starlink Group 1-99", "SpaceX"],
    ["Progress MS-900", "Roscosmos"],
  ]);
});
