/**
 * Raw HTTP over `net.Socket`, for the integration tests at the edges of HTTP (http-edges,
 * http10): bytes written exactly as given, and what came back with whether the server closed the
 * connection.
 */
import net from "node:net";

/** What a raw connection got: the bytes received and whether the server closed it. */
export interface RawResult {
  bytes: Buffer;
  text: string;
  closedByServer: boolean;
}

/**
 * Opens a TCP connection to `url` (from `localAddress` when given, e.g. `127.0.0.2`: another
 * client address on loopback), writes `parts` (one write each, `gapMs` apart) and collects what
 * comes back until the server closes the connection or `waitMs` passes.
 */
export function exchange(url: string, parts: (string | Buffer)[], waitMs: number, gapMs = 0, localAddress?: string): Promise<RawResult> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ port: Number(port), host: hostname, ...(localAddress === undefined ? {} : { localAddress }) });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      const bytes = Buffer.concat(chunks);
      resolve({ bytes, text: bytes.toString("latin1"), closedByServer });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("close", () => finish(true));
    s.on("error", () => undefined);
    s.on("connect", async () => {
      for (const p of parts) {
        s.write(p);
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

/** A POST with a JSON body as raw HTTP/1.1 text. */
export function rawPost(path: string, apiKey: string, body: unknown): string {
  const b = JSON.stringify(body);
  return (
    `POST ${path} HTTP/1.1\r\nHost: synthd\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`
  );
}
