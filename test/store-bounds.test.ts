/**
 * Both stores (LMDB and PostgreSQL) under the bounds of issue 39: a List cursor that is not a
 * model id names no model (never an LMDB key error), and `createModel` with a models-per-org cap
 * counts the org's models (both environments) in its own transaction, so the cap holds under
 * concurrent creates and a refused create stores nothing.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CursorNotFoundError, LmdbStore, ModelLimitError, type Store } from "../src/store";
import { PgStore } from "../src/store/postgres/pgStore";
import { freshDatabase } from "./pg-helpers";
import { META, modelRecord } from "./store-fixtures";

interface Opened {
  store: Store;
  close(): Promise<void>;
}

const kinds: [string, () => Promise<Opened>][] = [
  [
    "lmdb",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "synthd-store-bounds-"));
      const store = new LmdbStore(dir);
      return {
        store,
        async close() {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    "postgres",
    async () => {
      const db = await freshDatabase();
      const store = await PgStore.open(db.url);
      return {
        store,
        async close() {
          await store.close();
          await db.drop();
        },
      };
    },
  ],
];

for (const [kind, open] of kinds) {
  describe(`${kind} store`, () => {
    let o: Opened;
    before(async () => {
      o = await open();
    });
    after(async () => {
      await o?.close();
    });

    test("a List cursor of 4,093 characters or more, or not of a model id's form, names no model (CursorNotFoundError)", async () => {
      const s = o.store;
      const m = modelRecord("cur", "test", 1000);
      await s.createModel(m, META);
      for (const cursor of ["m".repeat(4092), "m".repeat(4093), m.id + "x".repeat(5000), "", "MDL_" + m.id.slice(4)]) {
        await assert.rejects(s.listModels("cur", "test", 10, cursor), CursorNotFoundError, `cursor of ${cursor.length} characters`);
      }
      assert.deepEqual((await s.listModels("cur", "test", 10)).items.map((x) => x.id), [m.id]);
    });

    test("createModel with maxModelsPerOrg refuses the org's model beyond the cap (both environments count) and stores nothing of it", async () => {
      const s = o.store;
      const cap = { maxModelsPerOrg: 2 };
      const a = modelRecord("capped", "test", 1000);
      const b = modelRecord("capped", "live", 2000);
      await s.createModel(a, META, undefined, cap);
      await s.createModel(b, META, undefined, cap);
      const c = modelRecord("capped", "test", 3000);
      await assert.rejects(s.createModel(c, META, undefined, cap), (err: unknown) => err instanceof ModelLimitError && err.limit === 2 && err.org === "capped");
      assert.equal(await s.getModel(c.id), undefined);
      assert.equal(await s.getMetadata(c.id), undefined);
      await s.createModel(modelRecord("other-org", "test", 3000), META, undefined, cap); // per org
      await s.deleteModel(a.id);
      await s.createModel(c, META, undefined, cap); // a delete frees a place
      assert.ok(await s.getModel(c.id));
      await s.createModel(modelRecord("capped", "test", 4000), META); // no cap given: not counted
    });

    test("concurrent capped creates of one org store exactly the cap", async () => {
      const s = o.store;
      const recs = Array.from({ length: 12 }, (_, i) => modelRecord("burst", i % 2 ? "live" : "test", 1000 + i));
      const rs = await Promise.allSettled(recs.map((r) => s.createModel(r, META, undefined, { maxModelsPerOrg: 5 })));
      assert.equal(rs.filter((r) => r.status === "fulfilled").length, 5);
      for (const r of rs) if (r.status === "rejected") assert.ok(r.reason instanceof ModelLimitError, String(r.reason));
      const listed = (await s.listModels("burst", "test", 100)).items.length + (await s.listModels("burst", "live", 100)).items.length;
      assert.equal(listed, 5);
    });
  });
}
