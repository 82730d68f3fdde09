// Test-only: the fixture of the sandboxed-hooks tests — a workspace, a directory outside it, and
// a home with an SSH key and the agent's settings, under /var/tmp (outside the sandbox's private
// /tmp) — and the sandbox the CLI would give hooks there.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSandbox, defaultSecretPaths, type Sandbox } from '@agent/sandbox';
import { nodeForAnyUser } from '@agent/tooling-system-tools';

/** The package directory. */
export const packageDir = fileURLToPath(new URL('../..', import.meta.url));
/** This directory. */
export const fixtures = path.join(packageDir, 'src', '__fixtures__');
/** What the fixture's SSH key holds. */
export const sshKey = '-----BEGIN OPENSSH PRIVATE KEY----- hostile-test-key-material';
/** What the fixture's settings.json holds in its `env`. */
export const settingsSecret = 'settings-env-deploy-token-value';

/** The users the hostile tests run as: root and nobody when this is root. */
export const users: { label: string; uid: number | undefined }[] =
  process.getuid?.() === 0
    ? [
        { label: 'root', uid: undefined },
        { label: 'nobody', uid: 65534 },
      ]
    : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

/** Functions run after each test (the test file's afterEach empties it). */
export type Cleanups = (() => void)[];

/**
 * This node, hard-linked (or copied) into `base`: the toolchain's may sit under /root, which the
 * sandbox hides when the home is another (as the fixture's is).
 */
function linkNode(base: string): string {
  const node = path.join(base, 'node');
  nodeForAnyUser(node);
  return node;
}

/** The paths of one fixture. */
export interface Fixture {
  base: string;
  workspace: string;
  outside: string;
  home: string;
  agentHome: string;
  node: string;
}

/** A fresh fixture, removed after the test. */
export function createFixture(cleanups: Cleanups): Fixture {
  const base = fs.mkdtempSync('/var/tmp/command-hooks-sandbox-');
  fs.chmodSync(base, 0o755);
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  const workspace = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  const home = path.join(base, 'home');
  const agentHome = path.join(home, '.agent');
  for (const dir of [workspace, outside, path.join(home, '.ssh'), agentHome])
    fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), sshKey);
  fs.writeFileSync(path.join(home, '.profile'), 'original\n');
  fs.writeFileSync(
    path.join(agentHome, 'settings.json'),
    JSON.stringify({ env: { DEPLOY_TOKEN: settingsSecret } }),
  );
  return { base, workspace, outside, home, agentHome, node: linkNode(base) };
}

/** The sandbox the CLI gives hooks: writes in the workspace, the keys and agent state hidden, network on. */
export function sandboxFor(paths: Fixture, cleanups: Cleanups): Sandbox {
  const sandbox = createSandbox({
    mode: 'required',
    writableRoots: [paths.workspace],
    secretPaths: [...defaultSecretPaths(paths.home), paths.agentHome],
    network: 'on',
    onWarning: () => undefined,
  });
  cleanups.push(() => void sandbox.close());
  return sandbox;
}
