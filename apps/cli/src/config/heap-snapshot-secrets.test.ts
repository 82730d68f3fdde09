// NODE_OPTIONS' --heapsnapshot-signal=SIGUSR2 (a user's debugging setting, or one a launcher
// sets) made the CLI write a heap snapshot — every string of its heap, the API key among them —
// into the workspace when any process of the user sent the signal: here an unsandboxed command
// of the model walks up to the CLI and signals it, then reads the .heapsnapshot it finds there.
// --heapsnapshot-near-heap-limit writes one there too when the heap fills. The CLI now runs
// without both (in its environ block too, so what it starts does not inherit them).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type CliRun, testUsers } from '../testing/test-support.js';
import { runUnsandboxedCommand } from '../testing/unsandboxed-command.js';
import {
  nodeOptionsValue,
  nodeOptionsWords,
  withoutSnapshotOptions,
} from './heap-snapshot-options.js';

beforeAll(assertBuilt);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const providerKey = `sk-ant-api03-${'Hs4_'.repeat(20)}`;
/**
 * The model's command: finds its CLI ancestor, writes the CLI's NODE_OPTIONS (from its environ
 * block) and command line to files, sends it SIGUSR2 and waits, bounded, for a snapshot to appear.
 */
const command = [
  'p=$$',
  'while [ "$p" -gt 1 ]; do',
  `  if tr '\\0' '\\n' < /proc/$p/cmdline | grep -q 'main.js$'; then`,
  `    tr '\\0' '\\n' < /proc/$p/environ | sed -n 's/^NODE_OPTIONS=//p' > cli-node-options.txt`,
  `    tr '\\0' ' ' < /proc/$p/cmdline > cli-cmdline.txt`,
  '    kill -USR2 $p; break',
  '  fi',
  "  p=$(awk '/^PPid/ { print $2 }' /proc/$p/status)",
  'done',
  'for i in $(seq 200); do ls | grep -q heapsnapshot && break; sleep 0.05; done',
].join('\n');

/** Runs the CLI as `uid` (or this user) in a new workspace with `nodeOptions`, the command above. */
async function runSignalled(
  uid: number | undefined,
  nodeOptions: string,
  execArgv: readonly string[] = [],
): Promise<{ run: CliRun; workspace: string }> {
  return runUnsandboxedCommand({
    uid,
    prefix: 'agent-cli-heap-snapshot-',
    command,
    nodeArgs: execArgv,
    env: { ANTHROPIC_API_KEY: providerKey, NODE_OPTIONS: nodeOptions },
    disposeLater: (dispose) => cleanups.push(dispose),
  });
}

/** The heap snapshots in `folder` and what they hold of the key. */
function snapshotsIn(folder: string): { name: string; holdsKey: boolean }[] {
  return fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.heapsnapshot'))
    .map((name) => ({
      name,
      holdsKey: fs.readFileSync(join(folder, name), 'latin1').includes(providerKey),
    }));
}

describe.runIf(process.platform === 'linux').each(testUsers)(
  'a heap-snapshot option for the CLI, as $label',
  ({ uid }) => {
    it('NODE_OPTIONS --heapsnapshot-signal: a signal from a command writes no snapshot', async () => {
      const { run, workspace } = await runSignalled(
        uid,
        '--max-old-space-size=3000 --heapsnapshot-signal=SIGUSR2 --heapsnapshot_near_heap_limit 2',
      );
      // The command ran and found the CLI.
      expect(fs.readFileSync(join(workspace, 'cli-cmdline.txt'), 'utf8'), run.stderr).toContain(
        'main.js',
      );
      expect(snapshotsIn(workspace)).toEqual([]);
      // Left out of its environ block (what it starts inherits), the other option kept; said once.
      expect(fs.readFileSync(join(workspace, 'cli-node-options.txt'), 'utf8').trim()).toBe(
        '--max-old-space-size=3000',
      );
      expect(run.stderr).toContain(
        '--heapsnapshot-signal and --heapsnapshot-near-heap-limit left out',
      );
      expect(run.stderr.split('left out')).toHaveLength(2);
    });

    it('node’s own --heapsnapshot-signal argument: no snapshot either', async () => {
      const { run, workspace } = await runSignalled(uid, '', ['--heapsnapshot-signal', 'SIGUSR2']);
      expect(fs.readFileSync(join(workspace, 'cli-cmdline.txt'), 'utf8'), run.stderr).toContain(
        'main.js',
      );
      expect(fs.readFileSync(join(workspace, 'cli-cmdline.txt'), 'utf8')).not.toContain(
        'heapsnapshot',
      );
      expect(snapshotsIn(workspace)).toEqual([]);
      expect(run.stderr).toContain('--heapsnapshot-signal left out');
    });
  },
);

describe('withoutSnapshotOptions', () => {
  it('leaves out both options in every spelling Node reads, with their values', () => {
    expect(
      withoutSnapshotOptions([
        '--heapsnapshot-signal=SIGUSR2',
        '--inspect-port=0',
        '--heapsnapshot_signal',
        'SIGHUP',
        '--heapsnapshot-near-heap-limit',
        '--trace-warnings',
        '--heapsnapshot-near_heap-limit=3',
      ]),
    ).toEqual({
      kept: ['--inspect-port=0', '--trace-warnings'],
      removed: ['--heapsnapshot-signal', '--heapsnapshot-near-heap-limit'],
    });
    expect(withoutSnapshotOptions(['--max-old-space-size=100', '--heapsnapshots'])).toEqual({
      kept: ['--max-old-space-size=100', '--heapsnapshots'],
      removed: [],
    });
  });

  it('reads and writes NODE_OPTIONS as Node does (quotes, backslashes inside them)', () => {
    const words = nodeOptionsWords('--require "/a b/x.js"  --title="say \\"hi\\"" -r\\y');
    expect(words).toEqual(['--require', '/a b/x.js', '--title=say "hi"', '-r\\y']);
    expect(nodeOptionsWords(nodeOptionsValue(words))).toEqual(words);
  });
});
