/**
 * Parameter paths as in `error.param` (`body.metadata.features[2]`, `query.limit`): keys in dot
 * form when a valid identifier, else bracketed JSON (`cardinalities["age group"]`), as typia
 * writes its paths, so hand-written and generated checks read the same.
 */

const RESERVED = new Set([
  "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
  "else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
  "instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try",
  "typeof", "var", "void", "while", "with",
]);

/** `base` followed by the access of object key `key`: `.key` or `["key"]`. */
export function prop(base: string, key: string): string {
  return /^[a-zA-Z_$][a-zA-Z_$0-9]*$/.test(key) && !RESERVED.has(key)
    ? `${base}.${key}`
    : `${base}[${JSON.stringify(key)}]`;
}

/** `base` followed by array index `i`: `base[i]`. */
export function index(base: string, i: number): string {
  return `${base}[${i}]`;
}

/** Translates a typia path (`$input.config.batch_size`) to a contract path under `root`. */
export function fromTypiaPath(path: string, root: "body" | "query"): string {
  return path.startsWith("$input") ? root + path.slice("$input".length) : `${root}.${path}`;
}
