/** How the PostgreSQL store's rows map to records (msgpack, int8 as number, row shapes). */
import { Packr } from "msgpackr";
import { types as pgTypes, type CustomTypesConfig } from "pg";
import type { ModelRecord, OrgRecord } from "../records";

/** msgpack with structured cloning (typed arrays, Buffers, Maps, Sets, Dates round-trip). */
const packr = new Packr({ structuredClone: true, useRecords: false });
/** A value as msgpack bytes, copied out of the encoder's reusable buffer. */
export const pack = (v: unknown): Buffer => Buffer.from(packr.pack(v));
/** The value of msgpack bytes written by {@link pack}. */
export const unpack = <T>(b: Buffer): T => packr.unpack(b) as T;

/** int8 (bigint, bigserial) as a number: every such value of this schema is a safe integer. */
export const PG_TYPES: CustomTypesConfig = {
  getTypeParser: (oid, format) => (oid === pgTypes.builtins.INT8 ? (v: string) => Number(v) : pgTypes.getTypeParser(oid, format)),
};

/** A `models` row as the store reads it. */
export interface ModelRow {
  record: ModelRecord;
}

/** An `orgs` row. */
export interface OrgRow {
  name: string;
  created_at: string;
  rate_limit: number | null;
  live_quota: number | null;
}

/** The {@link OrgRecord} of an `orgs` row (limits left unset where the row has NULL). */
export function orgRecord(r: OrgRow): OrgRecord {
  const out: OrgRecord = { name: r.name, created_at: r.created_at };
  if (r.rate_limit !== null) out.rate_limit = r.rate_limit;
  if (r.live_quota !== null) out.live_quota = r.live_quota;
  return out;
}
