/**
 * Issue 40, "no letter soup, public vocabularies real": a column of short lower-case codes (ISO 639
 * language codes `aar`, `en`; MARC country codes `af`), each once, is a code list. Its values are
 * written in the column's own characters and lengths, never as English nouns (the Frictionless
 * language-codes table wrote `tribe`, `makeover` and `sweatshop` as language codes).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCodeLike } from "../src/sdk/semantic";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

test("short runs of letters are codes; words and longer lower-case values are not", () => {
  assert.deepEqual(["aar", "en", "Fr", "ZW", "tribe", "makeover", "new york"].map(isCodeLike), [true, true, true, true, false, false, false]);
});

test("a column of distinct three-letter lower-case codes writes three-letter lower-case codes, not nouns", async () => {
  const t = table(["code", "speakers"], 300, (i, rng) => [LETTERS[i % 26] + LETTERS[Math.floor(i / 26) % 26] + LETTERS[rng.int(26)], 1000 + rng.int(90000)]);
  const meta = await analyzed(t);
  const codes = decodeIndependent(meta, 400).rows.map((r) => r[0]);
  const off = codes.filter((c) => !/^[a-z]{3}$/.test(c));
  assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${codes.length} codes are not three lower-case letters`);
  assert.ok(new Set(codes).size > 300, "the codes stay distinct");
});
