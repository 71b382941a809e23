/**
 * Domain mode: tables already discretized to integer codes, with a domain in Private-PGM's format
 * (McKenna, Sheldon & Miklau, ICML 2019; private-pgm's `data/adult-domain.json`):
 * `{ "column": K, ... }`. Code c of column f is feature code c (decoding gives the integers back;
 * `value_mappings[f]` is `{"0": 0, ..., "K-1": K-1}`, every column `categorical`, no caps). A value
 * is a code when it is ASCII digits (`"07"` is 7, as pandas reads it) in [0, K_f); anything else, a
 * blank included, is a {@link DataError}. The CSV's columns and the domain's keys must be the same
 * set. A domain is public (chosen without the data), which makes `./dp` meaningful: nothing but
 * noisy marginals then depends on the rows.
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
 * Reads and checks a domain (object or JSON file path); returns a fresh copy.
 * @throws DataError for a missing or non-JSON file, no keys, or a K not a positive safe integer.
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
 * The code book of one column of a discretized table, K from the domain (file header).
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
