/**
 * The categorical kind: text values (or numbers declared categorical, or an all-blank column),
 * released as a code book of its frequent values ({@link categoricalCodec}, {@link blankCodec})
 * and decoded through it ({@link mappingDecoder}, also for point-bin columns).
 */
import type { ColumnKind, ColumnStats, Metadata, PublicVocabulary } from "../../contract";
import { fileOfDescription } from "../io/csv";
import { DataError } from "../errors";
import { mutualInformation } from "../metadata/marginals";
import { Rng } from "../generate/sfc32";
import { badCode, candidateIndex, MISSING_KEY, OTHER, missingCodeOf, type ColumnCodec, type ColumnScan, type FeatureDecoder } from "./common";

/** `../semantic`, loaded by the first fit that looks for a kind, not by decoding. */
function semanticKinds(): typeof import("../semantic") {
  return require("../semantic");
}

/**
 * Share of non-blank rows holding pooled values from which pooled cells are written fresh (of a
 * recognised semantic kind) rather than as stand-ins among released values: above it, stand-ins
 * inflate the released values' frequencies and pair them with the wrong partners.
 */
export const FRESH_POOLED_SHARE = 0.1;

/**
 * Share of non-blank rows holding pooled values from which a column no semantic kind fits is
 * written in its own words (`../semantic`'s `vocabularyShape`: earthquake places, incident
 * addresses under another header): mostly one-off texts, where stand-ins would repeat a few
 * released values in place of many distinct ones.
 */
export const VOCABULARY_POOLED_SHARE = 0.5;

function rankCategories(scan: ColumnScan): number[] {
  const ids: number[] = [];
  scan.values.forEach((v, id) => {
    if (v !== "") ids.push(id);
  });
  ids.sort((a, b) => scan.counts[b] - scan.counts[a] || (scan.values[a] < scan.values[b] ? -1 : scan.values[a] > scan.values[b] ? 1 : 0));
  return ids;
}

/** `../semantic/vocabulary`, loaded by the first column of a public vocabulary. */
function vocabularies(): typeof import("../semantic/vocabulary") {
  return require("../semantic/vocabulary");
}

/**
 * Categorical code book with rare category protection: values seen >= `k` times keep a code, most
 * frequent first (ties: code-unit order), at most `cap` codes; every other value (and a literal
 * `__other__`) shares the pooled code {@link OTHER}, never written back verbatim. With a public
 * `vocabulary` (`../semantic/vocabulary`), the vocabulary's values keep a code below k too (a
 * place column only up to `MAX_RARE_PLACES` distinct values; a larger one pools them, and decoding
 * writes a pooled cell as a place of the row's state).
 * @returns undefined when no value reaches k (nothing could be released), unless the column is
 *   one of places, whose pooled cells are written from the gazetteer.
 */
export function categoricalCodec(scan: ColumnScan, n: number, cap: number, k: number, vocabulary?: PublicVocabulary): ColumnCodec | undefined {
  const ranked = rankCategories(scan);
  const voc = vocabulary === undefined ? undefined : vocabularies();
  const places = voc?.isGazetteerVocabulary(vocabulary) ?? false;
  const listed = voc !== undefined && (!places || ranked.length <= voc.MAX_RARE_PLACES);
  const isPublic = (v: string): boolean => listed && voc!.isVocabularyValue(vocabulary!, v);
  const own = ranked.filter((id) => (scan.counts[id] >= k || isPublic(scan.values[id])) && scan.values[id] !== OTHER);
  if (own.length === 0 && !places) return undefined;
  const pooled = own.length < ranked.length || own.length > cap;
  const kept = pooled ? own.slice(0, cap - 1) : own;
  const byValue = new Map<string, number>();
  const mapping: Record<string, number> = {};
  kept.forEach((id, r) => {
    byValue.set(scan.values[id], r);
    mapping[scan.values[id]] = r;
  });
  const otherCode = pooled ? kept.length : -1;
  if (pooled) {
    for (const id of ranked) if (!byValue.has(scan.values[id])) byValue.set(scan.values[id], otherCode);
    mapping[OTHER] = otherCode;
    byValue.set(OTHER, otherCode);
  }
  const Knm = kept.length + (pooled ? 1 : 0);
  const missingCode = scan.missing > 0 ? Knm : -1;
  if (missingCode >= 0) {
    mapping[MISSING_KEY] = missingCode;
    byValue.set(MISSING_KEY, missingCode);
  }
  const stats: ColumnCodec["stats"] = { type: "categorical", count: n - scan.missing, missing: scan.missing, rare_threshold: k };
  if (vocabulary !== undefined) stats.vocabulary = vocabulary;
  if (places) {
    const form = voc!.placeFormOf(vocabulary!, ranked.map((id) => scan.values[id]), ranked.map((id) => scan.counts[id]));
    if (form) stats.place_form = form;
  }
  if (pooled && vocabulary === undefined) {
    const values: string[] = [];
    const counts: number[] = [];
    let pooledRows = 0;
    for (const id of ranked) {
      values.push(scan.values[id]);
      counts.push(scan.counts[id]);
      if (byValue.get(scan.values[id]) === otherCode) pooledRows += scan.counts[id];
    }
    const sem = semanticKinds();
    const rows = n - scan.missing;
    let semantic = pooledRows >= FRESH_POOLED_SHARE * rows ? sem.semanticShape(scan.name, values, counts, k) : undefined;
    if (semantic === undefined && pooledRows >= VOCABULARY_POOLED_SHARE * rows) semantic = sem.vocabularyShape(values, counts, k);
    if (semantic && semantic.kind !== "uuid") stats.semantic = semantic;
  }
  return {
    name: scan.name,
    kind: "categorical",
    K: Knm + (missingCode >= 0 ? 1 : 0),
    missingCode,
    otherCode,
    stats,
    mapping,
    encode: (v) => byValue.get(v) ?? -1,
  };
}

/**
 * Whether a categorical column's pooled cells are written as values the real table may not hold:
 * fresh values of a semantic kind, or places of a gazetteer vocabulary.
 */
export function pooledWritesFresh(stats: ColumnStats | undefined): boolean {
  if (stats?.type !== "categorical") return false;
  return stats.semantic !== undefined || (stats.vocabulary !== undefined && vocabularies().isGazetteerVocabulary(stats.vocabulary));
}

/**
 * Code book of an all-blank column: one code, blank, so the file's layout is kept.
 * @throws DataError when `declared` (the override) is numerical, datetime or id.
 */
export function blankCodec(scan: ColumnScan, n: number, k: number, declared: ColumnKind | undefined, source: string): ColumnCodec {
  if (declared !== undefined && declared !== "categorical") {
    throw new DataError(
      `${source}: column "${scan.name}" is blank in every row, so it cannot be declared ${declared}; it is kept blank (drop its override).`,
      { column: scan.name, file: fileOfDescription(source) },
    );
  }
  return {
    name: scan.name,
    kind: "categorical",
    K: 1,
    missingCode: 0,
    otherCode: -1,
    stats: { type: "categorical", count: 0, missing: n, rare_threshold: k },
    mapping: { [MISSING_KEY]: 0 },
    encode: (v) => (v === MISSING_KEY ? 0 : -1),
  };
}

/**
 * The partner of f's pooled code and, per partner code, f's own codes seen with it: for a
 * fixed-combinations determinant, the rule's first other column (`determined`); else the feature
 * of f's sent 2-way marginal with the most mutual information, codes where P(f = i, g = j) > 0.
 */
function pooledPartner(meta: Metadata, f: string, own: ReadonlySet<number>): { g: string; byCode: number[][]; determined?: boolean } | undefined {
  const decided = decidedColumns(meta, f, own)[0];
  if (decided) return { ...decided, determined: true };
  let best: { g: string; byCode: number[][]; mi: number } | undefined;
  for (const m of meta.marginals ?? []) {
    const at = m.features.indexOf(f);
    if (at < 0) continue;
    const g = m.features[1 - at];
    const [Ka, Kb] = [meta.cardinalities[m.features[0]], meta.cardinalities[m.features[1]]];
    if (m.probs.length !== Ka * Kb) continue;
    const mi = mutualInformation(m.probs, Ka, Kb);
    if (best && mi <= best.mi) continue;
    const Kg = at === 0 ? Kb : Ka;
    const byCode: number[][] = Array.from({ length: Kg }, () => []);
    for (let i = 0; i < Ka; i++) {
      for (let j = 0; j < Kb; j++) {
        const [fc, gc] = at === 0 ? [i, j] : [j, i];
        if (m.probs[i * Kb + j] > 0 && own.has(fc)) byCode[gc].push(fc);
      }
    }
    for (const list of byCode) list.sort((x, y) => x - y);
    best = { g, byCode, mi };
  }
  return best && { g: best.g, byCode: best.byCode };
}

/**
 * Per code of `g`, the released rows of determinant `f` beside it over `f`'s pooled rows beside it
 * (at most 1; 1 where no pooled row is): the share of a pooled cell's stand-ins a released value
 * may take before stand-ins outnumber the released values' own rows (a pooled film title must not
 * become one of the few remade titles of its subject count). From the 2-way
 * marginal of (f, g) when the model has it, else from the 1-way marginals as if independent.
 */
function standInRoom(meta: Metadata, f: string, g: string, otherCode: number, missingCode: number | undefined): Float64Array | undefined {
  const Kg = meta.cardinalities[g];
  const pf = meta.empirical_probs[f];
  const pg = meta.empirical_probs[g];
  if (Kg === undefined || !pf || !pg) return undefined;
  const pooled = new Float64Array(Kg);
  const released = new Float64Array(Kg);
  const m = meta.marginals?.find((x) => x.features.includes(f) && x.features.includes(g));
  const Kf = meta.cardinalities[f];
  if (m && m.probs.length === Kf * Kg) {
    const fFirst = m.features[0] === f;
    for (let a = 0; a < Kf; a++) {
      if (a === missingCode) continue;
      for (let b = 0; b < Kg; b++) {
        const p = m.probs[fFirst ? a * Kg + b : b * Kf + a];
        if (a === otherCode) pooled[b] += p;
        else released[b] += p;
      }
    }
  } else {
    const po = pf[otherCode] ?? 0;
    const pr = 1 - po - (missingCode !== undefined ? (pf[missingCode] ?? 0) : 0);
    for (let b = 0; b < Kg; b++) (pooled[b] = po * pg[b]), (released[b] = pr * pg[b]);
  }
  return Float64Array.from(pooled, (p, b) => (p > 0 ? Math.min(1, released[b] / p) : 1));
}

/**
 * The columns fixed-combinations rules with determinant `f` decide, in rule order, one per column
 * (a rule's first column other than `f`), each with, per its code, the sorted released codes of
 * `f` (`own`) that go with it.
 */
function decidedColumns(meta: Metadata, f: string, own: ReadonlySet<number>): { g: string; byCode: number[][] }[] {
  const out: { g: string; byCode: number[][] }[] = [];
  for (const rule of meta.rules ?? []) {
    if (rule.type !== "fixed_combinations" || rule.determinant !== f || rule.columns.length < 2) continue;
    const at = rule.columns.indexOf(f);
    const other = at === 0 ? 1 : 0;
    const g = rule.columns[other];
    const Kg = meta.cardinalities[g];
    if (Kg === undefined || out.some((d) => d.g === g)) continue;
    const byCode: number[][] = Array.from({ length: Kg }, () => []);
    for (const t of rule.combinations) if (own.has(t[at]) && t[other] < Kg && !byCode[t[other]].includes(t[at])) byCode[t[other]].push(t[at]);
    for (const list of byCode) list.sort((x, y) => x - y);
    out.push({ g, byCode });
  }
  return out;
}

/**
 * The state column a place column's pooled cells follow: the first other categorical column of
 * vocabulary `us_state` or `us_state_code`, with each of its codes' two-letter state code.
 */
function statePartner(meta: Metadata, f: string): { g: string; codes: (string | undefined)[] } | undefined {
  for (const [g, st] of Object.entries(meta.column_stats ?? {})) {
    const mapping = meta.value_mappings?.[g];
    if (g === f || st.type !== "categorical" || (st.vocabulary !== "us_state" && st.vocabulary !== "us_state_code") || !mapping) continue;
    const codes: (string | undefined)[] = new Array(meta.cardinalities[g]);
    for (const [v, c] of Object.entries(mapping)) if (v !== OTHER && v !== MISSING_KEY) codes[c] = vocabularies().stateCodeOf(v);
    return { g, codes };
  }
  return undefined;
}

/**
 * Decoder of a feature whose codes stand for listed values (`value_mappings[f]`). The pooled code
 * ({@link OTHER}) writes the row's fresh value with `column_stats[f].semantic`, else a value drawn
 * among those seen with the row's partner code (all when none; `__other__` when the column has
 * none, or for a determinant with none beside the partner code); without a mapping, the code as a
 * string.
 */
export function mappingDecoder(meta: Metadata, f: string): FeatureDecoder {
  const K = meta.cardinalities[f];
  const mapping = meta.value_mappings?.[f];
  const missingCode = missingCodeOf(meta, f);
  const byCode: (string | undefined)[] = new Array(K);
  if (mapping) for (const [v, c] of Object.entries(mapping)) if (byCode[c] === undefined) byCode[c] = v;
  const otherCode = mapping?.[OTHER];
  if (otherCode !== undefined) byCode[otherCode] = undefined;
  if (missingCode !== undefined) byCode[missingCode] = "";
  const own: number[] = [];
  byCode.forEach((v, c) => {
    if (v !== undefined && c !== missingCode) own.push(c);
  });
  const stats = meta.column_stats?.[f];
  const placeVocabulary = stats?.type === "categorical" && vocabularies().isGazetteerVocabulary(stats.vocabulary) ? stats.vocabulary : undefined;
  const state = placeVocabulary ? statePartner(meta, f) : undefined;
  const partner = state ? { g: state.g, byCode: [] } : otherCode === undefined ? undefined : pooledPartner(meta, f, new Set(own));
  // With a state column, a released place is written only in a state it lies in: per code, its
  // states (undefined: not in the gazetteer, kept as it is); per state, the released places in it.
  const placeStates: (ReadonlySet<string> | undefined)[] = new Array(K);
  const placesIn = new Map<string, number[]>();
  if (state) {
    for (const c of own) {
      const where = (placeStates[c] = vocabularies().statesOfPlace(placeVocabulary!, byCode[c]!));
      for (const sc of where ?? []) (placesIn.get(sc) ?? placesIn.set(sc, []).get(sc)!).push(c);
    }
  }
  const semantic = otherCode !== undefined && stats?.type === "categorical" ? stats.semantic : undefined;
  const placeForm = stats?.type === "categorical" ? stats.place_form : undefined;
  const releasedKeys = placeVocabulary ? new Set(own.map((c) => vocabularies().vocabularyKey(byCode[c]!))) : undefined;
  // A pooled place: a gazetteer place of the row's state that the column does not release.
  const place = (rng: Rng, partnerCode: number | undefined): string | undefined =>
    vocabularies().drawPlace(placeVocabulary!, state && partnerCode !== undefined ? state.codes[partnerCode] : undefined, releasedKeys!, rng, placeForm);
  // Only a determinant written fresh checks its results against the released values.
  const released = semantic && partner?.determined ? new Set(own.map((c) => byCode[c])) : new Set<string | undefined>();
  const words = semantic && partner?.determined ? partnerCodesOfWords(byCode, partner.byCode) : undefined;
  const standInsFirst = semantic?.stand_ins_first === true;
  const room = words && otherCode !== undefined ? standInRoom(meta, f, partner!.g, otherCode, missingCode) : undefined;
  // Words that name no partner value (titles and their subjects' count) hold no fresh value back.
  const wordsName = words !== undefined && wordsNamePartner(byCode, partner!.byCode);
  // The other columns the determinant decides (place -> tz, place -> net): their words too.
  const decidedBy = words ? decidedColumns(meta, f, new Set(own)).slice(1) : [];
  const decidedWords = decidedBy.map((d) => partnerCodesOfWords(byCode, d.byCode));
  const fits = (v: string, partnerCode: number, decided: readonly number[] | undefined, loose = false): boolean => {
    if (!wordsFit(words!, v, partnerCode, loose)) return false;
    for (let k = 0; k < decidedWords.length; k++) if (decided?.[k] !== undefined && !wordsFit(decidedWords[k], v, decided[k], loose)) return false;
    return true;
  };
  // The pooled code's stand-in: the code of a value drawn among those seen with the row's partner
  // code (all released values when the partner gives none), or -1 (the pooled text) when the column
  // has none or is a determinant none of whose released values goes with the partner code.
  const standIn = (rng: Rng, partnerCode: number | undefined): number => {
    const near = partner && partnerCode !== undefined ? partner.byCode[partnerCode] : undefined;
    // A determinant's released values each decide another partner value: none stands in here.
    if (partner?.determined && near !== undefined && near.length === 0) return -1;
    const from = near && near.length ? near : own;
    return from.length ? from[rng.int(from.length)] : -1;
  };
  // Per partner code, the first words of the released values seen with it, and ONE_WORD where
  // each starts one value (names, not makes shared by models: a fresh single word then fits).
  const heads = new Map<number, Set<string>>();
  const headsOf = (partnerCode: number, near: readonly number[]): Set<string> => {
    let h = heads.get(partnerCode);
    if (!h) {
      heads.set(partnerCode, (h = new Set(near.map((c) => byCode[c]!.split(" ")[0]))));
      if (h.size === near.length) h.add(ONE_WORD);
    }
    return h;
  };
  const decode: FeatureDecoder["decode"] = (c, rng, row, _ids, partnerCode, fresh, decided) => {
    if (state && c !== otherCode && c !== missingCode && partnerCode !== undefined) {
      const sc = state.codes[partnerCode];
      const where = placeStates[c];
      if (sc !== undefined && where !== undefined && !where.has(sc)) {
        const near = placesIn.get(sc);
        if (near?.length) return byCode[near[rng.int(near.length)]]!;
        const v = place(rng, partnerCode);
        if (v !== undefined) return v;
      }
    }
    if (c === otherCode && c !== undefined) {
      if (placeVocabulary && otherCode !== undefined) {
        const v = place(rng, partnerCode);
        if (v !== undefined) return v;
        // Every place of the row's state is released (DC's Washington): one of those.
        const sc = state && partnerCode !== undefined ? state.codes[partnerCode] : undefined;
        const near = sc !== undefined ? placesIn.get(sc) : undefined;
        if (near?.length) return byCode[near[rng.int(near.length)]]!;
      }
      if (fresh) {
        const near = partner && partnerCode !== undefined ? partner.byCode[partnerCode] : undefined;
        if (standInsFirst && partner?.determined && near?.length) return byCode[near[rng.int(near.length)]]!;
        const freshOf = (at: number, issue?: boolean): string | undefined => (fresh.freshValue ? fresh.freshValue(at, issue) : fresh.value(at, issue));
        const text = freshOf(row);
        // A model that writes only the column's real values: a released value, not a copy.
        if (text === undefined) {
          const pick = standIn(rng, partnerCode);
          return pick >= 0 ? byCode[pick]! : fresh.value(row);
        }
        if (!partner?.determined || !near?.length) return text;
        // A determinant (a car's name decides its origin, a place its time zone). The row's fresh
        // values (indices past any sample's rows, read without being marked written) are read for
        // one none of whose words the released values hold only beside other partner codes, that
        // is no released value (which decides another partner value), and whose first word starts
        // a released value of the row's partner code or is a word the released values hold (so the
        // rest is the text model's continuation of it: a make's own model; a single word where no
        // first word of the partner's released values starts two of them, or it is one). Else the first such
        // value with its first word replaced by a released one of the partner's (`chevy` ->
        // `chevrolet`); else a released value of the row's partner code.
        const heads = headsOf(partnerCode!, near);
        let replaced: number | undefined;
        let fitting: number | undefined;
        for (let t = 0; t < FRESH_TRIES; t++) {
          const at = candidateIndex(row, t);
          const v = t === 0 ? text : freshOf(at, false);
          if (v === undefined || released.has(v)) continue;
          if (fitting === undefined && (!wordsName || fits(v, partnerCode!, decided, true))) fitting = t;
          if (!fits(v, partnerCode!, decided)) continue;
          const space = v.indexOf(" ");
          const head = space > 0 ? v.slice(0, space) : v;
          if ((space <= 0 && heads.has(ONE_WORD)) || heads.has(head) || !wordsOf(head).some((w) => !words!.has(w))) return t === 0 ? v : (freshOf(at) ?? v);
          if (space > 0) replaced ??= t;
        }
        if (replaced !== undefined) {
          const v = replaced === 0 ? text : (freshOf(candidateIndex(row, replaced)) ?? text);
          const out = `${byCode[near[rng.int(near.length)]]!.split(" ")[0]}${v.slice(v.indexOf(" "))}`;
          if (!released.has(out)) return out;
        }
        // Stand-ins never outnumber the released values' own rows beside the partner value: else
        // a fresh value with no word only another partner value's released values hold.
        const r = room?.[partnerCode!] ?? 1;
        if (fitting !== undefined && r < 1 && rng.next() >= r) return fitting === 0 ? text : (freshOf(candidateIndex(row, fitting)) ?? text);
        return byCode[near[rng.int(near.length)]]!;
      }
      const pick = standIn(rng, partnerCode);
      return pick >= 0 ? byCode[pick]! : OTHER;
    }
    return byCode[c] ?? (mapping ? badCode(f, c, K) : String(c));
  };
  // Column form: the texts once, per row a code (fresh values appended to the batch's dictionary).
  const dict: string[] = Array.from(byCode, (v) => v ?? "");
  const hasText = Uint8Array.from(byCode, (v) => (v === undefined ? 0 : 1));
  const decodeColumn: FeatureDecoder["decodeColumn"] = (codes, rng, rowOffset, _ids, partnerCodes, fresh, arrays, decided) => {
    const n = codes.length;
    const index = arrays !== undefined ? arrays.int32(n) : new Int32Array(n);
    // Most columns hold no pooled code in most batches: one tight copy of the codes, checked.
    const first = copyCodes(codes, index, hasText, otherCode ?? -1);
    if (first === n) return { kind: "dict", dict, index };
    if (first < 0) return badCode(f, codes[-first - 1], K);
    let own = dict;
    let otherAt = -1;
    const placeAt = new Map<string, number>();
    for (let r = first; r < n; r++) {
      const c = codes[r];
      if (c === otherCode) {
        if (placeVocabulary) {
          // Places repeat: each text once in the batch's dictionary.
          const v = decode(c, rng, rowOffset + r, undefined, partnerCodes?.[r], fresh);
          if (own === dict) own = dict.slice();
          let at = placeAt.get(v);
          if (at === undefined) placeAt.set(v, (at = own.push(v) - 1));
          index[r] = at;
        } else if (fresh) {
          if (own === dict) own = dict.slice();
          index[r] = own.push(decode(c, rng, rowOffset + r, undefined, partnerCodes?.[r], fresh, decided?.map((d) => d[r]))) - 1;
        } else {
          const pick = standIn(rng, partnerCodes?.[r]);
          if (pick >= 0) index[r] = pick;
          else {
            if (own === dict) own = dict.slice();
            if (otherAt < 0) otherAt = own.push(OTHER) - 1;
            index[r] = otherAt;
          }
        }
      } else if (hasText[c] === 1) index[r] = c;
      else badCode(f, c, K);
    }
    return { kind: "dict", dict: own, index };
  };
  return {
    name: f,
    K,
    partner: partner?.g,
    ...(decidedBy.length ? { alsoDecides: decidedBy.map((d) => d.g) } : {}),
    ...(semantic ? { semantic } : {}),
    decode,
    // Without a code book every code is written as a number, and a place beside a state column is
    // checked against it: cell by cell.
    ...(mapping && !state ? { decodeColumn } : {}),
  };
}

/** Fresh values a determinant's pooled cell reads before it takes a released value. */
const FRESH_TRIES = 16;
/** In a partner's set of first words: each starts one released value (no first word holds a space). */
const ONE_WORD = " ";

/** A value's words: runs of two or more letters, lower-cased. */
function wordsOf(v: string): string[] {
  return v.toLowerCase().match(/\p{L}{2,}/gu) ?? [];
}

/**
 * Per word of the released values (`byCode`), the partner codes it was seen beside, from the
 * released values each partner code goes with (`byPartner[g]`: codes of this column).
 */
function partnerCodesOfWords(byCode: readonly (string | undefined)[], byPartner: readonly (readonly number[])[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  byPartner.forEach((codes, g) => {
    for (const c of codes) for (const w of wordsOf(byCode[c] ?? "")) (out.get(w) ?? out.set(w, new Set()).get(w)!).add(g);
  });
  return out;
}

/**
 * Whether the released values' words name their partner value: of the words two or more values
 * hold, those all of whose values share one partner code are at least {@link WORD_NAMES_MARGIN}
 * more than with the partner codes shuffled over the values (seeded, the mean of 8 shuffles). Car names: `ford` is one
 * origin's; film titles: `the` is no count of subjects'.
 */
function wordsNamePartner(byCode: readonly (string | undefined)[], byPartner: readonly (readonly number[])[]): boolean {
  const valueCodes: number[] = [];
  const partnerOf: number[] = [];
  byPartner.forEach((codes, g) => codes.forEach((c) => (valueCodes.push(c), partnerOf.push(g))));
  const single = (of: readonly number[]): number => {
    const seen = new Map<string, { values: number; partner: number; one: boolean }>();
    valueCodes.forEach((c, i) => {
      for (const w of new Set(wordsOf(byCode[c] ?? ""))) {
        const e = seen.get(w);
        if (!e) seen.set(w, { values: 1, partner: of[i], one: true });
        else (e.values++, (e.one &&= e.partner === of[i]));
      }
    });
    let shared = 0;
    let one = 0;
    for (const e of seen.values()) if (e.values >= 2) (shared++, e.one && one++);
    return shared === 0 ? 0 : one / shared;
  };
  const shuffled = partnerOf.slice();
  const rng = new Rng(23);
  let chance = 0;
  for (let s = 0; s < WORD_NAMES_SHUFFLES; s++) {
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    chance += single(shuffled) / WORD_NAMES_SHUFFLES;
  }
  return single(partnerOf) >= chance + WORD_NAMES_MARGIN;
}

/** Shuffles {@link wordsNamePartner} averages. */
const WORD_NAMES_SHUFFLES = 8;

/** {@link wordsNamePartner}'s margin over the shuffled partner codes. */
const WORD_NAMES_MARGIN = 0.3;

/**
 * Whether every word of `v` the released values hold was seen beside partner code `g`; `loose`:
 * every such word seen beside one partner code only (`audi`: Europe; `the` of titles of two and
 * of three subjects names no count).
 */
function wordsFit(words: ReadonlyMap<string, ReadonlySet<number>>, v: string, g: number, loose = false): boolean {
  for (const w of wordsOf(v)) {
    const seen = words.get(w);
    if (seen !== undefined && !seen.has(g) && (!loose || seen.size === 1)) return false;
  }
  return true;
}

/** `describeColumns`' details of a categorical column: values with a code, pooled rare values. */
export function describeCategorical(c: ColumnCodec): string {
  const own = c.K - (c.otherCode >= 0 ? 1 : 0) - (c.missingCode >= 0 ? 1 : 0);
  return c.fromDomain
    ? "codes of the domain"
    : c.stats.count === 0
    ? "blank in every row: written blank"
    : `${own} values with a code` +
        (c.otherCode >= 0 ? `, rarer values (< ${c.stats.rare_threshold} rows) pooled` : "") +
        (c.stats.semantic ? `, written as fresh ${semanticKinds().SEMANTIC_LABELS[c.stats.semantic.kind]}` : "") +
        (c.stats.vocabulary ? `; public vocabulary: ${vocabularies().VOCABULARY_LABELS[c.stats.vocabulary]}` : "");
}

/**
 * Copies `codes[r]` to `index[r]` while each code has a text and is not `otherCode` (a separate
 * function of typed arrays, so its optimized code survives across columns).
 * @returns the first row not copied, `codes.length` when all were, or -(r + 1) for a row r whose
 *   code has no text and is not pooled.
 */
function copyCodes(codes: ArrayLike<number>, index: Int32Array, hasText: Uint8Array, otherCode: number): number {
  for (let r = 0; r < codes.length; r++) {
    const c = codes[r];
    if (c === otherCode) return r;
    if (hasText[c] !== 1) return -(r + 1);
    index[r] = c;
  }
  return codes.length;
}
