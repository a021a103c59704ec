import { join } from 'node:path';
import type { McpStdioServerConfig } from '../../src/mcp/index.ts';
import { nodeBin } from '../mcp/helpers.ts';

export { fixtureConfig, nodeBin } from '../mcp/helpers.ts';

const root = new URL('../..', import.meta.url).pathname;
export const cliPath = join(root, 'services/cli.ts');
export const catalogueServer = join(root, 'test/mcp-server/fixtures/catalogue-server.ts');

export function catalogueConfig(size = 300): McpStdioServerConfig {
  return { command: nodeBin, args: [catalogueServer], env: { CATALOGUE_SIZE: String(size) } };
}
