import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Drift test for the shape of the code: four wings, arrows one way, and three
// thin layers around them.
//   services/ → src/, sandbox/, typings/, compose/;  sandbox/ → src/ (types);  typings/ → src/ (types).
//   compose/ (the composition root) → src/, typings/, and sandbox/ only by dynamic import()
//     (so isolated-vm loads when a sandbox is first made, never on import).
//   adapters/ (agent-framework adapters) → src/ only.
//   entries/ (the package entry points) → anything; nothing imports entries/.
const root = new URL('..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(dir, file));
}

interface Import {
  specifier: string;
  /** `import type …` / `export type …`: erased, loads nothing. */
  typeOnly: boolean;
  /** `import('…')`: loads only when reached. */
  dynamic: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(import|export)(\s+type\b)?[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) =>
    match[3] !== undefined
      ? { specifier: match[3], typeOnly: match[2] !== undefined, dynamic: false }
      : { specifier: match[4], typeOnly: false, dynamic: true },
  );
}

function wingOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(root, join(root, file, '..', specifier));
  return target.split('/')[0];
}

const forbidden: Record<string, { wings: string[]; packages: RegExp }> = {
  src: { wings: ['sandbox', 'typings', 'services', 'compose', 'adapters', 'entries'], packages: /^(isolated-vm|fastify|@fastify\/|prom-client|ai)$|^(@fastify\/)/ },
  sandbox: { wings: ['services', 'typings', 'compose', 'adapters', 'entries'], packages: /^(fastify|@fastify\/)/ },
  typings: { wings: ['services', 'sandbox', 'compose', 'adapters', 'entries'], packages: /^(isolated-vm|fastify|@fastify\/)/ },
  services: { wings: ['adapters', 'entries'], packages: /^ai$/ },
  compose: { wings: ['services', 'adapters', 'entries'], packages: /^(isolated-vm|fastify|@fastify\/)/ },
  adapters: { wings: ['sandbox', 'typings', 'services', 'compose', 'entries'], packages: /^(isolated-vm|fastify|@fastify\/)/ },
};

describe('architecture', () => {
  for (const [wing, rule] of Object.entries(forbidden)) {
    it(`${wing}/ imports only what its arrows allow`, () => {
      const offences = sourceFiles(wing).flatMap((file) =>
        importsOf(file)
          .filter(({ specifier }) => rule.packages.test(specifier) || rule.wings.includes(wingOf(file, specifier) ?? ''))
          .map(({ specifier }) => `${file} imports ${specifier}`),
      );
      expect(offences).toEqual([]);
    });
  }

  it('compose/ loads the sandbox only by dynamic import (type imports are erased)', () => {
    const offences = sourceFiles('compose').flatMap((file) =>
      importsOf(file)
        .filter((i) => wingOf(file, i.specifier) === 'sandbox' && !i.dynamic && !i.typeOnly)
        .map(({ specifier }) => `${file} statically imports ${specifier}`),
    );
    expect(offences).toEqual([]);
  });

  it('entries/ only re-export, by name', () => {
    for (const file of sourceFiles('entries')) {
      const text = readFileSync(join(root, file), 'utf8');
      expect(text, file).not.toMatch(/export \*/);
      const statements = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').trim().split(/;\s*/).filter((s) => s !== '');
      expect(statements.filter((s) => !/^export (type )?\{[\s\S]*\} from '[^']+'$/.test(s)), file).toEqual([]);
    }
  });
});
