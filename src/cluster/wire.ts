/**
 * The shared topology's internal wire (docs/deploy.md). Redis keys under `${prefix}:`:
 * `bull:training:*` (BullMQ training jobs, job id = model id); `workers` (sorted set of
 * `${workerId} ${url}`, score = expiry in Unix ms on Redis's `TIME`, so machines whose clocks
 * disagree agree on who is live); `stop` (pub/sub: a model id whose training must stop).
 * A generate answer (`POST ${url}/internal/generate/${modelId}`, JSON GenerateRequest body) is
 * octet-stream: LE uint32 header length, UTF-8 JSON `{ model_id, num_rows, features }`, zero pad
 * to 4, codes as LE int32 feature-major. Errors: JSON {@link WorkerErrorBody}, 400, 401 (token),
 * 404 / 409 (model), 503.
 */
import type { RawGeneration } from "../engine/engine";

/** Default Redis key prefix of a deployment. */
export const DEFAULT_PREFIX = "synthd";
/** A worker's registration lives this long after its last heartbeat (ms). */
export const WORKER_TTL_MS = 5_000;
/** Workers renew their registration this often (ms). */
export const WORKER_HEARTBEAT_MS = 1_000;
/** BullMQ queue name of training jobs. */
export const TRAINING_QUEUE = "training";

/** Redis key of the live-worker set. */
export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** Redis pub/sub channel of stop requests. */
export function stopChannel(prefix: string): string {
  return `${prefix}:stop`;
}

/** Lua: renews a registration (KEYS[1] the set; ARGV TTL ms, member) and drops expired ones. */
export const REGISTER_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1)
return now`;

/** Lua: the members of the workers set (KEYS[1]) whose registration has not expired. */
export const LIVE_WORKERS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')`;

/** BullMQ `prefix` option of a deployment's queues. */
export function bullPrefix(prefix: string): string {
  return `${prefix}:bull`;
}

/** A worker's error answer. `kind` says which engine error it was. */
export interface WorkerErrorBody {
  error: {
    kind: "input" | "model_not_found" | "model_not_ready" | "unavailable" | "unauthorized" | "internal";
    message: string;
    param?: string;
    /** The model's status, for `model_not_ready`. */
    status?: string;
    /** Seconds, for `unavailable`. */
    retry_after?: number;
  };
}


/** Encodes a generation as described in the module comment. */
export function encodeGeneration(g: RawGeneration): Buffer {
  const header = Buffer.from(JSON.stringify({ model_id: g.model_id, num_rows: g.num_rows, features: g.features }), "utf8");
  const headerEnd = 4 + header.length;
  const start = Math.ceil(headerEnd / 4) * 4;
  const n = g.num_rows;
  const out = Buffer.alloc(start + g.features.length * n * 4);
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  const codes = new Int32Array(out.buffer, out.byteOffset + start, g.features.length * n);
  g.features.forEach((f, i) => codes.set(g.columns[f], i * n));
  return out;
}

/** Decodes {@link encodeGeneration}'s bytes. @throws Error when too short. */
export function decodeGeneration(body: Uint8Array): RawGeneration {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (buf.length < 4) throw new Error("generate answer too short");
  const len = buf.readUInt32LE(0);
  if (4 + len > buf.length) throw new Error("generate answer header truncated");
  const head = JSON.parse(buf.subarray(4, 4 + len).toString("utf8")) as Omit<RawGeneration, "columns">;
  const start = Math.ceil((4 + len) / 4) * 4;
  const n = head.num_rows;
  const need = start + head.features.length * n * 4;
  if (buf.length < need) throw new Error("generate answer codes truncated");
  // A copy aligned for Int32Array (the received buffer's offset need not be).
  const codes = new Int32Array(head.features.length * n);
  new Uint8Array(codes.buffer).set(buf.subarray(start, need));
  const columns: Record<string, Int32Array> = {};
  head.features.forEach((f, i) => (columns[f] = codes.subarray(i * n, (i + 1) * n)));
  return { ...head, columns };
}

/**
 * Rendezvous (highest random weight) order of `workers` for `modelId` (Thaler and Ravishankar,
 * IEEE/ACM ToN 1998): every front end agrees, so a model's requests reach one worker (its cache)
 * and move only when it leaves; the rest are the retry order.
 */
export function rendezvousOrder<T extends { id: string }>(modelId: string, workers: readonly T[]): T[] {
  const score = (w: T): number => fnv1a(`${modelId}\u0000${w.id}`);
  return [...workers].sort((a, b) => score(b) - score(a) || (a.id < b.id ? -1 : 1));
}

/** 32-bit FNV-1a of the UTF-16 code units, murmur3-finalised so nearby names spread. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
