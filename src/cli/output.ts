/**
 * How the CLI reports failure: one sentence on stderr, `synthd: <message>`, exit code 1.
 * Errors from the SDK carry the contract's code, which is appended so scripts can match on it.
 */

/** Prints `err` as one line on stderr and exits with status 1. Never returns. */
export function reportAndExit(err: unknown): never {
  const e = err as { message?: string; code?: unknown } | undefined;
  let msg = e?.message ?? String(err);
  msg = msg.replace(/\s+/g, " ").trim();
  const code = typeof e?.code === "string" && /^[a-z_]+$/.test(e.code) ? ` (${e.code})` : "";
  process.stderr.write(`synthd: ${msg}${code}\n`);
  process.exit(1);
}
