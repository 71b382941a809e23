/**
 * Issue 40, "public vocabularies real": a URL column of one site's pages (fivethirtyeight's
 * avengers: `http://marvel.wikia.com/Henry_Pym_(Earth-616)`) writes fresh pages on that site, not
 * invented hosts (`https://www.kemmer.com`); a column whose sites are each in fewer than k rows
 * keeps invented hosts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

const FIRST = ["Henry", "Janet", "Anthony", "Robert", "Thor", "Steven", "Clint", "Pietro", "Wanda", "Natalia"];
const LAST = ["Pym", "Dyne", "Stark", "Banner", "Odinson", "Rogers", "Barton", "Maximoff", "Romanova", "Lang"];

test("a URL column of one site's pages writes fresh pages on that site", async () => {
  const t = table(["URL", "appearances"], 200, (i, rng) => [`http://marvel.wikia.com/${FIRST[i % 10]}_${LAST[Math.floor(i / 10) % 10]}${i >= 100 ? "_" + i : ""}_(Earth-616)`, 10 + rng.int(1000)]);
  const meta = await analyzed(t);
  const real = new Set(t.rows.map((r) => r[0]));
  const urls = decodeIndependent(meta, 300).rows.map((r) => String(r[0]));
  const off = urls.filter((u) => !u.startsWith("http://marvel.wikia.com/"));
  assert.deepEqual(off.slice(0, 5), [], `${off.length} of ${urls.length} URLs are not on the column's site`);
  const form = urls.filter((u) => /^http:\/\/marvel\.wikia\.com\/\p{Lu}\p{Ll}+_\p{Lu}\p{Ll}+(_\d+)?_\(Earth-616\)$/u.test(u));
  assert.ok(form.length > 0.9 * urls.length, `pages written as the column's: ${urls.slice(0, 3).join(", ")}`);
  assert.equal(urls.filter((u) => real.has(u)).length, 0, "no real page is written back");
});

test("a URL column whose hosts are each in one row writes invented hosts, none real", async () => {
  const t = table(["website", "visits"], 200, (i, rng) => [`https://www.site${i}x${rng.int(1000)}.org/`, 10 + rng.int(1000)]);
  const meta = await analyzed(t);
  const hosts = new Set(t.rows.map((r) => new URL(String(r[0])).host));
  const urls = decodeIndependent(meta, 100).rows.map((r) => String(r[0]));
  assert.equal(urls.filter((u) => /^https?:/.test(u) && hosts.has(new URL(u).host)).length, 0);
});
