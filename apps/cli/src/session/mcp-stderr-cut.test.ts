import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesServer } from '../testing/messages-server.js';
import { appDir, assertBuilt, cleanEnv, runCli, tempDir } from '../testing/test-support.js';

// An MCP server that dies during a call: the error the model reads quotes the last 1,000
// characters of its stderr, cut from the front with nothing to say so — a key the server printed
// (its configured env, a careless log line) was cut mid-value there, and the redaction, looking
// for whole values and for fragments at marked cuts, let the end of the key through.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const given = `srv-${'Wm4q'.repeat(14)}`;

describe('the stderr of an MCP server that died mid-call', () => {
  it.each([20, 35, 50])(
    'cut %i characters before the end of a key it printed: the model reads no piece of the key',
    async (shown) => {
      const dir = await tempDir('agent-cli-mcp-stderr-cut-');
      cleanups.push(dir.dispose);
      const mcpConfig = join(dir.path, 'mcp.json');
      await writeFile(
        mcpConfig,
        JSON.stringify({
          mcpServers: {
            envserver: {
              command: process.execPath,
              args: [join(appDir, 'src/__fixtures__/env-server.mjs')],
              env: { SERVER_API_KEY: given },
            },
          },
        }),
      );
      // The 1,000 characters quoted begin `shown` characters before the key's end.
      const pad = 1_000 - shown - 1;
      const server = await messagesServer(
        [
          { tool: { name: 'envserver__die', input: { name: 'SERVER_API_KEY', pad } } },
          { text: 'It died.' },
        ],
        cleanups,
      );
      const run = await runCli(
        [
          '-p',
          'go',
          '--provider',
          'anthropic',
          '--cwd',
          dir.path,
          '--mcp-config',
          mcpConfig,
          '--allow',
          'envserver__die',
        ],
        {
          env: cleanEnv({
            ANTHROPIC_API_KEY: `sk-ant-api03-${'a1B2'.repeat(20)}`,
            AGENT_HOME: join(dir.path, 'home'),
            ANTHROPIC_BASE_URL: server.url,
          }),
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const sent = server.bodies.slice(1).join('\n');
      expect(sent).toContain('its stderr ended with');
      // Every 6-character piece of the key, each looked for (the request is too long to show).
      const pieces = Array.from({ length: given.length - 5 }, (_, at) => given.slice(at, at + 6));
      expect(pieces.filter((piece) => sent.includes(piece))).toEqual([]);
      expect(run.stdout + run.stderr).not.toContain(given.slice(-shown));
    },
  );
});
