import { describe, expect, it } from 'vitest';
import { createConfigTools } from './config-tools.js';
import { PermissionPolicy } from './permissions.js';
import { StaticToolExecutor } from './static-tool-executor.js';

/** claw-code's settings example: a settings object, `verbose` and `permissions.defaultMode`. */
function claw() {
  const stored: Record<string, unknown> = { verbose: false, 'permissions.defaultMode': 'default' };
  const tools = createConfigTools({
    subject: 'the test settings',
    settings: {
      verbose: {
        description: 'Verbose output.',
        get: () => stored.verbose,
        set: (value) => {
          stored.verbose = value;
          return undefined;
        },
        values: [true, false],
      },
      'permissions.defaultMode': {
        description: 'The default permission mode.',
        get: () => stored['permissions.defaultMode'],
        set: (value) => {
          stored['permissions.defaultMode'] = value;
          return `Mode set to ${String(value)}.`;
        },
        values: ['default', 'plan', 'acceptEdits'],
      },
      version: { description: 'The version.', get: () => '1.2.3' },
      unset: { description: 'Nothing yet.', get: () => undefined },
    },
  });
  return { stored, tools };
}

function executor(
  tools: ReturnType<typeof createConfigTools>,
  rules: ConstructorParameters<typeof PermissionPolicy>[0] = { mode: 'full-access' },
) {
  const policy = new PermissionPolicy(rules);
  const executor = new StaticToolExecutor({ permissionGate: policy.gate });
  for (const tool of tools) executor.register(tool);
  return executor;
}

describe('createConfigTools', () => {
  it('config reads every setting (unset ones left out), or one', async () => {
    const tools = executor(claw().tools);
    expect(JSON.parse(await tools.execute('config', {}))).toEqual({
      verbose: false,
      'permissions.defaultMode': 'default',
      version: '1.2.3',
    });
    expect(await tools.execute('config', { setting: 'version' })).toBe('"1.2.3"');
    await expect(tools.execute('config', { setting: 'nope' })).rejects.toThrow(
      'there is no setting "nope"; the settings are: verbose, permissions.defaultMode, version, unset',
    );
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'a setting named %s that is not defined is unknown, for reading and for changing',
    async (name) => {
      const run = executor(claw().tools);
      for (const [tool, args] of [
        ['config', { setting: name }],
        ['config_set', { setting: name, value: 'x' }],
      ] as const)
        await expect(run.execute(tool, args)).rejects.toThrow(`there is no setting "${name}"`);
    },
  );

  it('runs claw-code’s Config examples: read, set, an invalid value, an unknown setting', async () => {
    const { stored, tools } = claw();
    const run = executor(tools);
    expect(await run.execute('Config', { setting: 'verbose' })).toBe('false');
    expect(await run.execute('Config', { setting: 'permissions.defaultMode', value: 'plan' })).toBe(
      'Mode set to plan.',
    );
    expect(stored['permissions.defaultMode']).toBe('plan');
    await expect(
      run.execute('Config', { setting: 'permissions.defaultMode', value: 'bogus' }),
    ).rejects.toThrow(
      'invalid value "bogus" for "permissions.defaultMode": one of default, plan, acceptEdits',
    );
    await expect(run.execute('Config', { setting: 'nope' })).rejects.toMatchObject({
      kind: 'invalid-args',
    });
    expect(await run.execute('config_set', { setting: 'verbose', value: true })).toBe(
      'verbose is now true (was false).',
    );
    await expect(run.execute('config_set', { setting: 'version', value: '2' })).rejects.toThrow(
      '"version" cannot be changed; these can: verbose, permissions.defaultMode',
    );
    expect(stored.verbose).toBe(true);
  });

  it('a change is asked unless a rule allows it; reading through Config is asked too', async () => {
    const { stored, tools } = claw();
    const strict = executor(tools, {
      mode: 'read-only',
      allow: ['config_set(verbose:*)', 'config_set(read:verbose)'],
    });
    expect(await strict.execute('config', {})).toContain('"verbose"');
    await expect(
      strict.execute('Config', { setting: 'permissions.defaultMode', value: 'acceptEdits' }),
    ).rejects.toMatchObject({ kind: 'denied' });
    expect(stored['permissions.defaultMode']).toBe('default');
    await expect(strict.execute('Config', { setting: 'version' })).rejects.toMatchObject({
      kind: 'denied',
    });
    expect(await strict.execute('Config', { setting: 'verbose' })).toBe('false');
    expect(await strict.execute('Config', { setting: 'verbose', value: true })).toMatch(/now true/);
  });

  it('lists the settings for the model and is never deferred', () => {
    const [read, write] = claw().tools;
    expect(read?.description).toContain('- verbose [changeable]: Verbose output. (true, false)');
    expect(read?.description).toContain('- version: The version.');
    expect(write?.aliases).toEqual(['Config', 'session']);
    expect(write?.policy?.permission).toBe('full-access');
    expect([read?.defer, write?.defer]).toEqual([false, false]);
    expect(() =>
      createConfigTools({ settings: { 'bad name!': { description: 'x', get: () => 1 } } }),
    ).toThrow(/Config setting "bad name!"/);
  });
});
