/**
 * The embedded store: one LMDB environment with named sub-databases (DESIGN §4).
 *
 * Safe to open from the HTTP thread and from every engine worker at once (LMDB serialises
 * writers across threads and processes). Every change that touches more than one key runs in one
 * transaction. This class is the seam for another backend (Redis/PostgreSQL): keep it narrow.
 *
 * Sub-databases (key -> value):
 * - `orgs`:        org name -> {@link OrgRecord}
 * - `keys`:        SHA-256 hex of an API key -> {@link KeyRecord}
 * - `models`:      model id -> {@link ModelRecord}
 * - `model_index`: [org, env, created_ms, id] -> null   (range scans, newest first)
 * - `metadata`:    model id -> {@link Metadata}
 * - `checkpoints`: model id -> opaque msgpack value written by the engine
 */
import { createHash, randomBytes } from "node:crypto";
import { open, type Database, type RootDatabase } from "lmdb";
import type { Metadata, Model } from "../types";

/** `test` = sandbox (`svc_test_` keys), `live` = production (`svc_live_` keys). */
export type Environment = "test" | "live";

export interface OrgRecord {
  name: string;
  created_at: string;
}

export interface KeyRecord {
  org: string;
  env: Environment;
  created_at: string;
  /** First 12 characters of the key, for display; never the key itself. */
  prefix: string;
}

/** A stored model: the public resource plus its owner. */
export interface ModelRecord extends Model {
  org: string;
  env: Environment;
}

/** A page of models, newest first (contract: List Models). */
export interface ModelPage {
  items: ModelRecord[];
  has_more: boolean;
}

/** Thrown by {@link Store.listModels} when `starting_after` names no model of the caller. */
export class CursorNotFoundError extends Error {}

/** SHA-256 hex digest of an API key: the only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

const KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new API key: `svc_test_` or `svc_live_` + 32 random base-62 characters (~190 bits). */
export function newApiKey(env: Environment): string {
  const bytes = randomBytes(64);
  let body = "";
  for (const b of bytes) {
    if (b < 248) body += KEY_ALPHABET[b % 62]; // 248 = 4 * 62: no modulo bias
    if (body.length === 32) break;
  }
  return `svc_${env}_${body}`;
}

export class Store {
  readonly root: RootDatabase;
  private readonly orgs: Database<OrgRecord, string>;
  private readonly keys: Database<KeyRecord, string>;
  private readonly models: Database<ModelRecord, string>;
  private readonly modelIndex: Database<null, (string | number)[]>;
  private readonly metadata: Database<Metadata, string>;
  private readonly checkpoints: Database<unknown, string>;

  /** Opens (creating if needed) the environment in directory `dir`. */
  constructor(readonly dir: string) {
    this.root = open({ path: dir, maxDbs: 16, mapSize: 8 * 1024 ** 3 });
    this.orgs = this.root.openDB({ name: "orgs" });
    this.keys = this.root.openDB({ name: "keys" });
    this.models = this.root.openDB({ name: "models" });
    this.modelIndex = this.root.openDB({ name: "model_index" });
    this.metadata = this.root.openDB({ name: "metadata" });
    this.checkpoints = this.root.openDB({ name: "checkpoints" });
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  // ---- orgs and keys -------------------------------------------------------------------------

  /** True when the store holds no API key at all (first start). */
  isEmpty(): boolean {
    return this.keys.getKeysCount() === 0;
  }

  /** Creates `org` if missing. */
  async ensureOrg(org: string): Promise<void> {
    await this.orgs.transaction(() => {
      if (this.orgs.get(org) === undefined) {
        this.orgs.put(org, { name: org, created_at: new Date().toISOString() });
      }
    });
  }

  /** Creates a key for `org` (created if missing) and returns it; only its SHA-256 is stored. */
  async createKey(org: string, env: Environment): Promise<string> {
    const key = newApiKey(env);
    await this.root.transaction(() => {
      if (this.orgs.get(org) === undefined) {
        this.orgs.put(org, { name: org, created_at: new Date().toISOString() });
      }
      this.keys.put(hashKey(key), {
        org,
        env,
        created_at: new Date().toISOString(),
        prefix: key.slice(0, 12),
      });
    });
    return key;
  }

  /** The key's record, or undefined when no stored hash matches. */
  findKey(key: string): KeyRecord | undefined {
    return this.keys.get(hashKey(key));
  }

  // ---- models --------------------------------------------------------------------------------

  /** Stores a new model and its metadata in one transaction. */
  async createModel(rec: ModelRecord, metadata: Metadata): Promise<void> {
    await this.root.transaction(() => {
      this.models.put(rec.id, rec);
      this.modelIndex.put(indexKey(rec), null);
      this.metadata.put(rec.id, metadata);
    });
  }

  getModel(id: string): ModelRecord | undefined {
    return this.models.get(id);
  }

  /** The model if it exists and belongs to (org, env); otherwise undefined (contract rule 5). */
  getOwnedModel(id: string, org: string, env: Environment): ModelRecord | undefined {
    const m = this.models.get(id);
    return m && m.org === org && m.env === env ? m : undefined;
  }

  getMetadata(id: string): Metadata | undefined {
    return this.metadata.get(id);
  }

  /**
   * Applies `patch` to a model that still exists (a deleted model is never brought back by a late
   * progress write) and sets `updated_at`. Optionally writes a checkpoint in the same
   * transaction. Resolves to the updated record, or undefined when the model is gone.
   */
  async updateModel(
    id: string,
    patch: Partial<Omit<ModelRecord, "id" | "org" | "env" | "created_at">>,
    checkpoint?: unknown,
  ): Promise<ModelRecord | undefined> {
    return this.root.transaction(() => {
      const cur = this.models.get(id);
      if (cur === undefined) return undefined;
      const next: ModelRecord = { ...cur, ...patch, updated_at: new Date().toISOString() };
      this.models.put(id, next);
      if (checkpoint !== undefined) this.checkpoints.put(id, checkpoint);
      return next;
    });
  }

  getCheckpoint<T>(id: string): T | undefined {
    return this.checkpoints.get(id) as T | undefined;
  }

  /** Removes the model, its index entry, metadata and checkpoint in one transaction. */
  async deleteModel(id: string): Promise<boolean> {
    return this.root.transaction(() => {
      const cur = this.models.get(id);
      if (cur === undefined) return false;
      this.models.remove(id);
      this.modelIndex.remove(indexKey(cur));
      this.metadata.remove(id);
      this.checkpoints.remove(id);
      return true;
    });
  }

  /**
   * Models of (org, env), newest first, ties by id (DESIGN §3). `startingAfter` is a model id of
   * the caller; the page starts right after it.
   * @throws CursorNotFoundError when `startingAfter` names no model of (org, env).
   */
  listModels(org: string, env: Environment, limit: number, startingAfter?: string): ModelPage {
    let start: (string | number)[] = [org, env, Number.MAX_SAFE_INTEGER];
    let exclusive = false;
    if (startingAfter !== undefined) {
      const cursor = this.getOwnedModel(startingAfter, org, env);
      if (cursor === undefined) throw new CursorNotFoundError(startingAfter);
      start = indexKey(cursor);
      exclusive = true;
    }
    const items: ModelRecord[] = [];
    let has_more = false;
    for (const { key } of this.modelIndex.getRange({ start, end: [org, env, -1], reverse: true })) {
      if (exclusive && key[3] === start[3] && key[2] === start[2]) continue;
      const m = this.models.get(key[3] as string);
      if (m === undefined) continue;
      if (items.length === limit) {
        has_more = true;
        break;
      }
      items.push(m);
    }
    return { items, has_more };
  }

  /** Every model currently in `status` (used at start-up to resume training). */
  modelsWithStatus(status: ModelRecord["status"]): ModelRecord[] {
    const out: ModelRecord[] = [];
    for (const { value } of this.models.getRange({})) if (value.status === status) out.push(value);
    return out;
  }
}

function indexKey(m: ModelRecord): (string | number)[] {
  return [m.org, m.env, Date.parse(m.created_at), m.id];
}

/** A new model id: `mdl_` + 12 lowercase hex (DESIGN §3). */
export function newModelId(): string {
  return `mdl_${randomBytes(6).toString("hex")}`;
}

/** A new request id: `req_` + 24 characters from `[A-Za-z0-9]` (DESIGN §3). */
export function newRequestId(): string {
  const bytes = randomBytes(48);
  let body = "";
  for (const b of bytes) {
    if (b < 248) body += KEY_ALPHABET[b % 62];
    if (body.length === 24) break;
  }
  return `req_${body}`;
}
