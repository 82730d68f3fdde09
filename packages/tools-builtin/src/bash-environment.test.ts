import * as fs from 'node:fs';
import * as path from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { createBashOutputTool } from './bash-output-tool.js';
import { defaultTools } from './default-tools.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

// What a command sees of the environment: every run of the real bash tool (sandboxed or not,
// foreground or background) gets the environment without credentials unless passEnv names them.

// Fake keys in real formats, built at run time.
const openaiKey = `sk-proj-${'Ab3'.repeat(16)}`;
const githubKey = `ghp_${'A1b2'.repeat(9)}`;
const secrets: Record<string, string> = {
  OPENAI_API_KEY: openaiKey,
  ANTHROPIC_API_KEY: `sk-ant-api03-${'xY9_'.repeat(20)}`,
  MY_SECRET: 'hunter2-but-longer',
  GITHUB_TOKEN: 'gh-token-value-1234',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  DB_PASSWORD: 'db-password-value',
  DATABASE_URL: 'postgres://app:pg-password-value@db:5432/app',
  INNOCENT_LOOKING: githubKey,
  // Read by sshpass -e, ldapsearch wrappers and Hardhat/Foundry configs: names no API-key rule saw.
  SSHPASS: 'ssh-login-password-1',
  LDAP_BIND_PW: 'ldap-bind-password-1',
  ADMIN_PASSCODE: 'admin-passcode-value-1',
  MNEMONIC: 'test test test test test test test test test test test junk',
  // Keys known by their prefix only, under names no rule reads.
  LINEAR: `lin_api_${'aB3dE5gH7j'.repeat(4)}`,
  SENDGRID: `SG.${'aB3dE5gH7j_'.repeat(2)}.${'aB3dE5gH7j-'.repeat(3)}aB3dE5gH7j`,
  GCLOUD_ACCESS: `ya29.${'a0AfB_byC1d2E3'.repeat(4)}`,
  // OpenTelemetry's exporter headers and a git extra header given through the environment.
  OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=hcKey0123456789abcdef',
  GIT_CONFIG_VALUE_0: 'AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMzQ1Njc4',
  // Credential files and signing material as CI secrets hand them over.
  NETRC: 'machine api.example.com login me password netrc-password-1',
  ANDROID_KEYSTORE_B64: 'MIIKZgIBAzCCCiAGCSqGSIb3DQEHAaCCChEEggoNMIIKCTCCBbAG',
  GCP_SERVICE_ACCOUNT: '{"type":"service_account","client_email":"x@y.iam"}',
  // Keys of no known format under names no rule reads: judged by the value, which looks random.
  MFA_SEED: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  DEEPGRAM: '9f2c4e6a8b0d1f3a5c7e9b2d4f6a8c0e1b3d5f7a',
  MY_SVC: 'q7Rk2ZpX9vLm4TnW8bYc3HdF6sJg1AeU',
  POSTMARK_SERVER: '8f7e6d5c-4b3a-4291-8e7f-6a5b4c3d2e1f',
  // Named like keys, numbered (a second key while the first is rotated): short and letters only,
  // so no value rule reads them — withheld for the name alone.
  OPENAI_API_KEY2: 'rotatedkeyvalue',
  GITHUB_TOKEN2: 'ghshortlived',
  DEPLOY_PAT1: 'deploypatvalue',
  // Lists of tokens, salts and pre-shared keys: words no rule read, values of no known format.
  NPM_TOKENS: 'npm-token-list-value',
  GITHUB_TOKENS: 'first-token-value,second-token-value',
  AUTH_SALT: 'wordpress salt words',
  PEPPER: 'pepper-value-word',
  WIFI_PSK: 'correct horse battery',
  SNMP_COMMUNITY: 'private-community-1',
  AUTH_HEADER: 'Token plain-header-token',
};
/** Ordinary variables whose values are long or random-looking: kept. */
const ordinary: Record<string, string> = {
  TOKENIZERS_PARALLELISM: 'false',
  ORDINARY_SETTING: 'kept-value',
  GITHUB_SHA: 'ffac537e6cbbf934b08745a378932722df287a53',
  RUSTUP_TOOLCHAIN: 'stable-x86_64-unknown-linux-gnu',
  DBUS_SESSION_BUS_ADDRESS:
    'unix:abstract=/tmp/dbus-Xq3lYV0Ghj,guid=2d3e1c4a9b6f7e8d0c1a2b3c64a1f0e2',
  SSH_AUTH_SOCK: '/tmp/ssh-XXXXq1mZbY/agent.1234',
  LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:*.tar=01;31',
  CODESPACE_NAME: 'octocat-literate-space-parakeet-7gwv4g5',
  CLAUDE_CODE_MAX_OUTPUT_TOKENS: '32000',
};
const environment = {
  ...process.env,
  ...secrets,
  ...ordinary,
};

let dir: string;
let background: BackgroundTasks;
afterEach(async () => {
  await background?.killAll();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

function tool(options: Partial<Parameters<typeof createBashTool>[0]> = {}) {
  dir = makeTempDir('bash-env-');
  background = new BackgroundTasks();
  return createBashTool({
    cwd: dir,
    sandbox: 'off',
    spillDir: path.join(dir, '.spill'),
    backgroundTasks: background,
    env: environment,
    ...options,
  });
}

function expectNoSecrets(text: string, except: readonly string[] = []) {
  for (const [name, value] of Object.entries(secrets)) {
    if (except.includes(name)) continue;
    expect(text).not.toContain(`${name}=`);
    expect(text).not.toContain(value);
  }
  expect(text).toMatch(/^PATH=/m);
  expect(text).toMatch(/^HOME=/m);
  for (const [name, value] of Object.entries(ordinary)) expect(text).toContain(`${name}=${value}`);
}

describe.each([
  ['unsandboxed', 'off'],
  ['sandboxed', 'required'],
] as const)('bash %s', (_label, sandbox) => {
  if (sandbox === 'required') beforeEach(skipWithout('bwrap'));
  it('runs commands without the credentials of its environment', async () => {
    const bash = tool({ sandbox });
    const result = await bash.execute({ command: 'env' }, testContext());
    expect(result.details?.exitCode).toBe(0);
    expectNoSecrets(resultText(result));
  });

  it('passes exactly the variables passEnv names', async () => {
    const bash = tool({ sandbox, passEnv: ['MY_SECRET', 'GITHUB_TOKEN', 'openai_api_key'] });
    const result = await bash.execute({ command: 'env' }, testContext());
    const text = resultText(result);
    expect(text).toContain(`MY_SECRET=${secrets.MY_SECRET}`);
    expect(text).toContain(`GITHUB_TOKEN=${secrets.GITHUB_TOKEN}`);
    // Names are exact: a lower-case spelling passes nothing.
    expectNoSecrets(text, ['MY_SECRET', 'GITHUB_TOKEN']);
  });

  it('runs background commands without them', async () => {
    const bash = tool({ sandbox });
    const started = await bash.execute({ command: 'env', run_in_background: true }, testContext());
    const id = started.details?.taskId ?? '';
    await background.get(id)?.handle.done;
    const output = await createBashOutputTool({ backgroundTasks: background }).execute(
      { task_id: id },
      testContext(),
    );
    expectNoSecrets(resultText(output));
  });
});

describe('bash environment', () => {
  it('filters process.env at each start: a key set after the tool was made is withheld too', async () => {
    dir = makeTempDir('bash-env-');
    background = new BackgroundTasks();
    const bash = createBashTool({ cwd: dir, sandbox: 'off', spillDir: path.join(dir, '.spill') });
    const before = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = secrets.ANTHROPIC_API_KEY;
    process.env.AGENT_TEST_ORDINARY = 'seen';
    try {
      const result = await bash.execute(
        { command: 'echo "[$ANTHROPIC_API_KEY] [$AGENT_TEST_ORDINARY]"' },
        testContext(),
      );
      expect(result.details?.stdout).toBe('[] [seen]\n');
    } finally {
      if (before === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = before;
      delete process.env.AGENT_TEST_ORDINARY;
    }
  });

  it('takes passEnv through defaultTools', async () => {
    dir = makeTempDir('bash-env-');
    background = new BackgroundTasks();
    const tools = defaultTools({
      cwd: dir,
      tools: ['bash'],
      backgroundTasks: background,
      bash: { sandbox: 'off', env: environment, passEnv: ['DB_PASSWORD'] },
    });
    const bash = tools[0];
    if (bash === undefined) throw new Error('no bash tool');
    const result = await bash.execute(
      { command: 'echo "[$DB_PASSWORD] [$OPENAI_API_KEY] [$INNOCENT_LOOKING]"' },
      testContext(),
    );
    expect((result.details as { stdout?: string }).stdout).toBe(`[${secrets.DB_PASSWORD}] [] []\n`);
  });
});
