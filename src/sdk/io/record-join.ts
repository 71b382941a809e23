/**
 * The join of a file's records with rows held in memory ({@link RecordJoin}), record by record:
 * the memory does not grow with the file's rows. Worker threads apply the same join to a CSV
 * file's bytes (`../metadata/csv-chunks`).
 */
import { DataError } from "../errors";
import type { JoinedFileInput, RecordJoin, RowBatch, TableRows } from "./inputs";

/** The joined table's columns: `keep`, then each lookup's names. */
export function joinedColumns(join: RecordJoin): string[] {
  return [...join.keep, ...join.lookups.flatMap((l) => l.names)];
}

/** Whether `source` is a {@link JoinedFileInput}. */
export function isJoined(source: unknown): source is JoinedFileInput {
  return typeof source === "object" && source !== null && "path" in source && "join" in source && (source as JoinedFileInput).join !== undefined;
}

/**
 * The file's header's positions of the join's columns (`keep`, then each lookup's key column).
 * @throws DataError naming the file for a column the header lacks; RangeError for a lookup whose
 *   cells are not one row of `names` per key (a caller's mistake).
 */
export function joinFields(header: readonly string[], join: RecordJoin, file: string): { keep: number[]; lookups: number[] } {
  const at = (c: string): number => {
    const j = header.indexOf(c);
    if (j < 0) throw new DataError(`${file} has no column "${c}", which its join needs (columns: ${header.join(", ")}).`, { file, column: c });
    return j;
  };
  for (const l of join.lookups) {
    if (l.cells.length !== l.keys.length || l.cells.some((r) => r.length !== l.names.length)) {
      throw new RangeError(`a join's lookup on "${l.column}" needs one row of ${l.names.length} cells per key`);
    }
  }
  return { keep: join.keep.map(at), lookups: join.lookups.map((l) => at(l.column)) };
}

/** Per lookup, key -> its row of cells (the last row of a repeated key). */
export function lookupIndex(join: RecordJoin): Map<string, string[]>[] {
  return join.lookups.map((l) => {
    const m = new Map<string, string[]>();
    l.keys.forEach((k, i) => m.set(k, l.cells[i]));
    return m;
  });
}

/**
 * The file's batches (header record first) as the joined table's: the header becomes the joined
 * columns, each record its joined cells (trimmed, as `./csv` reads them). `types` is empty.
 * @throws DataError (when iterated) as the file's reader, for a column the join needs that the
 *   header lacks, and for a record whose fields differ from the header's.
 */
export function joinRows(rows: TableRows, join: RecordJoin, file: string): TableRows {
  async function* joined(): AsyncGenerator<RowBatch> {
    let fields: ReturnType<typeof joinFields> | undefined;
    let width = 0;
    const index = lookupIndex(join);
    const blanks = join.lookups.map((l) => l.names.map(() => ""));
    for await (const b of rows.batches) {
      let r0 = 0;
      if (fields === undefined) {
        if (b.rows.length === 0) continue;
        const header = b.rows[0].map((h) => h.trim());
        width = header.length;
        fields = joinFields(header, join, file);
        yield { rows: [joinedColumns(join)], lines: [b.lines[0]] };
        r0 = 1;
      }
      const out: string[][] = [];
      for (let i = r0; i < b.rows.length; i++) {
        const r = b.rows[i];
        if (r.length !== width) {
          throw new DataError(`${file}: line ${b.lines[i]} has ${r.length} field${r.length === 1 ? "" : "s"} but the header has ${width}.`, { file, line: b.lines[i] });
        }
        const o = fields.keep.map((j) => r[j].trim());
        fields.lookups.forEach((j, k) => {
          for (const v of index[k].get(r[j].trim()) ?? blanks[k]) o.push(v);
        });
        out.push(o);
      }
      if (out.length > 0) yield { rows: out, lines: b.lines.slice(r0) };
    }
  }
  return { batches: joined(), types: [] };
}
