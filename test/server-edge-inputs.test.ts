/**
 * Edge inputs of issue 11, points 5 and 6: each gave a 500 or a wrong acceptance, and each must get
 * the contract's answer (400 `parameter_invalid` naming its `param`, or 413 `request_too_large`
 * read in full by Node's `fetch`).
 *
 * - latent values outside the float32 range (`1e308`): `body.embedding[i][j]`;
 * - JSON nested deeper than {@link MAX_JSON_DEPTH} levels (with or without an Idempotency-Key): `body`;
 * - `1e400` (Infinity) in any number field of the request types: that field;
 * - ill-formed UTF-16 (lone surrogates) in any key or string of a body: that key or string;
 * - `__proto__`, `constructor`, `prototype` in a query: `query.<name>`;
 * - repeated or conflicting `Content-Length` / `Transfer-Encoding`: `headers.content-length` /
 *   `headers.transfer-encoding`, and the connection is closed (no smuggled request runs);
 * - a 17 MiB body: 413 with the envelope, every time, also against a server in another process;
 * - `top_p: 0`: accepted, and it keeps only the most probable code (ties: the lowest code).
 *
 * Most tests use the in-process harness (test/server-helpers.ts); the generate tests that must go
 * through the real engine use the contract harness, and the 413 test runs `synthd serve` as a child
 * process (in one process the client's upload and the server's close never race).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { join } from "node:path";
import { removeDir, startServer as startServeProcess, tempDir, type ServerProcess } from "../bench/harness";
import { flattenLatents, InputError } from "../src/model/sampling/inputs";
import { nativeAddon } from "../src/model/compute/native";
import { checkSampleArgs, sampleCodes, sampleCodesJs } from "../src/model/sampling/sampling";
import { MAX_JSON_DEPTH } from "../src/server/steps/parseJson";
import { readyModel, startContract, type Contract } from "./contract/harness";
import { mulberry32 } from "./fixtures";
import { assertError, call, createTestModel, startHarness, validCreateBody, type Harness, type Res } from "./server-helpers";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.stop();
});

const newModel = (config?: Record<string, unknown>): Promise<string> => createTestModel(h, config);

/** `n` latent rows of length `dim`, all zeros. */
function zeros(n: number, dim: number): number[][] {
  return Array.from({ length: n }, () => new Array<number>(dim).fill(0));
}

/**
 * JSON text of `value` with every number equal to `marker` written as `literal` (JSON.stringify
 * cannot write `1e400`).
 */
function withLiteral(value: unknown, marker: number, literal: string): string {
  const text = JSON.stringify(value);
  const needle = String(marker);
  assert.ok(text.includes(needle), `marker ${needle} not in the body`);
  return text.split(needle).join(literal);
}

describe("latents outside the float32 range", () => {
  test("1e308 (finite in float64, Infinity in float32) is parameter_invalid on body.embedding[i][j], the first one", async () => {
    const id = await newModel();
    const embedding = zeros(3, 64);
    embedding[1][5] = 1e308;
    embedding[2][0] = 1e39;
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding } });
    assertError(r, "parameter_invalid", "body.embedding[1][5]");
    assert.match(r.json.error.message, /float32/);
    assert.match(r.json.error.message, /3\.4028234663852886e\+38/);
  });

  test("negative values below -3.4e38 are refused, float32's own extremes are accepted", async () => {
    const id = await newModel();
    const low = zeros(2, 64);
    low[0][63] = -3.5e38;
    assertError(await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: low } }), "parameter_invalid", "body.embedding[0][63]");
    const edge = zeros(2, 64);
    edge[0][0] = 3.4028234663852886e38;
    edge[1][1] = -3.4028234663852886e38;
    edge[1][2] = 1e-300; // underflows to 0 in float32: fine
    const ok = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: edge } });
    assert.equal(ok.status, 200, ok.text);
  });

  test("the engine's own check (flattenLatents) refuses them with the same param", () => {
    const rows = zeros(2, 4);
    rows[1][2] = -1e300;
    assert.throws(() => flattenLatents(rows, 4), (err: unknown) => err instanceof InputError && err.param === "body.embedding[1][2]" && /float32/.test(err.message));
  });
});

describe("JSON nesting depth", () => {
  const deepArray = "[".repeat(10_000) + "]".repeat(10_000);
  const deepObject = '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000);

  for (const [name, body] of [["arrays", deepArray], ["objects", deepObject]] as const) {
    test(`10,000 nested ${name} with an Idempotency-Key are parameter_invalid on body, on both POST routes`, async () => {
      const id = await newModel();
      for (const path of ["/v1/models", `/v1/models/${id}/generate`]) {
        for (const headers of [{ "idempotency-key": `deep-${name}-${path}` }, {}] as Record<string, string>[]) {
          const r = await call(h.url, path, { key: h.keys.test, body, headers });
          assertError(r, "parameter_invalid", "body");
          assert.match(r.json.error.message, new RegExp(`nested more than ${MAX_JSON_DEPTH} levels`));
        }
      }
    });
  }

  test("the limit is exact: MAX_JSON_DEPTH levels pass to validation, one more is refused", async () => {
    const at = (levels: number): string => `{"metadata":${validCreateBodyText()},"x":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body: at(MAX_JSON_DEPTH) }), "parameter_invalid", "body.x");
    const over = await call(h.url, "/v1/models", { key: h.keys.test, body: at(MAX_JSON_DEPTH + 1) });
    assertError(over, "parameter_invalid", "body");
  });

  test("brackets and escaped quotes inside strings do not count", async () => {
    const body = validCreateBody();
    const name = `[{"\\${"[".repeat(500)}`;
    body.metadata.features[0] = name;
    body.metadata.cardinalities = { [name]: 2, b: 3 };
    body.metadata.empirical_probs = { [name]: [0.25, 0.75], b: [0.2, 0.3, 0.5] };
    body.metadata.value_mappings = { [name]: { x: 0, y: 1 }, b: { p: 0, q: 1, r: 2 } };
    body.metadata.marginals![0].features = [name, "b"];
    const r = await call(h.url, "/v1/models", { key: h.keys.test, body });
    assert.equal(r.status, 201, r.text);
  });
});

/** The metadata of {@link validCreateBody} as JSON text. */
function validCreateBodyText(): string {
  return JSON.stringify(validCreateBody().metadata);
}

describe("Infinity (1e400) in number fields", () => {
  const M = 123456.789; // marker replaced by the literal
  const numerical = { type: "numerical", count: 4, missing: 0, min: 0, max: 10, mean: 5, std: 2, bin_edges: [0, 5, 10], integer: true, decimals: 0 };

  /** [name, body with one field = M, expected param] for Create Model. */
  const createCases: [string, (b: any) => unknown, string][] = [
    ["config.max_training_time", (b) => ({ ...b, config: { max_training_time: M } }), "body.config.max_training_time"],
    ["config.privacy_noise", (b) => ({ ...b, config: { privacy_noise: M } }), "body.config.privacy_noise"],
    ["config.learning_rate", (b) => ({ ...b, config: { learning_rate: M } }), "body.config.learning_rate"],
    ["config.embedding_dim", (b) => ({ ...b, config: { embedding_dim: M } }), "body.config.embedding_dim"],
    ["config.batch_size", (b) => ({ ...b, config: { batch_size: M } }), "body.config.batch_size"],
    ["config.max_epochs", (b) => ({ ...b, config: { max_epochs: M } }), "body.config.max_epochs"],
    ["config.early_stop_patience", (b) => ({ ...b, config: { early_stop_patience: M } }), "body.config.early_stop_patience"],
    ["cardinalities", (b) => ({ metadata: { ...b.metadata, cardinalities: { a: M, b: 3 } } }), "body.metadata.cardinalities.a"],
    ["empirical_probs", (b) => ({ metadata: { ...b.metadata, empirical_probs: { a: [0.25, M], b: [0.2, 0.3, 0.5] } } }), "body.metadata.empirical_probs.a[1]"],
    ["value_mappings", (b) => ({ metadata: { ...b.metadata, value_mappings: { a: { x: 0, y: M } } } }), "body.metadata.value_mappings.a.y"],
    ["marginals probs", (b) => ({ metadata: { ...b.metadata, marginals: [{ features: ["a", "b"], probs: [0.05, 0.1, M, 0.15, 0.2, 0.4] }] } }), "body.metadata.marginals[0].probs[2]"],
  ];
  for (const field of ["min", "max", "mean", "std", "count", "missing", "decimals"]) {
    createCases.push([`column_stats ${field}`, (b) => ({ metadata: { ...b.metadata, column_stats: { a: { ...numerical, [field]: M } } } }), `body.metadata.column_stats.a.${field}`]);
  }
  createCases.push(
    ["column_stats bin_edges entry", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { ...numerical, bin_edges: [0, M, 10] } } } }), "body.metadata.column_stats.a.bin_edges[1]"],
    ["column_stats rare_threshold", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "categorical", count: 4, missing: 0, rare_threshold: M } } } }), "body.metadata.column_stats.a.rare_threshold"],
    ["column_stats offset", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "datetime", count: 4, missing: 0, format: "yyyy", granularity: "day", offset: M, min: 0, max: 1 } } } }), "body.metadata.column_stats.a.offset"],
    ["column_stats id_shape.max (integer)", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "id", count: 4, missing: 0, id_shape: { kind: "integer", min: 1, max: M, distinct: 4 } } } } }), "body.metadata.column_stats.a.id_shape.max"],
    ["column_stats id_shape.lengths (text)", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "id", count: 4, missing: 0, id_shape: { kind: "text", prefix: "", lengths: { "3": M }, positions: ["0-9"] } } } } }), 'body.metadata.column_stats.a.id_shape.lengths["3"]'],
  );
  for (const field of ["epsilon", "delta", "rho", "sigma"]) {
    const privacy = { epsilon: 1, delta: 1e-6, rho: 0.1, sigma: 2, [field]: M };
    createCases.push([`column_stats privacy.${field}`, (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "categorical", count: 4, missing: 0, privacy } } } }), `body.metadata.column_stats.a.privacy.${field}`]);
  }

  for (const [name, make, param] of createCases) {
    test(`${name}: 1e400 and -1e400 are parameter_invalid on ${param}`, async () => {
      const before = h.engine.calls.length;
      for (const literal of ["1e400", "-1e400"]) {
        const r = await call(h.url, "/v1/models", { key: h.keys.test, body: withLiteral(make(validCreateBody()), M, literal) });
        assertError(r, "parameter_invalid", param);
      }
      assert.equal(h.engine.calls.length, before, "nothing was queued");
    });
  }

  test("the same bodies with a finite value are accepted (the cases test only the infinite number)", async () => {
    for (const [name, make] of createCases) {
      if (/cardinalities|empirical_probs|marginals|value_mappings/.test(name)) continue; // 7 is no valid probability or code there
      const r = await call(h.url, "/v1/models", { key: h.keys.test, body: withLiteral(make(validCreateBody()), M, "7") });
      assert.equal(r.status, 201, `${name}: ${r.text}`);
    }
  });

  test("Generate: temperature, top_p, num_rows, seed and latents", async () => {
    const id = await newModel();
    const path = `/v1/models/${id}/generate`;
    const cases: [unknown, string][] = [
      [{ embedding: { num_rows: 1 }, temperature: M }, "body.temperature"],
      [{ embedding: { num_rows: 1 }, top_p: M }, "body.top_p"],
      [{ embedding: { num_rows: M } }, "body.embedding.num_rows"],
      [{ embedding: { num_rows: 1, seed: M } }, "body.embedding.seed"],
      [{ embedding: [[0, M]] }, "body.embedding[0][1]"],
    ];
    for (const [body, param] of cases) {
      for (const literal of ["1e400", "-1e400"]) {
        assertError(await call(h.url, path, { key: h.keys.test, body: withLiteral(body, M, literal) }), "parameter_invalid", param);
      }
    }
    assertError(await call(h.url, "/v1/models?limit=1e400", { key: h.keys.test }), "parameter_invalid", "query.limit");
  });
});

describe("ill-formed UTF-16 (lone surrogates)", () => {
  const cases: [string, (b: any) => unknown, string][] = [
    ["a feature name", (b) => ({ metadata: { ...b.metadata, features: ["a", "b\ud800"] } }), "body.metadata.features[1]"],
    ["a trailing surrogate alone", (b) => ({ metadata: { ...b.metadata, features: ["\udc00a", "b"] } }), "body.metadata.features[0]"],
    ["a value_mappings key", (b) => ({ metadata: { ...b.metadata, value_mappings: { a: { x: 0, "y\ud83d": 1 } } } }), 'body.metadata.value_mappings.a["y\\ud83d"]'],
    ["a feature key of cardinalities", (b) => ({ metadata: { ...b.metadata, cardinalities: { a: 2, b: 3, "\udfff": 1 } } }), 'body.metadata.cardinalities["\\udfff"]'],
    ["a string value in column_stats", (b) => ({ metadata: { ...b.metadata, column_stats: { a: { type: "datetime", count: 1, missing: 0, format: "yyyy\ud800" } } } }), "body.metadata.column_stats.a.format"],
    ["an unknown key (checked before the shape)", (b) => ({ ...b, "\ud800": 1 }), 'body["\\ud800"]'],
    ["a config string", (b) => ({ ...b, config: { model_size: "\udbff" } }), "body.config.model_size"],
  ];
  for (const [name, make, param] of cases) {
    test(`${name} is parameter_invalid on ${param}`, async () => {
      const before = h.engine.calls.length;
      const r = await call(h.url, "/v1/models", { key: h.keys.test, body: make(validCreateBody()), headers: { "idempotency-key": `surrogate-${name}` } });
      assertError(r, "parameter_invalid", param);
      assert.match(r.json.error.message, /UTF-16/);
      assert.equal(h.engine.calls.length, before, "nothing was queued");
    });
  }

  test("the first ill-formed string in document order is named (a key before its value)", async () => {
    const body = `{"metadata":{"features":["ok","\\ud800x"],"cardinalities":{"\\udc00":"\\udc01"}}}`;
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body }), "parameter_invalid", "body.metadata.features[1]");
    const body2 = `{"metadata":{"cardinalities":{"\\udc00":"\\udc01"}}}`;
    assertError(await call(h.url, "/v1/models", { key: h.keys.test, body: body2 }), "parameter_invalid", 'body.metadata.cardinalities["\\udc00"]');
  });

  test("well-formed surrogate pairs (emoji, CJK extension B) are fine and stored as sent", async () => {
    const body = validCreateBody();
    const name = "ok \ud83d\ude00 \ud840\udc00";
    body.metadata.features[0] = name;
    body.metadata.cardinalities = { [name]: 2, b: 3 };
    body.metadata.empirical_probs = { [name]: [0.25, 0.75], b: [0.2, 0.3, 0.5] };
    body.metadata.value_mappings = { [name]: { "\ud83d\udc4d": 0, y: 1 }, b: { p: 0, q: 1, r: 2 } };
    body.metadata.marginals![0].features = [name, "b"];
    const r = await call(h.url, "/v1/models", { key: h.keys.test, body });
    assert.equal(r.status, 201, r.text);
    const md = await call(h.url, `/v1/models/${r.json.data.id}/metadata`, { key: h.keys.test });
    assert.equal(md.status, 200);
    assert.deepEqual(md.json.data.features, [name, "b"]);
    assert.deepEqual(md.json.data.value_mappings[name], { "\ud83d\udc4d": 0, y: 1 });
  });

  test("Generate bodies are checked too", async () => {
    const id = await newModel();
    const r = await call(h.url, `/v1/models/${id}/generate`, { key: h.keys.test, body: { embedding: { num_rows: 1 }, "\ud800": 1 } });
    assertError(r, "parameter_invalid", 'body["\\ud800"]');
  });
});

describe("prototype names in the query", () => {
  for (const name of ["__proto__", "constructor", "prototype", "hasOwnProperty", "toString"]) {
    test(`?${name}=1 is parameter_invalid on query.${name}, on list and get`, async () => {
      const id = await newModel();
      assertError(await call(h.url, `/v1/models?${name}=1`, { key: h.keys.test }), "parameter_invalid", `query.${name}`);
      assertError(await call(h.url, `/v1/models?limit=2&${name}=1`, { key: h.keys.test }), "parameter_invalid", `query.${name}`);
      assertError(await call(h.url, `/v1/models/${id}?${name}=1`, { key: h.keys.test }), "parameter_invalid", `query.${name}`);
      assertError(await call(h.url, `/v1/models/${id}/metadata?${name}=1`, { key: h.keys.test }), "parameter_invalid", `query.${name}`);
    });
  }

  test("a bracketed prototype name is named in bracket form", async () => {
    assertError(await call(h.url, "/v1/models?__proto__[limit]=5", { key: h.keys.test }), "parameter_invalid", 'query["__proto__[limit]"]');
  });
});

/** One parsed HTTP/1.1 response. */
interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `text` on a fresh TCP connection and reads until the server closes it, or until
 * `responses` complete responses have arrived when given. The result says whether it was closed.
 * (A fallback of 10 s ends the read of a connection the server keeps open; nothing is timed.)
 */
function exchange(port: number, text: string, responses?: number): Promise<{ responses: RawResponse[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    let done = false;
    const parsed: RawResponse[] = [];
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses: parsed, closed });
    };
    const timer = setTimeout(() => finish(false), 10_000);
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) break;
        const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const i = l.indexOf(":");
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const length = Number(headers["content-length"] ?? "0");
        if (buf.length < end + 4 + length) break;
        parsed.push({ status: Number(lines[0].split(" ")[1]), headers, body: buf.subarray(end + 4, end + 4 + length).toString() });
        buf = buf.subarray(end + 4 + length);
      }
      if (responses !== undefined && parsed.length >= responses) finish(false);
    });
    socket.on("error", () => finish(true));
    socket.on("close", () => finish(true));
    socket.write(text);
  });
}

/** `exchange`'s response as a {@link Res}, for `assertError`. */
function asRes(r: RawResponse): Res {
  return { status: r.status, headers: new Headers(r.headers), text: r.body, json: JSON.parse(r.body) };
}

describe("message framing: Content-Length and Transfer-Encoding", () => {
  /** A POST /v1/models head with `framing` header lines, then `rest`. */
  const post = (framing: string, rest: string): string =>
    `POST /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nContent-Type: application/json\r\n${framing}\r\n${rest}`;
  /** A request smuggled after the first one's body by a proxy that reads the other length. */
  const smuggled = (): string => {
    const body = JSON.stringify(validCreateBody());
    return `POST /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.test}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };

  const cases: [string, string, string, string][] = [
    ["two different Content-Length headers", "Content-Length: 2\r\nContent-Length: 40\r\n", "{}", "headers.content-length"],
    ["two equal Content-Length headers", "Content-Length: 2\r\nContent-Length: 2\r\n", "{}", "headers.content-length"],
    ["two Transfer-Encoding headers", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", "headers.transfer-encoding"],
  ];
  for (const [name, framing, body, param] of cases) {
    test(`${name}: 400 parameter_invalid on ${param}, and the connection closed`, async () => {
      const { responses, closed } = await exchange(h.server.port, post(framing, body));
      assert.equal(responses.length, 1, `one response: ${JSON.stringify(responses.map((r) => r.status))}`);
      assertError(asRes(responses[0]), "parameter_invalid", param);
      assert.equal(responses[0].headers.connection, "close");
      assert.equal(closed, true, "the server closed the connection");
    });

    test(`${name}, with a request smuggled behind it in the same write: the smuggled request never runs`, async () => {
      const before = h.engine.calls.length;
      const { responses, closed } = await exchange(h.server.port, post(framing, body) + smuggled());
      // uWS closes the connection when it finds a request behind one still unanswered, before the
      // 400 is written; when the 400 gets out first, it is the only answer.
      assert.ok(responses.length <= 1, `at most one response: ${JSON.stringify(responses.map((r) => r.status))}`);
      if (responses.length === 1) assertError(asRes(responses[0]), "parameter_invalid", param);
      assert.equal(closed, true, "the server closed the connection");
      assert.equal(h.engine.calls.length, before, "the smuggled create never ran");
    });
  }

  test("Content-Length with Transfer-Encoding is refused (400, closed) before it reaches the application", async () => {
    // uWebSockets.js answers this one itself (a bare 400, not the JSON envelope: RFC 9112 §6.1).
    for (const framing of ["Content-Length: 7\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked\r\nContent-Length: 7\r\n"]) {
      const before = h.engine.calls.length;
      const { responses, closed } = await exchange(h.server.port, post(framing, "2\r\n{}\r\n0\r\n\r\n") + smuggled());
      assert.equal(responses.length, 1);
      assert.equal(responses[0].status, 400);
      assert.equal(closed, true);
      assert.equal(h.engine.calls.length, before);
    }
  });

  test("one Content-Length, or chunked alone, is answered and the connection stays open", async () => {
    const before = h.engine.calls.length;
    const one = await exchange(h.server.port, smuggled(), 1);
    assert.deepEqual(one.responses.map((r) => r.status), [201]);
    assert.equal(one.closed, false);
    const body = JSON.stringify(validCreateBody());
    const chunked = await exchange(h.server.port, post("Transfer-Encoding: chunked\r\n", `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`), 1);
    assert.deepEqual(chunked.responses.map((r) => r.status), [201]);
    assert.equal(chunked.closed, false);
    assert.equal(h.engine.calls.length, before + 2);
  });
});

describe("413 for a 17 MiB body, read by fetch every time", () => {
  let dir: string;
  let server: ServerProcess;
  before(async () => {
    dir = tempDir();
    server = await startServeProcess(join(dir, "store"), ["--workers", "1"]);
  });
  after(async () => {
    await server?.kill("SIGKILL");
    removeDir(dir);
  });

  const big = Buffer.alloc(17 * 1024 * 1024, 0x20);

  /** POSTs `body` to /v1/models of the child server; a network error fails the test with its code. */
  async function post(body: Uint8Array | ReadableStream<Uint8Array>, withKey: boolean): Promise<Res> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (withKey) headers.authorization = `Bearer ${server.sandboxKey}`;
    let r: Response;
    try {
      r = await fetch(`${server.url}/v1/models`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      assert.fail(`fetch failed: ${cause?.code ?? String(err)}`);
    }
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, json: JSON.parse(text) };
  }

  /** The body as a stream of 1 MiB chunks (sent chunked, no Content-Length). */
  function streamed(): ReadableStream<Uint8Array> {
    let sent = 0;
    return new ReadableStream({
      pull(c) {
        if (sent >= big.length) return c.close();
        c.enqueue(new Uint8Array(big.subarray(sent, sent + (1 << 20))));
        sent += 1 << 20;
      },
    });
  }

  test("20 sequential POSTs with Content-Length: every one 413 request_too_large with the envelope", async () => {
    for (let i = 0; i < 20; i++) assertError(await post(new Uint8Array(big), true), "request_too_large", undefined);
  });

  test("20 sequential chunked POSTs: every one 413", async () => {
    for (let i = 0; i < 20; i++) assertError(await post(streamed(), true), "request_too_large", undefined);
  });

  test("20 sequential POSTs without a key: every one 401 (any early answer waits for the upload)", async () => {
    for (let i = 0; i < 20; i++) assertError(await post(new Uint8Array(big), false), "api_key_missing", undefined);
  });
});

describe("top_p 0: only the most probable code", () => {
  test("sampleCodesJs and sampleCodes pick the argmax, ties by the lowest code, whatever the uniforms", () => {
    const cards = [4, 3, 1, 5];
    const n = 200;
    const D = cards.reduce((a, b) => a + b, 0);
    const r = mulberry32(11);
    const logits = new Float32Array(n * D);
    for (let i = 0; i < logits.length; i++) logits[i] = (r() - 0.5) * 6;
    // Row 0: ties for the maximum in every feature.
    logits.set([1, 3, 3, 0, 2, 2, 2, 7, 0, 5, 1, 5, 5], 0);
    const uniforms = Float64Array.from({ length: n * cards.length }, () => r());
    const want = new Int32Array(cards.length * n);
    for (let row = 0; row < n; row++) {
      let off = row * D;
      cards.forEach((K, f) => {
        let best = 0;
        for (let k = 1; k < K; k++) if (logits[off + k] > logits[off + best]) best = k;
        want[f * n + row] = best;
        off += K;
      });
    }
    assert.deepEqual(Array.from(want.subarray(0, 1)), [1]);
    assert.doesNotThrow(() => checkSampleArgs(logits, n, cards, uniforms, { temperature: 1, topP: 0 }));
    for (const temperature of [0.3, 1, 5]) {
      assert.deepEqual(sampleCodesJs(logits, n, cards, uniforms, { temperature, topP: 0 }), want, `js T=${temperature}`);
      assert.deepEqual(sampleCodes(logits, n, cards, uniforms, { temperature, topP: 0 }), want, `sampleCodes T=${temperature}`);
      const native = nativeAddon();
      if (native !== undefined) assert.deepEqual(native.sampleCodes(logits, n, cards, uniforms, temperature, 0), want, `native T=${temperature}`);
    }
    assert.throws(() => checkSampleArgs(logits, n, cards, uniforms, { temperature: 1, topP: -0.1 }), { name: "RangeError", message: "topP must be in [0, 1] or null, got -0.1" });
  });

  describe("over HTTP with the real engine", () => {
    let c: Contract;
    before(async () => {
      c = await startContract();
    });
    after(async () => {
      await c.stop();
    });

    test("top_p 0 is accepted (200), and the same latents give the same codes however the uniforms fall", async () => {
      const m = await readyModel(c);
      const r = mulberry32(5);
      const embedding = Array.from({ length: 40 }, () => Array.from({ length: m.config.embedding_dim }, () => (r() - 0.5) * 4));
      const path = `/v1/models/${m.id}/generate`;
      const first = await call(c.url, path, { key: c.keys.test, body: { embedding, top_p: 0 } });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.data.num_rows, 40);
      for (const temperature of [0.5, 3]) {
        const again = await call(c.url, path, { key: c.keys.test, body: { embedding, top_p: 0, temperature } });
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(again.json.data.columns, first.json.data.columns, `temperature ${temperature}`);
      }
      const drawn = await call(c.url, path, { key: c.keys.test, body: { embedding: { num_rows: 10, seed: 3 }, top_p: 0 } });
      assert.equal(drawn.status, 200, drawn.text);
      assertError(await call(c.url, path, { key: c.keys.test, body: { embedding: { num_rows: 1 }, top_p: -0.01 } }), "parameter_invalid", "body.top_p");
    });

    test("latents outside float32 are 400 through the real engine too (were 500)", async () => {
      const m = await readyModel(c);
      const embedding = zeros(2, m.config.embedding_dim);
      embedding[1][3] = 1e308;
      const r = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding } });
      assertError(r, "parameter_invalid", "body.embedding[1][3]");
    });

    test("latents within float32 but so large that the model's outputs overflow are 400 on body.embedding (were 500)", async () => {
      const m = await readyModel(c);
      const embedding = zeros(2, m.config.embedding_dim);
      embedding[1] = embedding[1].map((_, j) => (j % 2 === 0 ? 3.4e38 : -3.4e38));
      const r = await call(c.url, `/v1/models/${m.id}/generate`, { key: c.keys.test, body: { embedding } });
      assertError(r, "parameter_invalid", "body.embedding");
      assert.match(r.json.error.message, /too large for this model/);
    });
  });
});
