/**
 * `npm run typings`: regenerates typings/builtin.d.ts, the typings of the
 * built-in tool set (read, write, edit, glob, grep) exactly as a registry
 * shows them. run_code is not among them: programs cannot call it.
 * test/typings/builtin.test.ts fails when the committed file is stale.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolRegistry } from '../src/registry.ts';
import { createBuiltinTools } from '../src/tools/index.ts';
import { generateTypings } from './generate.ts';

export const BUILTIN_TYPINGS_FILE = new URL('./builtin.d.ts', import.meta.url);

const NOTE = '// Regenerate: npm run typings';

/** The content builtin.d.ts should have. */
export async function builtinTypings(): Promise<string> {
  // The tools want an existing workspace; none of them runs here.
  const workspace = await mkdtemp(join(tmpdir(), 'ptc-builtin-typings-'));
  try {
    const registry = createToolRegistry();
    for (const tool of createBuiltinTools({ workspace })) registry.register(tool);
    return `${NOTE}\n${await generateTypings(registry.schemas())}`;
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await writeFile(BUILTIN_TYPINGS_FILE, await builtinTypings());
  console.log(`wrote ${BUILTIN_TYPINGS_FILE.pathname}`);
}
