/**
 * Domain mode: tables that are already discretized to integer codes, described by a
 * domain file in Private-PGM's format (McKenna, Sheldon & Miklau, "Graphical-model based
 * estimation and inference for differential privacy", ICML 2019; github.com/ryan112358/private-pgm,
 * `data/adult-domain.json`): a JSON object `{ "column": K, ... }` giving each column's number of
 * codes. Every value of column f must then be an integer code in [0, K_f).
 *
 * Rules:
 * - The codes are taken as they are: code c of column f is feature code c, so decoding gives the
 *   same integers back. `value_mappings[f]` is `{"0": 0, "1": 1, ..., "K-1": K-1}`, K_f comes from
 *   the domain (codes that never occur keep probability 0), every column is `categorical` and
 *   `column_stats[f]` is `{type: "categorical", count: n, missing: 0}`. The category and bin caps
 *   of raw-table extraction do not apply.
 * - A value is a code when it is a string of ASCII digits (after trimming); leading zeros are
 *   read as decimal (`"07"` is code 7, as pandas reads it). Anything else, a blank included, is
 *   a {@link DataError} naming the file, line and column: a discretized table has no missing
 *   values (give "missing" its own code in the domain instead).
 * - The CSV's columns and the domain's keys must be the same set (order: the CSV's); a column in
 *   one but not the other is a DataError.
 * - A domain is public knowledge by definition (it is chosen without looking at the data), which
 *   is what makes the differential-privacy option (`./dp`) meaningful: with a domain, nothing but
 *   noisy marginals depends on the rows.
 */
import { readFile } from "node:fs/promises";
import { fileOfDescription } from "../io/csv";
import { DataError } from "../errors";
import type { ColumnCodec, ColumnScan } from "../columns/common";

/** Column name -> number of codes K (a positive integer); Private-PGM's `*-domain.json` format. */
export type Domain = Record<string, number>;

/** A domain given inline or as the path of its JSON file. */
export type DomainSource = Domain | string;

const CODE_RE = /^\d+$/;

/**
 * Reads and checks a domain.
 * @param source a {@link Domain} object, or the path of a JSON file holding one.
 * @returns a fresh object with the same entries.
 * @throws DataError when the file is missing or not JSON, when it is not an object with at least
 *         one key, or when some K is not a positive safe integer (names the column).
 */
export async function loadDomain(source: DomainSource): Promise<Domain> {
  let raw: unknown = source;
  const where = typeof source === "string" ? source : "the domain";
  if (typeof source === "string") {
    let text: string;
    try {
      text = await readFile(source, "utf8");
    } catch (e) {
      throw new DataError(`Cannot read the domain file ${source} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`, {
        file: source,
        cause: e,
      });
    }
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new DataError(`The domain file ${source} is not valid JSON (${(e as Error).message}).`, { file: source, cause: e });
    }
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new DataError(`${where} must be a JSON object mapping each column to its number of codes, e.g. {"age": 85}.`, {
      file: typeof source === "string" ? source : undefined,
    });
  }
  const out: Domain = {};
  for (const [col, k] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof k !== "number" || !Number.isSafeInteger(k) || k < 1) {
      throw new DataError(`${where}: column "${col}" has ${JSON.stringify(k)} codes; expected a positive integer.`, {
        file: typeof source === "string" ? source : undefined,
        column: col,
      });
    }
    out[col] = k;
  }
  if (Object.keys(out).length === 0) {
    throw new DataError(`${where} names no columns.`, { file: typeof source === "string" ? source : undefined });
  }
  return out;
}

/**
 * Checks that a table's header and a domain name the same columns.
 * @param columns the table's header, in order.
 * @param source  name of the table for messages (a path, or "the in-memory table").
 * @throws DataError naming the first column present in one and absent from the other.
 */
export function checkDomainColumns(columns: readonly string[], domain: Domain, source: string): void {
  const file = fileOfDescription(source);
  const notInDomain = columns.filter((c) => !Object.hasOwn(domain, c));
  if (notInDomain.length) {
    throw new DataError(
      `${source}: column${notInDomain.length > 1 ? "s" : ""} ${notInDomain.map((c) => `"${c}"`).join(", ")} ${notInDomain.length > 1 ? "are" : "is"} not in the domain.`,
      { file, line: 1, column: notInDomain[0] },
    );
  }
  const notInTable = Object.keys(domain).filter((c) => !columns.includes(c));
  if (notInTable.length) {
    throw new DataError(
      `${source} has no column${notInTable.length > 1 ? "s" : ""} ${notInTable.map((c) => `"${c}"`).join(", ")}, which the domain names.`,
      { file, line: 1, column: notInTable[0] },
    );
  }
}

/**
 * The code book of one column of a discretized table (rules in the file header).
 * @param scan   the scanned column (distinct values, counts, first lines).
 * @param n      rows of the table.
 * @param K      the column's number of codes, from the domain.
 * @param source name of the table for messages.
 * @throws DataError for a blank, a non-integer or an out-of-range value, naming its first line.
 */
export function domainCodec(scan: ColumnScan, n: number, K: number, source: string): ColumnCodec {
  const file = fileOfDescription(source);
  scan.values.forEach((v, id) => {
    const line = scan.firstLines[id];
    const at = `${source}, line ${line}, column "${scan.name}"`;
    if (v === "") {
      throw new DataError(`${at}: the value is blank; a table with a domain has no missing values (give them a code).`, {
        file,
        line,
        column: scan.name,
      });
    }
    if (!CODE_RE.test(v)) {
      throw new DataError(`${at}: ${JSON.stringify(v)} is not an integer code in [0, ${K}).`, { file, line, column: scan.name });
    }
    if (Number(v) >= K) {
      throw new DataError(`${at}: code ${v} is outside the domain [0, ${K}).`, { file, line, column: scan.name });
    }
  });
  const mapping: Record<string, number> = {};
  for (let c = 0; c < K; c++) mapping[String(c)] = c;
  return {
    name: scan.name,
    kind: "categorical",
    K,
    missingCode: -1,
    otherCode: -1,
    stats: { type: "categorical", count: n, missing: 0 },
    mapping,
    encode: (v) => {
      if (!CODE_RE.test(v)) return -1;
      const c = Number(v);
      return c < K ? c : -1;
    },
    fromDomain: true,
  };
}
