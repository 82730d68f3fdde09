// Test-only: a real restate-server (the binary @restatedev/restate-server ships) on 127.0.0.1
// free ports, with its data in a temp dir, and worker processes serving the agent object.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(import.meta.url);

/** The server binary of this platform, from the npm package's optional dependency. */
export function restateServerBinary(): string {
  return require.resolve(
    `@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`,
  );
}

/** A free TCP port on 127.0.0.1 (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/** A running restate-server. */
export interface RestateServer {
  ingressUrl: string;
  adminUrl: string;
  /** Registers a deployment (an endpoint URL) and waits until its services are known. */
  register(uri: string): Promise<void>;
  /** SIGKILLs the server and starts it again on the same data and ports; resolves once it answers. */
  restart(): Promise<void>;
  /** The end of what the server wrote to stderr (its warnings), for a failure's message. */
  stderr(): string;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

/** Starts restate-server with its own data dir and ports; resolves once the admin API answers. */
export async function startRestateServer(): Promise<RestateServer> {
  const dir = await mkdtemp(join(tmpdir(), 'restate-server-'));
  const [ingress, admin, node] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'restate.toml');
  await writeFile(
    config,
    [
      'cluster-name = "agent-test"',
      // Small: the machine is shared.
      'default-num-partitions = 4',
      'rocksdb-total-memory-size = "256 MiB"',
      'disable-telemetry = true',
      'listen-mode = "tcp"',
      `bind-address = "127.0.0.1:${node}"`,
      `advertised-address = "http://127.0.0.1:${node}/"`,
      'log-filter = "warn,restate=warn"',
      '',
      '[admin]',
      `bind-address = "127.0.0.1:${admin}"`,
      'disable-web-ui = true',
      '',
      '[ingress]',
      `bind-address = "127.0.0.1:${ingress}"`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess;
  let stderr = '';
  const launch = () => {
    child = spawn(
      restateServerBinary(),
      ['--config-file', config, '--base-dir', join(dir, 'data'), '--no-logo'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
  };
  const adminUrl = `http://127.0.0.1:${admin}`;
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  };
  const stop = async () => {
    await kill();
    await rm(dir, { recursive: true, force: true });
  };
  const ready = async () => {
    await untilReady(`${adminUrl}/health`, child, () => stderr);
    await untilReady(`${ingressUrl}/restate/health`, child, () => stderr);
  };
  launch();
  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ingressUrl,
    adminUrl,
    register: async (uri) => {
      const response = await fetch(`${adminUrl}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      if (!response.ok)
        throw new Error(`registering ${uri} failed: ${response.status} ${await response.text()}`);
    },
    stderr: () => stderr,
    restart: async () => {
      await kill();
      launch();
      await ready();
    },
    stop,
  };
}

/** Polls a health URL until it answers 2xx (the server gives no readiness event to await). */
async function untilReady(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`restate-server exited with code ${child.exitCode}: ${stderr()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `restate-server did not answer ${url} within 60 s; its stderr ended with: ${stderr()}`,
  );
}

/** A worker process serving the agent object (see __fixtures__/worker.mjs). */
export interface Worker {
  port: number;
  process: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/** Starts a worker; resolves once it listens (it prints its port). */
export async function startWorker(script: string, env: Record<string, string>): Promise<Worker> {
  const child = spawn(process.execPath, [script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // The SDK warns on every request that signatures are not checked (a test has no keys).
    env: { ...process.env, RESTATE_LOGGING: 'ERROR', ...env },
  });
  const exited = once(child, 'exit').then(() => undefined);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const match = /^listening (\d+)$/.exec(line);
    if (match !== null) return { port: Number(match[1]), process: child, exited };
  }
  throw new Error('the worker exited before listening');
}
