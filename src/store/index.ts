/**
 * The store: {@link Store}, its records, errors, ids and the embedded implementation. `PgStore` is
 * imported where used, so a process on the embedded store never loads the PostgreSQL driver.
 */
export * from "./records";
export * from "./errors";
export * from "./ids";
export * from "./packedMetadata";
export type { ModelPatch, Store } from "./store";
export { LmdbStore } from "./lmdb/lmdbStore";
