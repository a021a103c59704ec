import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../src/tools/index.ts';

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'ptc-descriptions-'));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function descriptions(options: Omit<Parameters<typeof createBuiltinTools>[0], 'workspace'>): Record<string, string> {
  return Object.fromEntries(createBuiltinTools({ workspace, ...options }).map((tool) => [tool.name, tool.description]));
}

describe('built-in tool descriptions', () => {
  it('state the configured limits, not the defaults', () => {
    const d = descriptions({ limits: { readPageLines: 50, maxLineChars: 300, maxResults: 7, maxGrepFileBytes: 3 * 1024 * 1024 } });
    expect(d.read).toContain('at most 50 a call');
    expect(d.read).toContain('Cuts lines at 300 chars');
    expect(d.glob).toContain('at most 7.');
    expect(d.grep).toContain('at most 7,');
    expect(d.grep).toContain('files over 3 MiB');
    expect(descriptions({ limits: { maxGrepFileBytes: 5000 } }).grep).toContain('files over 5000 bytes');
  });

  it('name the skipped directories, and none when nothing is skipped', () => {
    const custom = descriptions({ ignoreDirectories: ['dist'] });
    expect(custom.glob).toMatch(/ Skips dist\.$/);
    expect(custom.grep).toContain('files over 10 MiB, dist; ');
    const none = descriptions({ ignoreDirectories: [] });
    expect(none.glob).not.toContain('Skips');
    expect(none.grep).toContain('files over 10 MiB; ');
  });
});
