/** `synthd models ls|get|rm`: the models of the key's organization and environment. */
import type { Model } from "../../contract";
import { fmtLoss } from "../progress";
import { client, type ClientOptions } from "./shared";

function modelRow(m: Model): string[] {
  return [m.id, m.status, String(m.current_epoch), fmtLoss(m.train_loss), fmtLoss(m.val_loss), m.created_at];
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  process.stdout.write([line(header), ...rows.map(line)].join("\n") + "\n");
}

/** How many of the newest models `models ls` describes by their metadata (one request each). */
export const MODELS_LS_DETAILED = 20;

/**
 * `synthd models ls`: every model of the key's organization and environment, newest first. The
 * {@link MODELS_LS_DETAILED} newest also show what they were fitted on, read from the metadata the
 * SDK sent (`metadata.source`: file name and rows; the number of columns): one
 * `GET /v1/models/{id}/metadata` each, four at a time and without retries, so a long list does not
 * spend the organization's rate limit; `-` where that is unknown (an older model, metadata with no
 * source, private metadata without a row count, or a request refused).
 */
export async function modelsListCommand(opts: ClientOptions): Promise<void> {
  const api = client(opts);
  const models: Model[] = [];
  for await (const m of api.models.list({ limit: 100 })) models.push(m);
  const details: string[][] = models.map(() => ["-", "-", "-"]);
  let next = 0;
  const describe = async (): Promise<void> => {
    for (let i = next++; i < Math.min(models.length, MODELS_LS_DETAILED); i = next++) {
      try {
        const md = await api.models.metadata(models[i].id, { maxRetries: 0 });
        details[i] = [md.source?.name ?? "-", md.source?.rows === undefined ? "-" : String(md.source.rows), String(md.features.length)];
      } catch {
        // Shown as unknown: the list itself is what the command promises.
      }
    }
  };
  await Promise.all([describe(), describe(), describe(), describe()]);
  const rows = models.map((m, i) => {
    const [id, ...rest] = modelRow(m);
    return [id, details[i][0], details[i][1], details[i][2], ...rest];
  });
  printTable(["ID", "SOURCE", "ROWS", "COLUMNS", "STATUS", "EPOCH", "TRAIN_LOSS", "VAL_LOSS", "CREATED_AT"], rows);
}

/** `synthd models get ID`: the model resource as JSON. */
export async function modelsGetCommand(id: string, opts: ClientOptions): Promise<void> {
  const m = await client(opts).models.retrieve(id);
  process.stdout.write(JSON.stringify(m, null, 2) + "\n");
}

/** `synthd models rm ID`: deletes the model and the near-copy filter `fit` kept for it here. */
export async function modelsRemoveCommand(id: string, opts: ClientOptions): Promise<void> {
  await client(opts).models.delete(id);
  const { filterDir, removeFilter } = await import("./near-copy-store");
  removeFilter(filterDir(), id);
  process.stderr.write(`deleted ${id}\n`);
}
