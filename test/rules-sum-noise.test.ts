/**
 * A difference written with a double's noise (R and JavaScript write `0.52 - 0.48` as
 * `0.040000000000000036`, 18 decimals): the identity is found at the decimals a double holds, and
 * decoded rows keep it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ruleId, type SumRule } from "../src/sdk";
import { ruleShares } from "../src/sdk/rules/check";
import { analyzed, decodeIndependent, table } from "./rules-fixtures";

/** 200 polls: remain and leave in hundredths, their spread computed in doubles and written in full. */
function polls() {
  return table(["remain", "leave", "spread", "samplesize"], 200, (_i, rng) => {
    const remain = (35 + rng.int(21)) / 100;
    const leave = (32 + rng.int(24)) / 100;
    return [remain, leave, String(remain - leave), 500 + rng.int(4000)];
  });
}

describe("identities of numbers written with a double's noise", () => {
  test("spread = remain - leave is found though spread is written with 17 digits, and decoded rows keep it", async () => {
    const t = polls();
    assert.ok(t.rows.some((r) => r[2].length > 12), "the made table writes noisy spreads");
    const meta = await analyzed(t);
    const sums = (meta.rules ?? []).filter((r): r is SumRule => r.type === "sum");
    assert.deepEqual(sums.map((r) => [r.total, ...r.parts].sort()), [["leave", "remain", "spread"]], JSON.stringify(meta.rules?.map(ruleId)));
    const synth = decodeIndependent(meta, 500);
    for (const s of ruleShares(sums, meta, synth)) assert.equal(s.share, 1, ruleId(s.rule));
  });
});
