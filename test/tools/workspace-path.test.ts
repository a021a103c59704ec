import { access, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../src/tools/index.ts';
import { openWorkspace } from '../../src/tools/workspace-path.ts';
import { createHarness, makeTempDir, type Harness } from './helpers.ts';

let h: Harness;
let outside: string;
beforeEach(async () => {
  h = await createHarness();
  outside = await makeTempDir('ptc-outside-');
  await writeFile(path.join(outside, 'secret.txt'), 'SECRET\n');
  await h.file('inside.txt', 'hello\n');
});
afterEach(async () => {
  await h.dispose();
  await rm(outside, { recursive: true, force: true });
});

const dotdot = (input: string) =>
  `"${input}" leaves the workspace through "..": pass a path inside the workspace, relative to its root`;
const absolute = (input: string) => `"${input}" is an absolute path: pass a path relative to the workspace root, such as "src/index.ts"`;
const viaLink = (input: string) =>
  `"${input}" goes through a symbolic link that leads outside the workspace: only links that stay inside the workspace can be followed`;

describe('paths stay inside the workspace', () => {
  it('refuses ".." escapes in every tool', async () => {
    expect(await h.failure('read', { file_path: '../x' })).toBe(dotdot('../x'));
    expect(await h.failure('read', { file_path: 'a/../../x' })).toBe(dotdot('a/../../x'));
    expect(await h.failure('write', { file_path: '../x', content: 'x' })).toBe(dotdot('../x'));
    expect(await h.failure('edit', { file_path: '../x', old_string: 'a', new_string: 'b' })).toBe(dotdot('../x'));
    expect(await h.failure('glob', { pattern: '*', path: '..' })).toBe(dotdot('..'));
    expect(await h.failure('glob', { pattern: '../*' })).toBe(dotdot('..'));
    expect(await h.failure('grep', { pattern: 'x', path: '../..' })).toBe(dotdot('../..'));
  });

  it('allows ".." that stays inside', async () => {
    expect(await h.value('read', { file_path: 'sub/../inside.txt' })).toMatchObject({ path: 'inside.txt', totalLines: 1 });
  });

  it('refuses a ".." that climbs above the root even when it comes back (the root name is not confirmable)', async () => {
    const name = path.basename(h.root);
    expect(await h.failure('read', { file_path: `../${name}/inside.txt` })).toBe(dotdot(`../${name}/inside.txt`));
    expect(await h.failure('read', { file_path: `sub/../../${name}/inside.txt` })).toBe(dotdot(`sub/../../${name}/inside.txt`));
  });

  it('answers every absolute path alike, inside the workspace or not, existing or not (no oracle for the host location)', async () => {
    const probes = [path.join(h.root, 'inside.txt'), path.join(h.root, 'missing.txt'), h.root, path.join(outside, 'secret.txt'), '/nonexistent/x'];
    for (const probe of probes) {
      for (const [name, args] of [
        ['read', { file_path: probe }],
        ['write', { file_path: probe, content: 'x' }],
        ['edit', { file_path: probe, old_string: 'a', new_string: 'b' }],
        ['grep', { pattern: 'x', path: probe }],
        ['glob', { pattern: '*', path: probe }],
      ] as const) {
        const result = await h.call(name, args);
        expect(result.isError && result.error.message, `${name} ${probe}`).toBe(absolute(probe));
      }
    }
    expect(await readFile(path.join(h.root, 'inside.txt'), 'utf8')).toBe('hello\n');
  });

  it('refuses absolute paths outside', async () => {
    expect(await h.failure('read', { file_path: '/etc/passwd' })).toBe(absolute('/etc/passwd'));
    const target = path.join(outside, 'secret.txt');
    expect(await h.failure('write', { file_path: target, content: 'pwned' })).toBe(absolute(target));
    expect(await h.failure('grep', { pattern: 'SECRET', path: outside })).toBe(absolute(outside));
    expect(await readFile(target, 'utf8')).toBe('SECRET\n');
  });

  it('refuses a symlinked file pointing outside, for read, write and edit', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(h.root, 'leak.txt'));
    expect(await h.failure('read', { file_path: 'leak.txt' })).toBe(viaLink('leak.txt'));
    expect(await h.failure('write', { file_path: 'leak.txt', content: 'pwned' })).toBe(viaLink('leak.txt'));
    expect(await h.failure('edit', { file_path: 'leak.txt', old_string: 'SECRET', new_string: 'x' })).toBe(viaLink('leak.txt'));
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('SECRET\n');
  });

  it('refuses a symlinked directory pointing outside, also for new files below it', async () => {
    await symlink(outside, path.join(h.root, 'out'));
    expect(await h.failure('read', { file_path: 'out/secret.txt' })).toBe(viaLink('out/secret.txt'));
    expect(await h.failure('write', { file_path: 'out/new.txt', content: 'x' })).toBe(viaLink('out/new.txt'));
    expect(await h.failure('write', { file_path: 'out/deep/new.txt', content: 'x' })).toBe(viaLink('out/deep/new.txt'));
    expect(await h.failure('glob', { pattern: '*', path: 'out' })).toBe(viaLink('out'));
    expect(await h.failure('glob', { pattern: 'out/*' })).toBe(viaLink('out'));
    expect(await h.failure('grep', { pattern: 'SECRET', path: 'out' })).toBe(viaLink('out'));
    await expect(access(path.join(outside, 'new.txt'))).rejects.toThrow();
    await expect(access(path.join(outside, 'deep'))).rejects.toThrow();
  });

  it('refuses writing through a dangling symlink (its target would be created outside)', async () => {
    await symlink(path.join(outside, 'created.txt'), path.join(h.root, 'dangling.txt'));
    expect(await h.failure('write', { file_path: 'dangling.txt', content: 'x' })).toBe(
      '"dangling.txt" goes through a symbolic link whose target does not exist: write to a real path inside the workspace',
    );
    await expect(access(path.join(outside, 'created.txt'))).rejects.toThrow();
  });

  it('walks never follow links: grep and glob over the root do not reach outside', async () => {
    await symlink(outside, path.join(h.root, 'out'));
    await symlink(path.join(outside, 'secret.txt'), path.join(h.root, 'leak.txt'));
    expect(await h.value('grep', { pattern: 'SECRET' })).toEqual({ matches: [] });
    // the links are listed as entries of the workspace, their targets are not entered
    expect(await h.value('glob', { pattern: '**/*' })).toEqual({ paths: ['inside.txt', 'leak.txt', 'out'] });
  });

  it('openWorkspace: resolution details and error reasons', async () => {
    await mkdir(path.join(h.root, 'd'));
    const ws = openWorkspace(h.root);
    expect(await ws.resolveExisting('.')).toEqual({ absolute: h.root, display: '.', isDirectory: true });
    expect(await ws.resolveForWrite('d/e/f.txt')).toEqual({ absolute: path.join(h.root, 'd/e/f.txt'), display: 'd/e/f.txt', exists: false });
    const error = await ws.resolveExisting('../x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).reason).toBe('outside-workspace');
    const missing = await ws.resolveExisting('nope').catch((e: unknown) => e);
    expect((missing as WorkspaceError).reason).toBe('not-found');
    expect(() => openWorkspace(path.join(h.root, 'missing'))).toThrow(/does not exist/);
  });

  it('never shows the host location of the workspace in a message', async () => {
    const messages = [
      await h.failure('read', { file_path: 'nope.txt' }),
      await h.failure('write', { file_path: 'inside.txt/child', content: 'x' }),
      await h.failure('read', { file_path: '../x' }),
    ];
    for (const message of messages) expect(message).not.toContain(h.root);
  });
});
