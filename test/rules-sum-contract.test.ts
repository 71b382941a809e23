/**
 * The contract's `SumRule` takes 1 to 12 parts: the server's body validator accepts 12 and refuses
 * 13, and its semantic check names a part past the second that is no feature.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Metadata } from "../src/contract";
import { validateCreateModel } from "../src/server/handlers/bodyValidators";
import { checkMetadata } from "../src/server/handlers/checkMetadata";

const features = Array.from({ length: 14 }, (_, j) => `c${j}`);
const md = (parts: string[]): Metadata => ({
  features,
  cardinalities: Object.fromEntries(features.map((f) => [f, 1])),
  empirical_probs: Object.fromEntries(features.map((f) => [f, [1]])),
  rules: [{ type: "sum", total: "c0", parts, share: 1 }],
});

test("a sum of 12 parts passes the body validator and the semantic checks; 13 parts do not validate", () => {
  assert.equal(validateCreateModel({ metadata: md(features.slice(1, 13)) }).success, true);
  assert.doesNotThrow(() => checkMetadata(md(features.slice(1, 13))));
  assert.equal(validateCreateModel({ metadata: md(features.slice(1, 14)) }).success, false);
});

test("the semantic check names a part past the second that is no feature, or a repeated one", () => {
  const param = (e: unknown) => (e as { param?: string }).param ?? "";
  assert.throws(() => checkMetadata(md([...features.slice(1, 12), "nope"])), (e) => param(e).endsWith("rules[0].parts[11]"));
  assert.throws(() => checkMetadata(md(["c1", "c2", "c3", "c2"])), (e) => param(e).endsWith("rules[0].parts[3]"));
});
