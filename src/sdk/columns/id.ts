/**
 * The id kind: identifiers (keys, order numbers, UUIDs), which carry nothing to learn and are
 * written fresh on decoding. Shapes: `../metadata/identifier`; fresh values:
 * `../generate/id-generator`; this module is the kind around them.
 */
import type { ColumnStats } from "../../contract";
import { inferIdShape, rowCounterStart, type IdShape } from "../metadata/identifier";
import { DataError } from "../errors";
import type { SemanticKind, SemanticShape } from "../semantic";
import type { IdValues } from "../generate/id-generator";
import { badCode, candidateIndex, MISSING_KEY, type ColumnCodec, type ColumnScan, type FeatureDecoder } from "./common";

/** `../semantic`, loaded by the first fit or description of a text identifier, not by decoding. */
function semanticKinds(): typeof import("../semantic") {
  return require("../semantic");
}

const ID_WORDS = new Set(["id", "ids", "key", "code", "no", "nr", "num", "number", "uuid", "guid", "pk"]);

/**
 * True when a column name's first or last word (split at non-alphanumerics and camelCase humps) is
 * id, key, code, no, nr, num, number, uuid, guid or pk (`order_id`, `CustomerID`), like SDV's test.
 */
export function looksLikeIdName(name: string): boolean {
  return endsIn(name, ID_WORDS);
}

/** Whether a name's first or last word (split at non-alphanumerics and camelCase humps, lower-cased) is in `words`. */
function endsIn(name: string, words: ReadonlySet<string>): boolean {
  const w = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((x) => x !== "")
    .map((x) => x.toLowerCase());
  return w.length > 0 && (words.has(w[0]) || words.has(w[w.length - 1]));
}

/** Words that name a label rather than a quantity (never `num` or `number`: `education-num` counts). */
const CODE_WORDS = new Set(["id", "code", "key", "fips"]);

/**
 * True when a column name's first or last word (as {@link looksLikeIdName} splits it) is id, code,
 * key or fips (`Agency code`, `state_fips`, `id`).
 */
export function looksLikeCodeName(name: string): boolean {
  return endsIn(name, CODE_WORDS);
}

/** Identifier code book: one code (plus blank) and the shape, no values, no 2-way marginals. */
export function idCodec(scan: ColumnScan, n: number, k: number, declared?: SemanticKind): ColumnCodec {
  const values: string[] = [];
  const counts: number[] = [];
  scan.values.forEach((v, id) => {
    if (v !== "") {
      values.push(v);
      counts.push(scan.counts[id]);
    }
  });
  const missingCode = scan.missing > 0 ? 1 : -1;
  const mapping: Record<string, number> = {};
  if (missingCode >= 0) mapping[MISSING_KEY] = missingCode;
  return {
    name: scan.name,
    kind: "id",
    K: missingCode >= 0 ? 2 : 1,
    missingCode,
    otherCode: -1,
    stats: { type: "id", count: n - scan.missing, missing: scan.missing, id_shape: withCounter(scan, n, withSemantic(scan.name, inferIdShape(values, counts), values, counts, k, declared)) },
    mapping,
    encode: (v) => (v === MISSING_KEY ? missingCode : 0),
  };
}

/**
 * Headers that writers give a frame's row names or index: R's `write.csv` leaves it blank (read as
 * `Unnamed: 0`, as pandas names it; R's `read.csv` calls it `X`, readr `...1`), Rdatasets writes
 * `rownames`, pandas `index` or `level_0` after `reset_index`.
 */
const ROW_NAME_HEADERS = /^(rownames|row[._ ]?names|x|\.\.\.1|unnamed: ?0|index|level_0)$/i;

/**
 * Whether a scanned column numbers the rows of its table of `n` rows: under a row-name header
 * ({@link ROW_NAME_HEADERS}), no blank, and its values are the rows' positions from 0 or 1 in
 * file order ({@link rowCounterStart}); read from the whole table only, never a sample's scan.
 * The header is asked too, since a small made table's `start` may hold 0, 1, 2 ... by chance.
 */
export function isRowCounter(scan: ColumnScan, n: number): boolean {
  return ROW_NAME_HEADERS.test(scan.name.trim()) && scan.estimated === undefined && scan.missing === 0 && rowCounterStart(scan.values, n) !== undefined;
}

/** An integer shape of a column that numbers its rows gets `counter`. */
function withCounter(scan: ColumnScan, n: number, shape: IdShape): IdShape {
  return shape.kind === "integer" && isRowCounter(scan, n) ? { ...shape, counter: true } : shape;
}

/**
 * A text shape gets `semantic` when recognised or `declared`, else (words, not codes) kind `text`
 * from the column's own vocabulary, words in >= k rows; integer shapes are left as they are.
 * @throws DataError when a semantic kind is declared for an integer column, or an unknown kind.
 */
function withSemantic(name: string, shape: IdShape, values: string[], counts: number[], k: number, declared?: SemanticKind): IdShape {
  if (shape.kind !== "text") {
    if (declared !== undefined) {
      throw new DataError(`Column "${name}" holds integers, so it cannot be declared semantic ${JSON.stringify(declared)}; drop "semantic" from its override.`, { column: name });
    }
    return shape;
  }
  if (declared !== undefined && !semanticKinds().SEMANTIC_KINDS.includes(declared)) {
    throw new DataError(`The override of column "${name}" has semantic ${JSON.stringify(declared)}; use one of ${semanticKinds().SEMANTIC_KINDS.join(", ")}.`, { column: name });
  }
  // A recognised (or declared) kind first; else the column's own words; codes keep their positions.
  const sem = semanticKinds();
  const semantic = sem.semanticShape(name, values, counts, k, declared) ?? (declared === undefined ? sem.vocabularyShape(values, counts, k) : undefined);
  return semantic ? { ...shape, semantic } : shape;
}

/**
 * Decoder of an id feature: code 0 -> `ids.value(row)` (fresh, distinct within the sample), the
 * missing code -> "", anything else (or no generator) -> APIError.
 */
export function idDecoder(f: string, K: number, stats: ColumnStats, missingCode: number | undefined, features?: readonly string[]): FeatureDecoder {
  const shape = stats.id_shape as IdShape;
  const sem = shape.kind === "text" ? (shape.semantic as SemanticShape | undefined) : undefined;
  const partner = sem?.word_partner && features?.includes(sem.word_partner.column) ? sem.word_partner.column : undefined;
  const tied = partner ? wordPartners().tiedWords(sem) : undefined;
  return {
    name: f,
    K,
    idShape: shape,
    ...(partner && tied ? { partner } : {}),
    decode: (c, _rng, row, ids, partnerCode) => {
      if (c === missingCode) return "";
      if (c !== 0 || !ids) return badCode(f, c, K);
      if (!tied || partnerCode === undefined) return ids.value(row);
      // A title whose tied words belong to another value of the partner (`Starlink` beside a
      // company other than SpaceX) gives way to the row's next candidate (indices past any
      // sample's rows, read without being marked written) whose tied words are the row's value's,
      // so the share of texts with tied words stays; else to the first with none.
      const { fitsPartner, lettersOf } = wordPartners();
      // A semantic shape's values come from `SemanticGenerator`, whose `value` takes `issue`.
      const gen = ids as IdValues & { value(i: number, issue?: boolean): string };
      let untied: number | undefined;
      for (let t = 0; t < TIED_TRIES; t++) {
        const at = candidateIndex(row, t);
        const v = gen.value(at, false);
        if (!fitsPartner(tied, v, partnerCode)) continue;
        if (t === 0 || lettersOf(v).some((w) => tied.has(w))) return gen.value(at);
        untied ??= at;
      }
      return gen.value(untied ?? row);
    },
  };
}

/** Candidates an identifier with tied words reads for one that fits its row. */
const TIED_TRIES = 32;

/** `../semantic/word-partners`, loaded by a decoder of an identifier with tied words. */
function wordPartners(): typeof import("../semantic/word-partners") {
  return require("../semantic/word-partners");
}

/** `describeColumns`' details of an id column: integer range or text prefix and lengths. */
export function describeId(st: ColumnStats): string {
  const s = st.id_shape!;
  return s.kind === "integer"
    ? s.counter
      ? `row numbers, ${s.min} .. ${s.max}; written ${s.min}, ${s.min + 1}, ... in sample order`
      : `integer identifiers, ${s.min} .. ${s.max}; fresh values on decoding`
    : s.semantic
    ? `${semanticKinds().SEMANTIC_LABELS[s.semantic.kind]} (${s.semantic.locale ?? "en"})` +
      (s.semantic.text ? `, ${s.semantic.text.words.length} ${s.semantic.text.trigrams ? "tokens" : "words"} seen in >= ${s.semantic.text.k} rows` : "") +
      (s.semantic.codes ? `, ${s.semantic.codes.length} forms` : "") +
      (s.semantic.letter_case ? `, written in ${s.semantic.letter_case === "upper" ? "capitals" : "lower case"}` : "") +
      `; fresh values on decoding`
    : `text identifiers${s.prefix ? ` with prefix ${JSON.stringify(s.prefix)}` : ""}, lengths ${Object.keys(s.lengths).join("/")}; fresh values on decoding`;
}
