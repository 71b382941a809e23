/**
 * The server's logger: pino, JSON lines on stderr. Request lines never carry headers, keys or
 * bodies; the redaction list is a second line of defence should a caller log one.
 */
import pino, { type Logger } from "pino";

/** Field paths pino replaces with `[Redacted]` wherever they appear in a log object. */
export const REDACT_PATHS = [
  "authorization",
  "headers.authorization",
  "*.authorization",
  "*.headers.authorization",
  "key",
  "*.key",
  "api_key",
  "*.api_key",
  // The HTTP/1.0 listener's secret (src/server/http10.ts), were a caller to log forwarded headers.
  'headers["x-synthd-http10-secret"]',
  '*.headers["x-synthd-http10-secret"]',
];

/** A pino logger writing to stderr (fd 2) at `level` (default `info`). */
export function createLogger(level: pino.LevelWithSilent = "info"): Logger {
  return pino({ name: "synthd", level, redact: { paths: REDACT_PATHS } }, pino.destination({ fd: 2, sync: false }));
}
