/** Extraction's one streaming pass over a table (the file is never held as a string). */
import { readTable, describeSource, type ReadOptions, type TableSource } from "../io/csv";
import type { SourceType } from "../io/inputs";
import { isNumeric } from "../columns";
import { formattedNumbers } from "../columns/number-format";
import type { ScannedTable } from "./encoded";

/** A growing Int32 array: the per-row value ids of one column. */
class GrowInt32 {
  buf = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Reads a table once, collecting per column distinct values, counts, first lines and row ids.
 * @throws DataError for `readTable`'s problems; RangeError for an unknown encoding label.
 */
export async function scanTable(
  source: TableSource,
  minColumns = 2,
  read: Pick<ReadOptions, "delimiter" | "encoding" | "onProgress"> = {},
): Promise<ScannedTable> {
  let types: (SourceType | undefined)[] = [];
  let dicts: Map<string, number>[] = [];
  let scans: {
    name: string;
    values: string[];
    counts: number[];
    firstLines: number[];
    ids: GrowInt32;
    missing: number;
    numeric: boolean;
  }[] = [];
  const n = await readTable(
    source,
    (header, declared) => {
      types = declared.slice();
      dicts = header.map(() => new Map());
      scans = header.map((name) => ({ name, values: [], counts: [], firstLines: [], ids: new GrowInt32(), missing: 0, numeric: true }));
    },
    (values, line) => {
      for (let c = 0; c < values.length; c++) {
        const v = values[c];
        const s = scans[c];
        let id = dicts[c].get(v);
        if (id === undefined) {
          id = s.values.length;
          dicts[c].set(v, id);
          s.values.push(v);
          s.counts.push(0);
          s.firstLines.push(line);
          if (s.numeric && v !== "" && !isNumeric(v)) s.numeric = false;
        }
        s.counts[id]++;
        if (v === "") s.missing++;
        s.ids.push(id);
      }
    },
    { minColumns, delimiter: read.delimiter, encoding: read.encoding, onProgress: read.onProgress },
  );
  scans.forEach((s, c) => {
    if (types[c] === "text" || types[c] === "dictionary") s.numeric = false;
    if (types[c] === "timestamp") wholeSeconds(s.values);
  });
  return {
    source: describeSource(source),
    columns: scans.map((s) => s.name),
    n,
    ...(types.some((t) => t !== undefined) ? { types } : {}),
    scans: scans.map((s, c) => {
      const scan = { name: s.name, values: s.values, counts: s.counts, firstLines: s.firstLines, ids: s.ids.view(), missing: s.missing, numeric: s.numeric && s.missing < n };
      // Untyped text only: a typed source's text column says it holds no numbers.
      return types[c] === undefined && scan.missing < n ? formattedNumbers(scan) : scan;
    }),
  };
}

/**
 * Typed timestamps are read as `yyyy-MM-dd HH:mm:ss.SSS`; when no value has a fraction of a second,
 * the `.000` goes (in place), so the column reads as its CSV export does.
 */
function wholeSeconds(values: string[]): void {
  if (!values.every((v) => v === "" || v.endsWith(".000"))) return;
  for (let i = 0; i < values.length; i++) if (values[i] !== "") values[i] = values[i].slice(0, -4);
}
