/**
 * The store: the interface every component uses ({@link Store}, `store.ts`), the records it
 * keeps (`records.ts`), its errors and identifiers, and the embedded implementation
 * (`lmdb/lmdbStore.ts`). The shared implementation (`postgres/pgStore.ts`) is imported where it
 * is used, so that a process on the embedded store never loads the PostgreSQL driver.
 */
export * from "./records";
export * from "./errors";
export * from "./ids";
export * from "./packedMetadata";
export type { ModelPatch, Store } from "./store";
export { LmdbStore } from "./lmdb/lmdbStore";
