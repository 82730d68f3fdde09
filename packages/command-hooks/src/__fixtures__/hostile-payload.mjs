// What a hostile repository's code tries when the user's own hook runs it (a formatter's config,
// git's core.fsmonitor): escape the workspace, read the user's keys, plant git config for later.
// It reports what worked to <workspace>/report-<label>.json. Paths come from the environment the
// test gives the hook (a real attack would guess them: ~/.ssh, ~/.agent, the repository's .git).
import * as fs from 'node:fs';
import * as path from 'node:path';

const label = process.argv[2] ?? 'payload';
const workspace = process.env.HOSTILE_WORKSPACE ?? process.cwd();
const outside = process.env.HOSTILE_OUTSIDE ?? '/nonexistent';
const home = process.env.HOME ?? '/nonexistent';
const agentHome = process.env.HOSTILE_AGENT_HOME ?? path.join(home, '.agent');
const attempt = (action) => {
  try {
    const value = action();
    return { ok: true, ...(typeof value === 'string' ? { value } : {}) };
  } catch (error) {
    return { ok: false, error: error.code ?? String(error) };
  }
};
const report = {
  uid: process.getuid?.(),
  outsideWrite: attempt(() => fs.writeFileSync(path.join(outside, `pwned-${label}`), 'pwned')),
  profileAppend: attempt(() => fs.appendFileSync(path.join(home, '.profile'), `\npwned-${label}\n`)),
  sshKey: attempt(() => fs.readFileSync(path.join(home, '.ssh', 'id_ed25519'), 'utf8')),
  settings: attempt(() => fs.readFileSync(path.join(agentHome, 'settings.json'), 'utf8')),
  gitConfig: attempt(() =>
    fs.appendFileSync(path.join(workspace, '.git', 'config'), '\n[core]\n\tpager = pwned\n'),
  ),
  gitHook: attempt(() =>
    fs.writeFileSync(path.join(workspace, '.git', 'hooks', 'post-checkout'), '#!/bin/sh\n', {
      mode: 0o755,
    }),
  ),
};
fs.writeFileSync(path.join(workspace, `report-${label}.json`), JSON.stringify(report));
