/**
 * `npm run bench` (node --no-node-snapshot --max-semi-space-size=16
 * bench/index.ts [--only <name>]): runs every section below in order, or just
 * the one named by `--only`. Sections print figures; none asserts times.
 * The flags are the ones `ptc serve` runs with (services/cli.ts).
 *
 * Adding a section: write `bench/<name>.bench.ts` exporting
 * `export const section: BenchSection = { name, description, run }` (see
 * bench/section.ts for the type and timing helpers), import it here under
 * its own alias and append it to SECTIONS. Keep `run` self-contained: it
 * builds what it needs and releases it (close pools, remove temp dirs).
 */
import { section as codeMode } from './code-mode.bench.ts';
import { section as dispatch } from './dispatch.bench.ts';
import { section as json } from './json.bench.ts';
import { section as processPool } from './process-pool.bench.ts';
import { section as typings } from './typings.bench.ts';
import type { BenchSection } from './section.ts';

const SECTIONS: BenchSection[] = [json, dispatch, typings, codeMode, processPool];

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

for (const section of selected(process.argv.slice(2))) {
  console.log(`\n## ${section.name}: ${section.description}`);
  await section.run();
}
