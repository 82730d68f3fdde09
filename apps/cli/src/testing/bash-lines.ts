import { runCli, writeScript } from './test-support.js';

/** One bash result of a `--output-format stream-json` run. */
export interface BashLineResult {
  isError: boolean;
  errorKind?: string;
  text: string;
}

/**
 * Runs the built CLI with `-p` on a scripted turn that calls bash once per line of `commands`
 * (the script written in `setup.dir`), in `setup.workspace`, with stream-json output and `flags`
 * (and `env`, the CLI's environment, when given).
 */
export async function runBashLines(
  setup: { dir: string; workspace: string; env?: Record<string, string> },
  commands: readonly string[],
  flags: readonly string[],
) {
  const script = await writeScript(setup.dir, [
    { toolCalls: commands.map((command) => ({ name: 'bash', arguments: { command } })) },
    { text: 'done' },
  ]);
  return runCli(
    [
      '-p',
      'go',
      '--scripted',
      script,
      '--cwd',
      setup.workspace,
      '--output-format',
      'stream-json',
      ...flags,
    ],
    setup.env === undefined ? {} : { env: setup.env },
  );
}

/** The tool results of a stream-json run's output, in order. */
export function toolResults(stdout: string): BashLineResult[] {
  return stdout
    .split('\n')
    .filter((line) => line.includes('"type":"tool-result"'))
    .map((line) => JSON.parse(line) as BashLineResult);
}
