/**
 * One temporary folder for a whole `vitest run`, removed when it ends: every test's temp dirs,
 * and those of the servers, CLIs and sandbox children the tests start, go under it, since they
 * all ask `os.tmpdir()`, which reads TMPDIR. A test that forgets its folder, or a process killed
 * before it could clean up, leaves nothing behind in the machine's /tmp.
 *
 * Vitest runs this before it starts the workers, which inherit the variable.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(path.join(tmpdir(), 'ptc-test-run-'));
  // World-writable and sticky, as /tmp is: the PostgreSQL tests run their servers as the
  // postgres user, in folders made under here.
  chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
