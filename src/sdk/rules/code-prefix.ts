/**
 * The code-prefix rule kept in decoded rows (`./enforce`, after embedded codes): a row whose
 * category has released prefixes and whose code starts with none of them gets a prefix drawn
 * among its category's by their real rows, written over the code's first characters (`2419` of
 * a row of Arts becomes `6019`). An identifier's code stays distinct from the batch's other codes
 * and from the codes the sample wrote before it (`newSample` starts a sample; `written` names the
 * rows written, so the codes of rows a near-copy filter drops are free again): on a clash, the
 * prefix (among the category's, by their real rows) and the characters after it are drawn again,
 * those in their own classes (digit, lower, upper letter). A category with no code left keeps
 * the clash in the batch; `written` draws it again among the rows written.
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
    return [cat, { prefixes: e.prefixes, set: new Set(e.prefixes), cum }];
  }));
  // An identifier's codes are kept distinct within the batch.
  const distinct = meta.column_stats?.[rule.columns[1]]?.type === "id";
  // The identifiers of the rows the sample wrote so far (its batches in turn), up to MAX_TAKEN.
  const taken = new Set<string>();
  // The identifiers of the last batch, counted in `taken` once its written rows are known.
  let batch = new Set<string>();
  const used = (code: string): boolean => batch.has(code) || taken.has(code);
  const commit = (): void => {
    for (const code of batch) taken.add(code);
    batch = new Set();
  };
  return {
    newSample() {
      taken.clear();
      batch = new Set();
    },
    written(rows, rng, given) {
      batch = new Set();
      if (!distinct) return;
      const fixed = given ?? noneFixed;
      for (let r = 0; r < rows.length; r++) {
        const code = rows.get(r, c);
        if (code === "") continue;
        // A repeat the batch left (its category's codes ran out among all the rows decoded): the
        // tail drawn again under the same prefix, now that only the rows written hold codes.
        if (taken.has(code) && !fixed(r, c)) {
          const mine = byCategory.get(rows.get(r, k));
          const own = mine?.set.has(code.slice(0, L)) ? mine : undefined;
          let next = code;
          for (let t = 0; taken.has(next) && t < TAIL_TRIES; t++) next = (own ? own.prefixes[rng.pickCumulative(own.cum)] : code.slice(0, L)) + redrawn(code.slice(L), rng);
          if (next !== code) rows.set(r, c, next);
          taken.add(next);
        } else taken.add(code);
      }
    },
    apply(rows, rng, given, _draw, out) {
      const fixed = given ?? noneFixed;
      const broken: number[] = [];
      // A caller that names no written rows writes every row it decodes.
      commit();
      if (taken.size > MAX_TAKEN) taken.clear();
      for (let r = 0; r < rows.length; r++) {
        const code = rows.get(r, c);
        const mine = byCategory.get(rows.get(r, k));
        // A code that fits but repeats one an earlier row was written with is written again too.
        if (code === "" || mine === undefined || (mine.set.has(code.slice(0, L)) && !(distinct && used(code)))) {
          if (distinct) batch.add(code);
          continue;
        }
        if (fixed(r, c)) {
          out.unrepaired++;
          if (distinct) batch.add(code);
          continue;
        }
        broken.push(r);
      }
      for (const r of broken) {
        const mine = byCategory.get(rows.get(r, k))!;
        const code = rows.get(r, c);
        let next = mine.prefixes[rng.pickCumulative(mine.cum)] + code.slice(L);
        // The prefix drawn again with the tail: one prefix's codes may run out before its category's.
        for (let t = 0; distinct && used(next) && t < TAIL_TRIES; t++) next = mine.prefixes[rng.pickCumulative(mine.cum)] + redrawn(code.slice(L), rng);
        if (distinct) batch.add(next);
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
