import { describe, expect, it } from 'vitest';
import { credentialFreeEnvironment, withheldVariableNames } from './credential-environment.js';

const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:ghs_${'Q1w2'.repeat(9)}`).toString('base64')}`;

describe('credentialFreeEnvironment and git configuration pairs', () => {
  it('keeps the pairs without credentials (numbered again), and says which were withheld', () => {
    const env = {
      GIT_CONFIG_COUNT: '4',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'CI Bot',
      GIT_CONFIG_KEY_1: 'http.https://github.com/.extraheader',
      GIT_CONFIG_VALUE_1: header,
      GIT_CONFIG_KEY_2: `url.https://ghp_${'Zx9c'.repeat(9)}@github.com/.insteadOf`,
      GIT_CONFIG_VALUE_2: 'https://github.com/',
      GIT_CONFIG_KEY_3: 'core.autocrlf',
      GIT_CONFIG_VALUE_3: 'input',
    };
    expect(credentialFreeEnvironment(env)).toEqual({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'CI Bot',
      GIT_CONFIG_KEY_1: 'core.autocrlf',
      GIT_CONFIG_VALUE_1: 'input',
    });
    expect(withheldVariableNames(env)).toEqual([
      'GIT_CONFIG_KEY_1',
      'GIT_CONFIG_KEY_2',
      'GIT_CONFIG_VALUE_1',
      'GIT_CONFIG_VALUE_2',
    ]);
  });

  it('keeps whole pairs as they are, drops the count when none is left, passes a passed value', () => {
    const whole = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'c' };
    expect(credentialFreeEnvironment(whole)).toEqual(whole);
    expect(withheldVariableNames(whole)).toEqual([]);
    const secret = {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraheader',
      GIT_CONFIG_VALUE_0: header,
    };
    expect(credentialFreeEnvironment(secret)).toEqual({});
    expect(credentialFreeEnvironment(secret, { pass: ['GIT_CONFIG_VALUE_0'] })).toEqual(secret);
  });
});
