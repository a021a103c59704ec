/**
 * The commands: `serve`, `mcp`, `run`, `typings`, `tools`, and the client commands
 * `approvals`, `approve`, `deny` (services/cli-client.ts). Every option documents
 * its default and environment variable; flags win over the environment,
 * which wins over `ptc.config.json`.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { leaveProcess } from '../sandbox/leave-process.ts';
import type { JsonValue } from '../src/json.ts';
import { addApprovalCommands } from './cli-client.ts';
import { configFileSchema } from './config-schema.ts';
import { assertWorkspaceApart, CONFIG_FILE_NAME, ConfigError, DEFAULTS, ENV, loadConfig, type ConfigFlags, type PtcConfig } from './config.ts';

// Loaded on use: `--help` and config errors should not wait for Fastify, TypeScript and the sandbox.
const createCore: typeof import('./core.ts').createCore = async (...args) => (await import('./core.ts')).createCore(...args);
const createServer: typeof import('./server.ts').createServer = async (...args) => (await import('./server.ts')).createServer(...args);
const serveMcpStdio: typeof import('./mcp-stdio.ts').serveMcpStdio = async (...args) => (await import('./mcp-stdio.ts')).serveMcpStdio(...args);

function typingsBudgetOption(): Option {
  return new Option(
    '--typings-budget <chars>',
    `MCP: run_code's description carries the whole typings up to this many characters, else search_tools is offered (default: ${DEFAULTS.typingsBudget}; env: ${ENV.typingsBudget})`,
  );
}

/** Signals closer together than this are one (see `serve`), ms. */
const DUPLICATE_SIGNAL_MS = 1_000;

/** The config file's enums: the flags accept exactly what the file does. */
const choices = configFileSchema.shape;

/** The options every command that builds the tools takes. */
function configOptions(command: Command): Command {
  return command
    .addOption(new Option('-c, --config <file>', `config file (default: ./${CONFIG_FILE_NAME} if present; env: ${ENV.config})`))
    .addOption(new Option('-w, --workspace <dir>', `root of the built-in file tools, created if missing (default: ${DEFAULTS.workspace}; env: ${ENV.workspace})`))
    .addOption(
      new Option('--runtime <kind>', `sandbox runtime (default: ${DEFAULTS.runtime}; env: ${ENV.runtime})`).choices(choices.runtime.unwrap().options),
    )
    .addOption(
      new Option('--mode <mode>', `which tools are directly callable: code = run_code only (default: ${DEFAULTS.mode}; env: ${ENV.mode})`).choices(choices.mode.unwrap().options),
    )
    .addOption(
      new Option('--log-level <level>', `pino log level, logs go to stderr (default: ${DEFAULTS.logLevel}; env: ${ENV.logLevel})`).choices(choices.logLevel.unwrap().options),
    )
    .addOption(
      new Option(
        '--tools <modules>',
        `comma-separated tool modules (paths or package specifiers) whose defineTool exports are registered; replaces the config's tools (default: none; env: ${ENV.tools})`,
      ),
    );
}

/** The options of the commands that serve, `ptc serve` and `ptc mcp`: where they keep state (the others keep it in memory), and the MCP face's typings budget. */
function serverOptions(command: Command): Command {
  return command
    .addOption(new Option('-d, --data <dir>', `session logs, paused runs and spill files (default: ${DEFAULTS.dataDir}; env: ${ENV.data})`))
    .addOption(
      new Option(
        '--database-url <url>',
        `PostgreSQL for session events, paused runs and heartbeats, shared by replicas (default: none, files under --data; env: ${ENV.databaseUrl})`,
      ),
    )
    .addOption(typingsBudgetOption());
}

function load(flags: ConfigFlags): PtcConfig {
  return loadConfig({ flags });
}

export function buildProgram(): Command {
  const program = new Command('ptc')
    .description('Code Mode executor: run model-written programs against canonical, validated tools.')
    .showHelpAfterError()
    .exitOverride((error) => {
      throw error;
    });

  serverOptions(configOptions(program.command('serve').description('Start the HTTP service (POST /v1/run, GET /v1/tools, /docs/json).')))
    .addOption(new Option('-p, --port <port>', `TCP port, 0 picks a free one (default: ${DEFAULTS.port}; env: ${ENV.port})`))
    .addOption(new Option('-H, --host <host>', `interface to bind; any non-loopback host needs a token (default: ${DEFAULTS.host}; env: ${ENV.host})`))
    .addOption(new Option('-t, --token <token>', `bearer token required on every route but /healthz and /readyz (default: none; env: ${ENV.token})`))
    .addOption(
      new Option(
        '--allowed-hosts <names>',
        `comma-separated host names accepted in Host and Origin besides the loopback names (default: none; env: ${ENV.allowedHosts})`,
      ),
    )
    .action(async (flags: ConfigFlags) => serve(load(flags)));

  serverOptions(configOptions(program.command('mcp').description('Serve Code Mode as an MCP server on stdio (run_code, search_tools, typings resources); logs go to stderr.')))
    .action(async (flags: ConfigFlags) => serveMcpStdio(load(flags)));

  configOptions(program.command('run').description('Run one program (a file, or - for stdin) without a server; prints its logs and result.'))
    .argument('<file>', 'the program (TypeScript or JavaScript), or - to read stdin')
    .addOption(new Option('--timeout <ms>', 'wall-time limit of the run, ms (default: the configured limits.timeoutMs, 30000)'))
    .addOption(new Option('--json', 'print the whole result as JSON instead of logs and result (default: off)'))
    .action(async (file: string, flags: ConfigFlags & { timeout?: string; json?: boolean }) => {
      process.exitCode = await runProgram(load(flags), file, flags);
    });

  configOptions(program.command('typings').description('Print the TypeScript declarations the model is shown.')).action(
    async (flags: ConfigFlags) => {
      const core = await createCore(load(flags), { sandbox: false });
      try {
        process.stdout.write(await core.codeMode.typings());
      } finally {
        await core.close();
      }
    },
  );

  configOptions(program.command('tools').description('List the registered tools.'))
    .addOption(new Option('--json', 'print the model-visible schemas as JSON (default: off)'))
    .action(async (flags: ConfigFlags & { json?: boolean }) => {
      const core = await createCore(load(flags), { sandbox: false });
      try {
        const tools = core.registry.schemas();
        if (flags.json === true) process.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
        else for (const tool of tools) process.stdout.write(`${tool.name}\t${tool.description.split('\n', 1)[0]}\n`);
        // An upstream that did not start leaves its tools out: say which, and fail.
        for (const failed of core.sources.failures()) {
          process.stderr.write(`ptc: ${failed.kind} source "${failed.name}" is ${failed.state}${failed.error === undefined ? '' : `: ${failed.error}`}\n`);
          process.exitCode = 1;
        }
      } finally {
        await core.close();
      }
    });
  addApprovalCommands(program);
  return program;
}

async function serve(config: PtcConfig): Promise<void> {
  const server = await createServer(config);
  let address: string;
  try {
    address = await server.listen();
  } catch (error) {
    await server.close();
    throw error;
  }
  process.stdout.write(`ptc listening on ${address}\n`);
  let firstSignalAt: number | undefined;
  const stop = (signal: NodeJS.Signals) => {
    // One Ctrl-C can arrive twice: from the terminal to the whole process
    // group, and forwarded by `npm start`. Only a signal a second or more
    // after the first means "exit now".
    if (firstSignalAt !== undefined) {
      if (performance.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      server.app.log.warn({ signal }, 'second signal: exiting without waiting for runs');
      process.exit(1);
    }
    firstSignalAt = performance.now();
    server.app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing in-flight runs');
    // A dependency that stopped answering (a paused database, say) must not keep a stopped replica
    // alive until its orchestrator kills it.
    setTimeout(() => {
      server.app.log.error({ step: server.closingStep() }, `shutdown did not finish within shutdownGraceMs + shutdownMarginMs (${config.shutdownMarginMs} ms): exiting`);
      process.exit(1);
    }, config.shutdownGraceMs + config.shutdownMarginMs).unref();
    // Not process.exit: in-process isolates may still be unwinding (sandbox/leave-process.ts).
    server.close().then(
      () => leaveProcess(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        leaveProcess(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function runProgram(config: PtcConfig, file: string, flags: { timeout?: string; json?: boolean }): Promise<number> {
  const code = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  const args: { [key: string]: JsonValue } = { code, description: `ptc run ${file === '-' ? 'stdin' : file}` };
  if (flags.timeout !== undefined) {
    const timeoutMs = Number(flags.timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new ConfigError(`--timeout ${flags.timeout} is not a number of milliseconds: use for example 5000`);
    args.timeoutMs = timeoutMs;
  }
  // It keeps nothing, but the program it runs may write the workspace.
  assertWorkspaceApart(config, false);
  const core = await createCore(config);
  try {
    const result = await core.registry.dispatch({ name: 'run_code', arguments: args, sessionId: 'cli' });
    const value = result.isError ? undefined : (result.value as { logs?: string[]; result?: JsonValue; paused?: { pending: { seq: number; toolName: string }[] } });
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else if (value === undefined) {
      for (const block of result.content) if (block.type === 'text') process.stderr.write(`${block.text}\n`);
    } else {
      for (const line of value.logs ?? []) process.stdout.write(`${line}\n`);
      if (value.result !== undefined) {
        process.stdout.write(`${typeof value.result === 'string' ? value.result : JSON.stringify(value.result, null, 2)}\n`);
      }
    }
    if (value?.paused !== undefined) {
      // This process keeps paused runs in memory only: the run cannot go on once it exits.
      const calls = value.paused.pending.map((call) => `tools.${call.toolName} (call #${call.seq})`).join(', ');
      process.stderr.write(
        `ptc run: the run paused: ${calls} needs a person's approval (approvals in the config), and ptc run cannot wait for one. ` +
          'Run the program on a service (ptc serve, then ptc approve or ptc deny), or leave the tool out of approvals.\n',
      );
      return 1;
    }
    return result.isError ? 1 : 0;
  } finally {
    await core.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Node flags type stripping as experimental on every run; a CLI's stderr is for real problems. */
function quietExperimentalWarnings(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name !== 'ExperimentalWarning') process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
}

export async function main(argv: string[]): Promise<void> {
  quietExperimentalWarnings();
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    const e = error as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      process.exitCode = e.exitCode ?? 1;
      return;
    }
    process.stderr.write(`ptc: ${error instanceof ConfigError ? e.message : (e.message ?? String(error))}\n`);
    process.exitCode = 2;
  }
}
