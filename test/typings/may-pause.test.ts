import { describe, expect, it } from 'vitest';
import { generateTypings } from '../../typings/generate.ts';
import { renderPrompt } from '../../typings/prompt.ts';
import type { ToolSchema } from '../../src/tool.ts';

const schema = (name: string, mayPause?: true): ToolSchema => ({
  name,
  description: 'Creates an issue.',
  parameters: { type: 'object', properties: { title: { type: 'string' } } },
  output: { type: 'string' },
  ...(mayPause === undefined ? {} : { mayPause }),
});

describe('a tool whose calls may pause for approval', () => {
  it('says so in its doc comment, and only it', async () => {
    const typings = await generateTypings([schema('create_issue', true), schema('list_issues')]);
    expect(typings).toContain('/** [needs approval: a call may pause the run until a person decides; a denial throws APPROVAL_DENIED] Creates an issue. */\n  create_issue:');
    expect(typings).toContain('/** Creates an issue. */\n  list_issues:');
  });

  it('is explained once in the prompt', () => {
    expect(renderPrompt('')).toContain('A tool marked "needs approval" may pause the run until a person decides');
  });
});
