import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from './escape-attempts.js';
import { type Fixture, makeFixture, type RunReport, runAs } from './escape-harness.js';
import { runnerSuite } from './runner-suite.js';

// The sandbox's own files live in the temporary directory: the seccomp filters (read by every
// sandbox of this user as it starts), the allow-list proxy's socket (socat connects to it for
// every connection), a long-lived sandbox's pipes and helper. A workspace that holds the
// temporary directory (`--cwd /tmp`, or TMPDIR inside the project) made them writable to
// commands: one rewrote the filter and the next command had Unix sockets, user namespaces and
// setuid files back. Tried by the built package as root and as nobody, with the runner's TMPDIR
// inside the workspace (a private one: the machine's shared filters are never touched).

const { available, users, parent, runner } = runnerSuite("the sandbox's own files", 'own-files');

const allowAll = String.raw`\006\000\000\000\000\000\377\177`; // BPF: return SECCOMP_RET_ALLOW

const filterAttempts: Attempt[] = [
  {
    name: 'rewrite, remove or replace the seccomp filters',
    evidence: /Read-only file system|Device or resource busy/,
    script: `for f in "$HOSTTMP"/agent-sandbox-seccomp-*/*.bpf; do printf '${allowAll}' > "$f" && echo "ESCAPED rewrote $f"; rm -f "$f" && echo "ESCAPED removed $f"; done; for d in "$HOSTTMP"/agent-sandbox-seccomp-*; do mv "$d" "$d.old" && mkdir "$d" && echo ESCAPED replaced; done; true`,
  },
  {
    name: 'a Unix socket, a user namespace and a setuid file in the next command',
    evidence: /Operation not permitted/,
    script: `python3 -c 'import socket; socket.socket(socket.AF_UNIX); print("ESCAPED unix socket")' 2>&1; unshare -U true && echo ESCAPED userns; touch s && chmod u+s s 2>&1 && echo ESCAPED setuid; true`,
  },
];

const proxyAttempts: Attempt[] = [
  {
    name: "point the proxy's socket at another daemon's",
    evidence: /Read-only file system|Device or resource busy/,
    script:
      'for s in "$HOSTTMP"/agent-sandbox-proxy-*/proxy.sock; do ln -s "$SOCK" "$s.new" && mv -f "$s.new" "$s" && echo ESCAPED replaced; done; true',
  },
  {
    name: 'talk to it through the proxy port',
    script: 'curl -sS -m 5 http://127.0.0.1:3128/ 2>&1; true',
  },
];

const hostAttempts: Attempt[] = [
  {
    name: "rewrite the long-lived sandbox's helper",
    evidence: /Read-only file system/,
    script:
      'for f in "$HOSTTMP"/agent-sandbox-pipes-*/exec-helper.cjs; do chmod u+w "$f"; echo "process.exit(0)" >> "$f" && echo ESCAPED; done; true',
  },
];

describe.runIf(available).each(users)("the sandbox's own files, as $label", (user) => {
  const runs = [
    { label: 'a sandbox per command', host: false, network: 'off', attempts: filterAttempts },
    { label: 'one long-lived sandbox', host: true, network: 'off', attempts: hostAttempts },
    {
      label: 'the allow-listed network',
      host: false,
      network: { allowHosts: ['127.0.0.1'] },
      attempts: proxyAttempts,
    },
  ] as const;
  const fixtures: Fixture[] = [];
  const reports = new Map<string, RunReport>();

  beforeAll(async () => {
    for (const run of runs) {
      const fixture = await makeFixture(parent, {
        ...user,
        label: `${user.label}-${fixtures.length}`,
      });
      fixtures.push(fixture);
      // The workspace holds the runner's temporary directory (fixture.temporary).
      const [report] = await runAs(user, runner, fixture, [
        {
          label: run.label,
          host: run.host,
          options: { writableRoots: [fixture.base], network: run.network },
          cwd: fixture.base,
          env: { HOSTTMP: fixture.temporary, SOCK: fixture.socketPath },
          attempts: run.attempts,
        },
      ]);
      if (report === undefined) throw new Error(`no report for ${run.label}`);
      reports.set(run.label, report);
    }
  }, 300_000);
  afterAll(async () => {
    for (const fixture of fixtures) await fixture.close();
  });

  const results = (label: string) => reports.get(label)?.results ?? [];

  it.each(runs)('$label: they cannot be changed', ({ label, attempts }) => {
    expect(results(label)).toHaveLength(attempts.length);
    for (const [index, attempt] of attempts.entries()) {
      const output = results(label)[index]?.output ?? '';
      expect(output, attempt.name).not.toMatch(/ESCAPED|SECRET-/);
      if (attempt.evidence !== undefined) expect(output, attempt.name).toMatch(attempt.evidence);
    }
  });
});
