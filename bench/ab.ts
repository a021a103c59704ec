/**
 * `npm run bench:ab -- <commit> [--workload big|wrapped|pages|seq|par|io] [--pairs N]`: this working tree
 * against another commit, in one process. On a shared machine two runs of the same code in two
 * processes can differ by a third; runs alternated in one process share its noise. The other
 * commit is checked out into a temporary git worktree (removed at the end), both trees' runtimes
 * are built side by side, and each pair times one run of each, in alternating order, after both
 * runtimes are ready (warm pools refilled, recycles done). Prints both medians, their ratio and
 * how many pairs the working tree won; asserts nothing.
 *
 * The workloads are the peer bench's: a tool returning 1 MB (`big`), 50 pages reduced in the
 * sandbox (`pages`), 100 sequential calls (`seq`), and 100 sequential calls of a tool answering
 * after the host's turn, as one waiting on I/O does (`io`). Both trees run with this process's V8 flags
 * (one process has one set: sandbox/guest-tiering.ts sets its filters for both).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { keepGuestFreezeUnoptimized } from '../sandbox/guest-tiering.ts';
import { median } from './section.ts';
import { BIG, dataTools, echoTool, ioTool, SUM_OF_PAGES } from './workloads.ts';

const USAGE = `usage: npm run bench:ab -- <commit> [--workload big|wrapped|pages|seq|par|io] [--pairs N]

Times this working tree (B) against <commit> (A), runs alternated in one process.
  <commit>           any git revision: a hash, a branch, HEAD~3
  --workload <name>  big: a tool returning 1 MB of 10,000 rows (default)
                     wrapped: the same rows as a member of an object ({ total, items })
                     pages: 50 pages of 100 rows in Promise.all, reduced in the sandbox
                     seq: 100 sequential calls of a tool echoing a number
                     par: 1,000 calls of the same tool in one Promise.all
                     io: 100 sequential calls of a tool that answers after the host's turn, as I/O does
  --pairs <n>        pairs of runs, one of each tree (default 60)
  -h, --help         this text`;

const WORKLOADS = {
  big: { program: 'const rows = await tools.big({}); return rows.length;', expect: BIG.length },
  wrapped: { program: 'const page = await tools.wrapped({}); return page.items.length;', expect: BIG.length },
  pages: {
    program:
      'const pages = await Promise.all(Array.from({ length: 50 }, (_, p) => tools.page({ page: p })));\n' +
      'let sum = 0; for (const rows of pages) for (const row of rows) if (row.active) sum += row.score; return sum;',
    expect: SUM_OF_PAGES,
  },
  seq: { program: 'let s = 0; for (let i = 0; i < 100; i++) s += await tools.echo({ i }); return s;', expect: 4950 },
  io: { program: 'let s = 0; for (let i = 0; i < 100; i++) s += await tools.io({ i }); return s;', expect: 4950 },
  par: { program: 'const xs = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo({ i }))); return xs.reduce((s, x) => s + x, 0);', expect: 499500 },
} as const;
type WorkloadName = keyof typeof WORKLOADS;

interface Tree {
  /** Runs one program in the tree's own runtime; resolves to its result. */
  run(code: string): Promise<unknown>;
  ready(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The tree at `root`, built from its own modules: its registry with the bench's three tools,
 * Code Mode and the in-process runtime as the peer bench configures ours.
 */
async function loadTree(root: string): Promise<Tree> {
  const { createInProcessRuntime } = (await import(join(root, 'sandbox/in-process-runtime.ts'))) as typeof import('../sandbox/in-process-runtime.ts');
  const { createToolRegistry } = (await import(join(root, 'src/registry.ts'))) as typeof import('../src/registry.ts');
  const { defineTool } = (await import(join(root, 'src/define-tool.ts'))) as typeof import('../src/define-tool.ts');
  const { createCodeModeCore } = (await import(join(root, 'src/code-mode/code-mode.ts'))) as typeof import('../src/code-mode/code-mode.ts');
  const runtime = createInProcessRuntime({ warmPoolSize: 2 });
  const registry = createToolRegistry();
  for (const tool of dataTools(defineTool)) registry.register(tool);
  registry.register(echoTool(defineTool));
  registry.register(ioTool(defineTool));
  const codeMode = createCodeModeCore({ registry, runtime, limits: { maxCalls: 5_000 } });
  return {
    run: async (code) => {
      const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'bench:ab' }, sessionId: 'ab' });
      if (result.isError) throw new Error(`bench:ab: a run failed in ${root}: ${result.error.message}`);
      return (result.value as { result?: unknown }).result;
    },
    ready: () => runtime.ready(),
    close: async () => {
      await codeMode.close();
      await runtime.close();
    },
  };
}

function parse(argv: string[]): { commit: string; workload: WorkloadName; pairs: number } | undefined {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { workload: { type: 'string', default: 'big' }, pairs: { type: 'string', default: '60' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) return undefined;
  const fail = (message: string): never => {
    console.error(`bench:ab: ${message}\n\n${USAGE}`);
    process.exit(2);
  };
  if (positionals.length !== 1) fail('name one commit to compare with');
  if (!(values.workload in WORKLOADS)) fail(`no workload named ${JSON.stringify(values.workload)}`);
  const pairs = Number(values.pairs);
  if (!Number.isInteger(pairs) || pairs < 1) fail('--pairs takes a positive whole number');
  return { commit: positionals[0], workload: values.workload as WorkloadName, pairs };
}

async function main(): Promise<void> {
  keepGuestFreezeUnoptimized();
  const options = parse(process.argv.slice(2));
  if (options === undefined) {
    console.log(USAGE);
    return;
  }
  const here = fileURLToPath(new URL('..', import.meta.url));
  const git = (...args: string[]): string => execFileSync('git', ['-C', here, ...args], { encoding: 'utf8' }).trim();
  let commit: string;
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${options.commit}^{commit}`);
  } catch {
    console.error(`bench:ab: ${JSON.stringify(options.commit)} names no commit of this repository (try a hash, a branch or HEAD~1)`);
    process.exit(2);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'ptc-bench-ab-'));
  const other = join(scratch, 'tree');
  git('worktree', 'add', '--detach', '--quiet', other, commit);
  const trees: Tree[] = [];
  try {
    // The commit's tree runs on this tree's packages (a bench compares code, not dependencies).
    symlinkSync(join(here, 'node_modules'), join(other, 'node_modules'));
    trees.push(await loadTree(other), await loadTree(here));
    const { program, expect } = WORKLOADS[options.workload];
    let seq = 0;
    // Every program is new (numbered), as a model's would be.
    const once = async (tree: Tree): Promise<number> => {
      await tree.ready();
      const start = performance.now();
      const result = await tree.run(`/* run ${++seq} */ ${program}`);
      const ms = performance.now() - start;
      if (result !== expect) throw new Error(`bench:ab: a run returned ${JSON.stringify(result)}, expected ${JSON.stringify(expect)}`);
      return ms;
    };
    for (let i = 0; i < 10; i++) for (const tree of trees) await once(tree);
    const samples: [number[], number[]] = [[], []];
    let wins = 0;
    for (let pair = 0; pair < options.pairs; pair++) {
      // Each tree goes first in every other pair: the first run after a pause is the slower one.
      const first = pair % 2;
      const times = [0, 0];
      times[first] = await once(trees[first]);
      times[1 - first] = await once(trees[1 - first]);
      samples[0].push(times[0]);
      samples[1].push(times[1]);
      if (times[1] < times[0]) wins++;
    }
    const a = median(samples[0]);
    const b = median(samples[1]);
    console.log(
      `bench:ab ${options.workload}: A (${commit.slice(0, 7)}) ${a.toFixed(2)} ms, B (working tree) ${b.toFixed(2)} ms median per run; ` +
        `B/A ${(b / a).toFixed(3)}; B faster in ${wins} of ${options.pairs} pairs`,
    );
  } finally {
    for (const tree of trees) await tree.close();
    git('worktree', 'remove', '--force', other);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
