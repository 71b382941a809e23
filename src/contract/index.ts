/**
 * Types shared by the server, the engine and the SDK: the HTTP contract
 * (`shared/spec/service-interface.md`) plus what it leaves open, as decided in `docs/decisions.md`
 * ("The contract and its extensions").
 *
 * The request types carry typia tags: the server's validators are generated from exactly these
 * types at compile time (`typia.createValidateEquals`), so the validator and the SDK's types can
 * never drift apart.
 *
 * By concern, in this folder: `numbers` (typia tags and bounds of numbers), `metadata` (the
 * statistical description: column stats, marginals, row rules), `model` (the Model resource, its
 * config and defaults, Create Model's body), `generate` (Generate's body and result, row limits),
 * `envelope` (response envelopes, list query, error types and codes), `bounds` (sizes and lengths of
 * what Create Model stores). Import from here.
 */
export * from "./numbers";
export * from "./bounds";
export type * from "./metadata";
export * from "./model";
export * from "./generate";
export * from "./envelope";
