/**
 * Whether this process can host the sandbox at all: a Node release
 * isolated-vm supports, and a native build of isolated-vm for this platform.
 * Checked when Code Mode is created and when `ptc` starts, so an unsupported
 * host fails at once with the fix, instead of every program failing later with
 * a message that only a model reads. It finds the native build without
 * loading it, so isolated-vm still loads on the first run.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/** isolated-vm 7 builds against Node 24's V8 (its `engines`), and so does this package. */
export const MINIMUM_NODE_MAJOR = 24;

/** What the check looks at; the host's own unless a test passes another. */
export interface RuntimeProbe {
  /** `process.versions.node`. */
  nodeVersion: string;
  /** The path of isolated-vm's native build for this platform and Node; throws when there is none. */
  nativeBuild(): string;
}

/** A host that cannot run the sandbox; `code` is `UNSUPPORTED_RUNTIME`, the message one line naming the fix. */
export class UnsupportedRuntimeError extends Error {
  override name = 'UnsupportedRuntimeError';
  readonly code = 'UNSUPPORTED_RUNTIME';
}

const hostProbe: RuntimeProbe = {
  get nodeVersion() {
    return process.versions.node;
  },
  nativeBuild() {
    const require = createRequire(import.meta.url);
    const packageDir = dirname(require.resolve('isolated-vm/package.json'));
    // isolated-vm loads its addon through node-gyp-build; `path` finds the same file without loading it.
    const nodeGypBuild = createRequire(`${packageDir}/`)('node-gyp-build') as { path(dir: string): string };
    return nodeGypBuild.path(packageDir);
  },
};

/** Why Node is too old, or undefined when it is recent enough. */
export function unsupportedNode(nodeVersion: string = process.versions.node): string | undefined {
  const major = Number.parseInt(nodeVersion, 10);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return `ptc-executor needs Node.js ${MINIMUM_NODE_MAJOR} or newer, and this is Node.js ${nodeVersion}: install Node.js ${MINIMUM_NODE_MAJOR} (for example \`nvm install ${MINIMUM_NODE_MAJOR}\`) and run it again`;
}

/** Throws {@link UnsupportedRuntimeError} when this process cannot run the sandbox. */
export function assertSandboxSupported(probe: RuntimeProbe = hostProbe): void {
  const oldNode = unsupportedNode(probe.nodeVersion);
  if (oldNode !== undefined) throw new UnsupportedRuntimeError(oldNode);
  try {
    probe.nativeBuild();
  } catch {
    throw new UnsupportedRuntimeError(
      `isolated-vm has no native build for ${process.platform}-${process.arch} on Node.js ${probe.nodeVersion}: ` +
        'run `npm rebuild isolated-vm` (it compiles one; needs python3, make and a C++ compiler), or use a platform it ships builds for (Linux x64/arm64, macOS arm64, Windows x64)',
    );
  }
}
