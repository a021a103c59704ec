/**
 * `npm run bench` (node --no-node-snapshot bench/index.ts [--only <name>] [section flags]):
 * runs every section below in order, or just the one named by `--only`.
 * Other flags reach the sections (for example `--only capacity --repeat 5`).
 * Sections print figures; none asserts times.
 *
 * Each section runs in a fresh process of its own, so no section's figures
 * carry another's heap, JIT state or thread pools (code-mode's RSS line would
 * otherwise count the typings section's garbage being returned). A section
 * may ask for extra Node flags (`nodeFlags`): code-mode runs with the
 * `--max-semi-space-size=16` that `ptc` runs with (services/cli.ts). Every
 * section gets the V8 optimization filters `ptc` opts into.
 *
 * Adding a section: write `bench/<name>.bench.ts` exporting
 * `export const section: BenchSection = { name, description, run }` (see
 * bench/section.ts for the type and timing helpers), import it here under
 * its own alias and append it to SECTIONS. Keep `run` self-contained: it
 * builds what it needs and releases it (close pools, remove temp dirs).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { GUEST_FREEZE_FLAGS, hasOwnOptimizationFilter } from '../sandbox/guest-tiering.ts';
import { ISOLATE_HOST_FLAGS } from '../sandbox/host-flags.ts';
import { section as capacity } from './capacity.bench.ts';
import { section as codeMode } from './code-mode.bench.ts';
import { section as dispatch } from './dispatch.bench.ts';
import { section as durable } from './durable.bench.ts';
import { section as json } from './json.bench.ts';
import { section as mcp } from './mcp.bench.ts';
import { section as openapi } from './openapi.bench.ts';
import { section as peer } from './peer.bench.ts';
import { section as processPool } from './process-pool.bench.ts';
import { section as typings } from './typings.bench.ts';
import type { BenchSection } from './section.ts';

const SECTIONS: BenchSection[] = [json, dispatch, typings, codeMode, durable, processPool, capacity, mcp, openapi, peer];

function selected(argv: readonly string[]): BenchSection[] {
  const at = argv.indexOf('--only');
  if (at < 0) return SECTIONS;
  const name = argv[at + 1];
  const section = SECTIONS.find((s) => s.name === name);
  if (section === undefined) {
    console.error(`bench: no section named ${JSON.stringify(name ?? '')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  return [section];
}

/** The arguments meant for the sections: all but `--only <name>`. */
function sectionFlags(argv: readonly string[]): string[] {
  const at = argv.indexOf('--only');
  return at < 0 ? [...argv] : [...argv.slice(0, at), ...argv.slice(at + 2)];
}

/** Runs `section` here, or in a fresh process with its flags when this one lacks them or runs them all. */
async function runSection(section: BenchSection, here: boolean): Promise<void> {
  // Every section runs with the flags `ptc` starts with: the host flags (sandbox/host-flags.ts) and
  // the optimization filters it opts into (sandbox/guest-tiering.ts).
  const wanted = [...ISOLATE_HOST_FLAGS, ...(section.nodeFlags ?? []), ...(hasOwnOptimizationFilter(process.execArgv) ? [] : GUEST_FREEZE_FLAGS)];
  const flags = [...process.execArgv, ...wanted.filter((flag) => !process.execArgv.includes(flag))];
  if (here && flags.length === process.execArgv.length) {
    console.log(`\n## ${section.name}: ${section.description}`);
    await section.run();
    return;
  }
  const child = spawn(process.execPath, [...flags, fileURLToPath(import.meta.url), '--only', section.name, ...sectionFlags(process.argv.slice(2))], {
    stdio: 'inherit',
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    console.error(`bench: section ${section.name} failed (${signal ?? `exit code ${code}`})`);
    process.exitCode = 1;
  }
}

const argv = process.argv.slice(2);
const only = argv.includes('--only');
for (const section of selected(argv)) await runSection(section, only);
