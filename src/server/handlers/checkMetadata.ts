/**
 * Semantic checks of Create Model's `metadata` that a type cannot express (after typia's shape
 * check); each failure is 400 `parameter_invalid` on the field. With F = `features`, K_f =
 * `cardinalities[f]`:
 * - compact JSON at most {@link MAX_METADATA_BYTES} of UTF-8, so what one model stores is bounded;
 * - feature names unique and not `__proto__`; the per-feature objects have no key outside F (an
 *   over-long key is not repeated in the param);
 * - every f has `cardinalities[f]` and `empirical_probs[f]`: K_f finite entries >= 0 summing to 1
 *   within {@link PROB_SUM_TOLERANCE};
 * - `value_mappings[f]`: at most K_f entries of at most {@link MAX_VALUE_LENGTH} characters, codes
 *   < K_f, no value `__proto__` (msgpack would rename it, so it could not be decoded back);
 * - `column_stats[f].bin_edges`: K_f + 1 edges, or K_f when the last code is the missing value's
 *   (`src/sdk/columns/bins.ts`), non-decreasing;
 * - `marginals[i]`: two different features, K_f * K_g probabilities as above;
 * - `rules[i]`: distinct features of F; fixed combinations: one count per combination, one code
 *   < K per column (docs/api.md "Row rules").
 * Params use typia's path style (`params.ts`).
 */
import { MAX_FEATURE_NAME_LENGTH, MAX_METADATA_BYTES, MAX_VALUE_LENGTH, type Metadata, type Rule } from "../../contract";
import { paramInvalid, truncate } from "../errors";
import { index, prop } from "../../contract/params";

/** Largest allowed |sum - 1| of a probability vector. */
export const PROB_SUM_TOLERANCE = 1e-3;

const BASE = "body.metadata";

/** @throws ApiError 400 `parameter_invalid` naming the first inconsistent field. */
export function checkMetadata(md: Metadata): void {
  const bytes = Buffer.byteLength(JSON.stringify(md), "utf8");
  if (bytes > MAX_METADATA_BYTES) {
    throw paramInvalid(
      BASE,
      `metadata is ${bytes} bytes as compact JSON; a model stores at most ${MAX_METADATA_BYTES} (8 MiB). ` +
        "Send fewer or smaller pair marginals, or fewer codes per feature.",
    );
  }
  const features = new Set<string>();
  md.features.forEach((f, i) => {
    const param = index(`${BASE}.features`, i);
    if (f === "__proto__") throw paramInvalid(param, `Feature name "__proto__" is not allowed.`);
    if (features.has(f)) throw paramInvalid(param, `Duplicate feature name ${JSON.stringify(f)}.`);
    features.add(f);
  });

  const keyed = {
    cardinalities: md.cardinalities,
    empirical_probs: md.empirical_probs,
    column_stats: md.column_stats,
    value_mappings: md.value_mappings,
  };
  for (const [name, obj] of Object.entries(keyed)) {
    if (obj === undefined) continue;
    for (const key of Object.keys(obj)) {
      if (!features.has(key)) {
        throw paramInvalid(
          keyParam(`${BASE}.${name}`, key, MAX_FEATURE_NAME_LENGTH),
          `${name} has an entry for ${JSON.stringify(truncate(key, 64))}, which is not in metadata.features.`,
        );
      }
    }
  }

  for (const f of md.features) {
    const kParam = prop(`${BASE}.cardinalities`, f);
    if (!Object.hasOwn(md.cardinalities, f)) {
      throw paramInvalid(kParam, `Missing cardinality for feature ${JSON.stringify(f)}.`);
    }
    const k = md.cardinalities[f];
    const pParam = prop(`${BASE}.empirical_probs`, f);
    if (!Object.hasOwn(md.empirical_probs, f)) {
      throw paramInvalid(pParam, `Missing empirical_probs for feature ${JSON.stringify(f)}.`);
    }
    const probs = md.empirical_probs[f];
    if (probs.length !== k) {
      throw paramInvalid(
        pParam,
        `empirical_probs for feature ${JSON.stringify(f)} has ${probs.length} entries; its cardinality is ${k}.`,
      );
    }
    checkDistribution(probs, pParam);

    checkBinEdges(md, f, k);
    const mapping = md.value_mappings?.[f];
    if (mapping !== undefined) {
      const mParam = prop(`${BASE}.value_mappings`, f);
      // for-in, not Object.entries: no [key, value] array per entry (mappings can have millions).
      let entries = 0;
      for (const _ in mapping) if (++entries > k) break;
      if (entries > k) {
        throw paramInvalid(mParam, `value_mappings for feature ${JSON.stringify(f)} has more than ${k} entries; its cardinality is ${k}.`);
      }
      for (const value in mapping) {
        const code = mapping[value];
        if (value.length > MAX_VALUE_LENGTH) {
          throw paramInvalid(
            mParam,
            `A value of ${value.length} characters (${JSON.stringify(truncate(value, 40))}) is mapped; values are at most ${MAX_VALUE_LENGTH} characters.`,
          );
        }
        if (value === "__proto__") {
          throw paramInvalid(
            prop(prop(`${BASE}.value_mappings`, f), value),
            `The value "__proto__" cannot be stored as a mapping key; encode it differently.`,
          );
        }
        if (code >= k) {
          throw paramInvalid(
            prop(prop(`${BASE}.value_mappings`, f), value),
            `Code ${code} is out of range for feature ${JSON.stringify(f)} (cardinality ${k}).`,
          );
        }
      }
    }
  }

  (md.marginals ?? []).forEach((m, i) => {
    const base = index(`${BASE}.marginals`, i);
    const [f, g] = m.features;
    if (!features.has(f)) throw paramInvalid(`${base}.features[0]`, `Unknown feature ${JSON.stringify(f)}.`);
    if (!features.has(g)) throw paramInvalid(`${base}.features[1]`, `Unknown feature ${JSON.stringify(g)}.`);
    if (f === g) throw paramInvalid(`${base}.features[1]`, "A 2-way marginal needs two different features.");
    const want = md.cardinalities[f] * md.cardinalities[g];
    if (m.probs.length !== want) {
      throw paramInvalid(
        `${base}.probs`,
        `probs has ${m.probs.length} entries; the pair (${JSON.stringify(f)}, ${JSON.stringify(g)}) needs ` +
          `${md.cardinalities[f]} x ${md.cardinalities[g]} = ${want}.`,
      );
    }
    checkDistribution(m.probs, `${base}.probs`);
  });
  checkRules(md, features);
}

/** `bin_edges` against K: K + 1 edges, or K with a missing-value code; non-decreasing. */
function checkBinEdges(md: Metadata, f: string, k: number): void {
  const edges = md.column_stats?.[f]?.bin_edges;
  if (edges === undefined) return;
  const param = `${prop(`${BASE}.column_stats`, f)}.bin_edges`;
  if (edges.length !== k + 1 && edges.length !== k) {
    throw paramInvalid(
      param,
      `bin_edges for feature ${JSON.stringify(f)} has ${edges.length} entries; its cardinality ${k} needs ${k + 1} ` +
        `(one more than its bins), or ${k} when its last code is the missing value's.`,
    );
  }
  for (let i = 1; i < edges.length; i++) {
    if (edges[i] < edges[i - 1]) {
      throw paramInvalid(index(param, i), `bin_edges must be non-decreasing; ${edges[i]} follows ${edges[i - 1]}.`);
    }
  }
}

/** `prop(base, key)`, or `base` alone when `key` is longer than `max` (a param never repeats an over-long key). */
function keyParam(base: string, key: string, max: number): string {
  return key.length > max ? base : prop(base, key);
}

/** The features a rule names, by param path relative to the rule. */
function ruleColumns(rule: Rule): [string, string][] {
  switch (rule.type) {
    case "inequality":
      return [["high", rule.high], ["low", rule.low]];
    case "sum":
    case "ratio":
      return [["total", rule.total], ...rule.parts.map((p, j): [string, string] => [`parts[${j}]`, p])];
    default:
      return rule.columns.map((c, j): [string, string] => [`columns[${j}]`, c]);
  }
}

function checkRules(md: Metadata, features: ReadonlySet<string>): void {
  (md.rules ?? []).forEach((rule, i) => {
    const base = index(`${BASE}.rules`, i);
    const seen = new Set<string>();
    for (const [path, f] of ruleColumns(rule)) {
      if (!features.has(f)) throw paramInvalid(`${base}.${path}`, `Unknown feature ${JSON.stringify(f)}.`);
      if (seen.has(f)) throw paramInvalid(`${base}.${path}`, `A rule names each feature once; ${JSON.stringify(f)} is repeated.`);
      seen.add(f);
    }
    if (rule.type === "structural_zeros") {
      rule.pairs.forEach((t, j) => {
        t.forEach((code, c) => {
          const k = md.cardinalities[rule.columns[c]];
          if (code >= k) throw paramInvalid(index(index(`${base}.pairs`, j), c), `Code ${code} is out of range for feature ${JSON.stringify(rule.columns[c])} (cardinality ${k}).`);
        });
      });
      return;
    }
    if (rule.type === "catalog") {
      if (rule.key !== rule.columns[0]) throw paramInvalid(`${base}.key`, `The key ${JSON.stringify(rule.key)} must be the first of the rule's columns.`);
      if ((rule.key_columns ?? 1) >= rule.columns.length) {
        throw paramInvalid(`${base}.key_columns`, `A key of ${rule.key_columns} columns leaves no attribute among the rule's ${rule.columns.length} columns.`);
      }
      if (rule.counts.length !== rule.entries.length) {
        throw paramInvalid(`${base}.counts`, `counts has ${rule.counts.length} entries; there are ${rule.entries.length} catalog entries.`);
      }
      rule.entries.forEach((e, j) => {
        if (e.length !== rule.columns.length) {
          throw paramInvalid(index(`${base}.entries`, j), `An entry has one value per column (${rule.columns.length}); this one has ${e.length}.`);
        }
      });
      return;
    }
    if (rule.type === "template") {
      rule.parts.forEach((part, j) => {
        if (typeof part !== "string" && part.column >= rule.columns.length) {
          throw paramInvalid(`${index(`${base}.parts`, j)}.column`, `Column ${part.column} is out of range: the rule names ${rule.columns.length - 1} source column${rule.columns.length === 2 ? "" : "s"} (1..${rule.columns.length - 1}).`);
        }
        if (typeof part !== "string" && (part.date === undefined) !== (part.from === undefined)) {
          throw paramInvalid(`${index(`${base}.parts`, j)}.${part.date === undefined ? "date" : "from"}`, "A date part names both the format it reads (from) and the format it writes (date).");
        }
      });
      if (!rule.parts.some((part) => typeof part !== "string")) throw paramInvalid(`${base}.parts`, "A template needs at least one cell part.");
      return;
    }
    if (rule.type === "sum") {
      if (rule.signs !== undefined && rule.signs.length !== rule.parts.length) {
        throw paramInvalid(`${base}.signs`, `signs has ${rule.signs.length} entries; the rule has ${rule.parts.length} part${rule.parts.length === 1 ? "" : "s"} (one sign each).`);
      }
      if (rule.weights !== undefined && rule.weights.length !== rule.parts.length) {
        throw paramInvalid(`${base}.weights`, `weights has ${rule.weights.length} entries; the rule has ${rule.parts.length} part${rule.parts.length === 1 ? "" : "s"} (one weight each).`);
      }
      return;
    }
    if (rule.type === "ratio") {
      if (rule.powers.length !== rule.parts.length) {
        throw paramInvalid(`${base}.powers`, `powers has ${rule.powers.length} entries; the rule has ${rule.parts.length} part${rule.parts.length === 1 ? "" : "s"} (one power each).`);
      }
      const band = [rule.min, rule.max, rule.quantiles];
      if (band.some((x) => x !== undefined) && band.some((x) => x === undefined)) {
        throw paramInvalid(`${base}.${rule.min === undefined ? "min" : rule.max === undefined ? "max" : "quantiles"}`, "A ratio band names all of min, max and quantiles, or none of them.");
      }
      if (rule.min !== undefined && rule.max !== undefined && rule.quantiles !== undefined) {
        const q = rule.quantiles;
        if (!(rule.min <= rule.max) || q.some((x, j) => (j > 0 && x < q[j - 1]) || x < rule.min! || x > rule.max!)) {
          throw paramInvalid(`${base}.quantiles`, "A ratio band's quantiles ascend, inside its [min, max].");
        }
      }
      const bins = rule.bins;
      if (bins !== undefined) {
        if (rule.quantiles === undefined) throw paramInvalid(`${base}.bins`, "Bins refine a ratio band: the rule needs min, max and quantiles.");
        if (!rule.parts.includes(bins.part)) throw paramInvalid(`${base}.bins.part`, `The part ${JSON.stringify(bins.part)} is not one of the rule's parts.`);
        if (bins.edges.some((x, j) => j > 0 && !(x > bins.edges[j - 1]))) throw paramInvalid(`${base}.bins.edges`, "A ratio band's bin edges ascend strictly.");
        if (bins.quantiles.length !== bins.edges.length + 1) throw paramInvalid(`${base}.bins.quantiles`, `bins.quantiles has ${bins.quantiles.length} lists; ${bins.edges.length} edges make ${bins.edges.length + 1} bins.`);
        if (bins.quantiles.some((q) => q.some((x, j) => j > 0 && x < q[j - 1]))) throw paramInvalid(`${base}.bins.quantiles`, "Each bin's quantiles ascend.");
      }
      return;
    }
    if (rule.type !== "fixed_combinations") return;
    if (rule.determinant !== undefined && !rule.columns.includes(rule.determinant)) {
      throw paramInvalid(`${base}.determinant`, `The determinant ${JSON.stringify(rule.determinant)} is not one of the rule's columns.`);
    }
    if (rule.counts.length !== rule.combinations.length) {
      throw paramInvalid(`${base}.counts`, `counts has ${rule.counts.length} entries; there are ${rule.combinations.length} combinations.`);
    }
    rule.combinations.forEach((t, j) => {
      const param = index(`${base}.combinations`, j);
      if (t.length !== rule.columns.length) {
        throw paramInvalid(param, `A combination has one code per column (${rule.columns.length}); this one has ${t.length}.`);
      }
      t.forEach((code, c) => {
        const k = md.cardinalities[rule.columns[c]];
        if (code >= k) throw paramInvalid(index(param, c), `Code ${code} is out of range for feature ${JSON.stringify(rule.columns[c])} (cardinality ${k}).`);
      });
    });
  });
}

/** Entries finite and >= 0 (param `param[j]`), sum within tolerance of 1 (param `param`). */
function checkDistribution(probs: readonly number[], param: string): void {
  let sum = 0;
  for (let j = 0; j < probs.length; j++) {
    const p = probs[j];
    if (!Number.isFinite(p) || p < 0) {
      throw paramInvalid(index(param, j), `Probabilities must be finite and >= 0; got ${p}.`);
    }
    sum += p;
  }
  if (Math.abs(sum - 1) > PROB_SUM_TOLERANCE) {
    throw paramInvalid(param, `Probabilities must sum to 1 (within ${PROB_SUM_TOLERANCE}); they sum to ${sum}.`);
  }
}
