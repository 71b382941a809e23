/**
 * The code-prefix rule kept in decoded rows (`./enforce`, after embedded codes): a row whose
 * category has released prefixes and whose code starts with none of them gets a prefix drawn
 * among its category's by their real rows, written over the code's first characters (`2419` of
 * a row of Arts becomes `6019`). An identifier's code stays distinct from the sample's other
 * codes (`newSample` starts a sample): on a clash, the characters after the prefix are drawn
 * again in their own classes (digit, lower, upper letter); a category whose prefixes have no
 * code left keeps the clash.
 */
import type { CodePrefixRule, Metadata } from "../../contract";
import type { Rng } from "../generate/sfc32";
import { prefixesOfCategory } from "./check";
import { noneFixed, type CompiledRule } from "./compiled-rule";

/** Identifiers remembered across a sample's batches, at most (then the next batch starts afresh). */
const MAX_TAKEN = 1 << 21;
/** Draws of a clashing code's tail before the clash is left. */
const TAIL_TRIES = 32;

/** The rule over category feature `k` and code feature `c` of `meta`. */
export function codePrefixRule(rule: CodePrefixRule, k: number, c: number, meta: Metadata): CompiledRule {
  const L = rule.length;
  const byCategory = new Map([...prefixesOfCategory(rule)].map(([cat, e]) => {
    const cum: number[] = [];
    let total = 0;
    for (const n of e.counts) cum.push((total += n));
    return [cat, { prefixes: e.prefixes, cum }];
  }));
  // An identifier's codes are kept distinct within the batch.
  const distinct = meta.column_stats?.[rule.columns[1]]?.type === "id";
  // The sample's identifiers so far (its batches in turn), up to MAX_TAKEN.
  const taken = new Set<string>();
  return {
    newSample() {
      taken.clear();
    },
    apply(rows, rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const broken: number[] = [];
      if (taken.size > MAX_TAKEN) taken.clear();
      for (let r = 0; r < rows.length; r++) {
        const code = rows.get(r, c);
        const mine = byCategory.get(rows.get(r, k));
        // A code that fits but repeats one an earlier batch was rewritten to is written again too.
        if (code === "" || mine === undefined || (mine.prefixes.includes(code.slice(0, L)) && !(distinct && taken.has(code)))) {
          if (distinct) taken.add(code);
          continue;
        }
        if (fixed(r, c)) {
          out.unrepaired++;
          if (distinct) taken.add(code);
          continue;
        }
        broken.push(r);
      }
      for (const r of broken) {
        const mine = byCategory.get(rows.get(r, k))!;
        const code = rows.get(r, c);
        const prefix = mine.prefixes[rng.pickCumulative(mine.cum)];
        let next = prefix + code.slice(L);
        for (let t = 0; distinct && taken.has(next) && t < TAIL_TRIES; t++) next = prefix + redrawn(code.slice(L), rng);
        if (distinct) taken.add(next);
        rows.set(r, c, next);
        out.changed++;
      }
    },
  };
}

/** `tail` with each digit and ASCII letter drawn again in its class. */
function redrawn(tail: string, rng: Rng): string {
  let s = "";
  for (const ch of tail) {
    if (ch >= "0" && ch <= "9") s += String.fromCharCode(48 + rng.int(10));
    else if (ch >= "a" && ch <= "z") s += String.fromCharCode(97 + rng.int(26));
    else if (ch >= "A" && ch <= "Z") s += String.fromCharCode(65 + rng.int(26));
    else s += ch;
  }
  return s;
}
