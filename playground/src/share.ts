/**
 * Share links: `#code=<base64url of the UTF-8 program>&timeout=<ms>`. The
 * fragment never reaches the server; the program is sent only on Run.
 */
export interface Shared {
  code?: string;
  timeout?: string;
}

export function encodeBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeBase64Url(text: string): string {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** Reads the fragment; a malformed `code` is ignored (the editor keeps its text). */
export function readFragment(hash: string): Shared {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const shared: Shared = {};
  const code = params.get('code');
  if (code !== null) {
    try {
      shared.code = decodeBase64Url(code);
    } catch {
      // Not base64url UTF-8: nothing to restore.
    }
  }
  const timeout = params.get('timeout');
  if (timeout !== null && /^\d{1,6}$/.test(timeout)) shared.timeout = timeout;
  return shared;
}

export function shareFragment(shared: Shared): string {
  const params: string[] = [];
  if (shared.code !== undefined) params.push(`code=${encodeBase64Url(shared.code)}`);
  if (shared.timeout !== undefined && shared.timeout !== '') params.push(`timeout=${encodeURIComponent(shared.timeout)}`);
  return `#${params.join('&')}`;
}
