import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Drift test for the shape of the code: four wings, arrows one way.
// services/ → src/, sandbox/, typings/;  sandbox/ → src/ (types);  typings/ → src/ (types).
// src/index.ts is the package facade, the one file of src/ allowed to compose the wings.
const root = new URL('..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(dir, file));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (match) => match[1] ?? match[2],
  );
}

function wingOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(root, join(root, file, '..', specifier));
  return target.split('/')[0];
}

const forbidden: Record<string, { wings: string[]; packages: RegExp }> = {
  src: { wings: ['sandbox', 'typings', 'services'], packages: /^(isolated-vm|fastify|@fastify\/)/ },
  sandbox: { wings: ['services', 'typings'], packages: /^(fastify|@fastify\/)/ },
  typings: { wings: ['services', 'sandbox'], packages: /^(isolated-vm|fastify|@fastify\/)/ },
};

describe('architecture', () => {
  for (const [wing, rule] of Object.entries(forbidden)) {
    it(`${wing}/ imports only what its arrows allow`, () => {
      const offences = sourceFiles(wing)
        .filter((file) => file !== 'src/index.ts')
        .flatMap((file) =>
          importsOf(file)
            .filter((spec) => rule.packages.test(spec) || rule.wings.includes(wingOf(file, spec) ?? ''))
            .map((spec) => `${file} imports ${spec}`),
        );
      expect(offences).toEqual([]);
    });
  }

  it('the public entry uses named exports only', () => {
    const text = readFileSync(join(root, 'src/index.ts'), 'utf8');
    expect(text).not.toMatch(/export \*/);
  });
});
