/**
 * Where `synthd fit` keeps near-copy filters for `synthd sample` (`src/cli/commands/near-copy-store.ts`):
 * the directory's precedence (SYNTHD_FILTER_DIR, XDG_DATA_HOME, ~/.local/share), the machine key
 * and the filter files made owner-only, a filter loaded back flagging the same rows, the reason
 * stored when fit built none, removed for `models rm`, and ids that are not file names refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { Table } from "../src/sdk";
import { NearCopyFilter } from "../src/sdk/privacy/filter";
import { filterDir, loadFilter, machineKey, removeFilter, saveFilter } from "../src/cli/commands/near-copy-store";

const mode = (p: string): number => statSync(p).mode & 0o777;

test("the filters' directory: SYNTHD_FILTER_DIR, else XDG_DATA_HOME/synthd, else ~/.local/share/synthd", () => {
  assert.equal(filterDir({ SYNTHD_FILTER_DIR: "/x/f", XDG_DATA_HOME: "/y" }), "/x/f");
  assert.equal(filterDir({ XDG_DATA_HOME: "/y" }), join("/y", "synthd", "near-copy-filters"));
  assert.equal(filterDir({}), join(homedir(), ".local", "share", "synthd", "near-copy-filters"));
});

test("fit's files: the key and the filter owner-only, loaded back the filter flags the same rows; a reason when none; bad ids refused", async () => {
  const root = mkdtempSync(join(tmpdir(), "synthd-filters-test-"));
  const old = process.umask(0o022);
  try {
    const dir = join(root, "a", "filters");
    assert.equal(loadFilter(dir, "mdl_000000000001"), undefined, "nothing stored yet");
    assert.equal(machineKey(dir, false), undefined);
    const key = machineKey(dir, true)!;
    assert.equal(key.length, 32);
    assert.deepEqual(machineKey(dir, true), key, "made once, then read");
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(join(dir, "key")), 0o600);

    const real: Table = { columns: ["a", "b", "c"], rows: Array.from({ length: 50 }, (_, i) => [`a${i % 7}`, `b${i % 11}`, String(i)]) };
    const filter = (await NearCopyFilter.build(real, {}, key)).filter!;
    const path = saveFilter(dir, "mdl_000000000001", filter)!;
    assert.equal(mode(path), 0o600);
    const stored = loadFilter(dir, "mdl_000000000001");
    assert.ok(stored && "filter" in stored, JSON.stringify(stored));
    const probe: Table = { columns: real.columns, rows: [["a1", "b1", "1"], ["a1", "zz", "1"], ["zz", "zz", "1"]] };
    assert.deepEqual([...(await stored.filter.flags(probe))], [...(await filter.flags(probe))]);
    assert.deepEqual([...(await stored.filter.flags(probe))].slice(0, 2), [1, 1]);

    saveFilter(dir, "mdl_000000000002", undefined, "fewer than 2 compared columns or real rows");
    assert.deepEqual(loadFilter(dir, "mdl_000000000002"), { none: "fewer than 2 compared columns or real rows" });
    assert.equal(mode(join(dir, "mdl_000000000002.none")), 0o600);
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".partial")), [], "no temporary file left");

    // synthd models rm removes what fit kept for the model, and nothing else.
    removeFilter(dir, "mdl_000000000002");
    assert.equal(loadFilter(dir, "mdl_000000000002"), undefined);
    assert.ok(loadFilter(dir, "mdl_000000000001") !== undefined);

    assert.throws(() => loadFilter(dir, "../key"), /is not a model id/);
    rmSync(join(dir, "key"));
    assert.throws(() => loadFilter(dir, "mdl_000000000001"), /has no key beside it/);
  } finally {
    process.umask(old);
    rmSync(root, { recursive: true, force: true });
  }
});
