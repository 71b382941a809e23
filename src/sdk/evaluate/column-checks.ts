/**
 * The per-column checks every evaluation carries (`checks`): ranges, decimals, datetime formats,
 * identifier shapes of the synthetic values against the real column's.
 */
import type { Metadata } from "../../contract";
import { decimalsOf, isNumeric, type ColumnCodec, type ScannedTable } from "../metadata/metadata";
import { DATETIME_FORMATS, DatetimeFormat } from "../metadata/datetime";
import { matchesIdShape, type IdShape } from "../metadata/identifier";
import type { ColumnCheck } from "./types";
import { pooledWritesFresh } from "../columns";

let knownFormats: DatetimeFormat[] | undefined;

/** True when `v` parses in the column's format or in any format datetime inference knows. */
function parsesAsDatetime(v: string, own: DatetimeFormat): boolean {
  if (own.parse(v)) return true;
  knownFormats ??= DATETIME_FORMATS.map((f) => new DatetimeFormat(f));
  return knownFormats.some((f) => f.parse(v) !== undefined);
}

/**
 * The check table: per real column, the synthetic column's blank share and, by kind, parse rate,
 * format, range, precision, known values (categorical), copies, distinctness and shape (id).
 * Work is per distinct synthetic value (the scan's dictionary), so it is linear in the rows.
 */
export function columnChecks(codecs: readonly ColumnCodec[], real: ScannedTable, synth: ScannedTable, metadata?: Metadata): ColumnCheck[] {
  return codecs.map((codec): ColumnCheck => {
    const rs = real.scans[real.columns.indexOf(codec.name)];
    const ss = synth.scans[synth.columns.indexOf(codec.name)];
    const st = codec.stats;
    const nonBlank = synth.n - ss.missing;
    const share = (pred: (v: string) => boolean): number => {
      let k = 0;
      ss.values.forEach((v, id) => {
        if (v !== "" && pred(v)) k += ss.counts[id];
      });
      return nonBlank ? k / nonBlank : 1;
    };
    const check: ColumnCheck = {
      column: codec.name,
      kind: codec.kind,
      blank_real: real.n ? rs.missing / real.n : 0,
      blank_synthetic: synth.n ? ss.missing / synth.n : 0,
    };
    const inRange = (x: number | undefined): boolean => x !== undefined && x >= (st.min ?? -Infinity) && x <= (st.max ?? Infinity);
    if (codec.kind === "numerical") {
      const d = st.decimals ?? 0;
      check.format = `${d} decimals`;
      check.parse = share(isNumeric);
      let parsed = 0;
      let inside = 0;
      ss.values.forEach((v, id) => {
        if (v === "" || !isNumeric(v)) return;
        parsed += ss.counts[id];
        if (inRange(Number(v))) inside += ss.counts[id];
      });
      check.in_range = parsed ? inside / parsed : 1;
      check.precision = share((v) => isNumeric(v) && decimalsOf(v) <= d);
    } else if (codec.kind === "datetime" && codec.datetime) {
      const fmt = codec.datetime;
      check.format = fmt.format;
      check.parse = share((v) => parsesAsDatetime(v, fmt));
      check.in_format = share((v) => fmt.parse(v) !== undefined);
      let parsed = 0;
      let inside = 0;
      ss.values.forEach((v, id) => {
        const x = v === "" ? undefined : fmt.parse(v)?.seconds;
        if (x === undefined) return;
        parsed += ss.counts[id];
        if (inRange(x)) inside += ss.counts[id];
      });
      check.in_range = parsed ? inside / parsed : 1;
    } else if (codec.kind === "categorical") {
      const known = new Set(rs.values);
      const mst = metadata?.column_stats?.[codec.name];
      if (pooledWritesFresh(mst)) check.fresh = share((v) => !known.has(v));
      else check.known = share((v) => known.has(v));
    } else if (codec.kind === "id" && st.id_shape) {
      const known = new Set(rs.values);
      const shape = st.id_shape as IdShape;
      check.format = shape.kind;
      check.copies = share((v) => known.has(v));
      check.shape = share((v) => matchesIdShape(shape, v));
      check.distinct = nonBlank ? (ss.values.length - (ss.missing > 0 ? 1 : 0)) / nonBlank : 1;
    }
    return check;
  });
}
