/**
 * Types shared by the server, the engine and the SDK: the HTTP contract
 * (`shared/spec/service-interface.md`) plus what it leaves open (`docs/decisions.md`, "The
 * contract and its extensions"). The server's validators are generated from these types' typia
 * tags at compile time, so validator and SDK types cannot drift. Files: `numbers`, `metadata`,
 * `model`, `generate`, `envelope`, `bounds`. Import from here.
 */
export * from "./numbers";
export * from "./bounds";
export type * from "./metadata";
export * from "./model";
export * from "./generate";
export * from "./envelope";
