/**
 * Rendering JSON paths for violation messages: `value.a[2].b`, `args["a b"]`.
 */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `path` extended by an object key: `.key` when it is an identifier, else `["key"]`. */
export function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** `path` extended by an array index: `[i]`. */
export function appendIndex(path: string, index: number): string {
  return `${path}[${index}]`;
}
