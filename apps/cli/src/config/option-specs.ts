import { parseArgs } from 'node:util';

/** Every option `agent` takes (node:util parseArgs). */
export const optionSpecs = {
  print: { type: 'string', short: 'p' },
  'output-format': { type: 'string' },
  'input-format': { type: 'string' },
  sandbox: { type: 'string' },
  provider: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  scripted: { type: 'string' },
  system: { type: 'string' },
  cwd: { type: 'string' },
  'mcp-config': { type: 'string' },
  'mcp-log-level': { type: 'string' },
  'mcp-timeout': { type: 'string' },
  openapi: { type: 'string', multiple: true },
  mode: { type: 'string' },
  allow: { type: 'string', multiple: true },
  ask: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  'max-turns': { type: 'string' },
  'max-tool-calls': { type: 'string' },
  save: { type: 'string' },
  resume: { type: 'string' },
  http: { type: 'boolean' },
  continue: { type: 'boolean', short: 'c' },
  'keep-grants': { type: 'boolean' },
  trust: { type: 'boolean' },
  'hosted-web-search': { type: 'boolean' },
  'pass-env': { type: 'string', multiple: true },
  'code-mode': { type: 'boolean' },
  tools: { type: 'string', multiple: true },
  port: { type: 'string' },
  'token-file': { type: 'string' },
  'no-auth': { type: 'boolean' },
  'max-concurrent-calls': { type: 'string' },
  'max-queued-calls': { type: 'string' },
  'max-pipelined-requests': { type: 'string' },
  'session-idle-minutes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** argv parsed against {@link optionSpecs} (strict: an unknown option throws). */
export function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: optionSpecs,
  });
}

/** The option values of {@link parseOptions}. */
export type ParsedOptions = ReturnType<typeof parseOptions>['values'];
