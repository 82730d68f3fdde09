import { describe, expect, it } from 'vitest';
import {
  credentialFreeEnvironment,
  credentialRedactor,
  credentialRuleOf,
  isCredentialVariable,
  withheldVariableNames,
} from './credential-environment.js';

// Fake keys in the real formats (never real credentials), built at run time so no scanner flags them.
const fake = {
  openai: `sk-proj-${'Ab3'.repeat(16)}`,
  anthropic: `sk-ant-api03-${'xY9_'.repeat(20)}`,
  openrouter: `sk-or-v1-${'0a1b'.repeat(16)}`,
  githubClassic: `ghp_${'A1b2'.repeat(9)}`,
  githubServer: `ghs_${'Z9y8'.repeat(9)}`,
  githubFine: `github_pat_${'11ABCDEFG0'.repeat(3)}_${'q'.repeat(40)}`,
  gitlab: `glpat-${'x1Y2z3'.repeat(4)}`,
  slackBot: `xoxb-${'1234567890'}-${'abcdefABCDEF'}`,
  slackUser: `xoxp-${'1234567890'}-${'0987654321'}`,
  awsId: `AKIA${'IOSFODNN7EXAMPLE'}`,
  awsTemporary: `ASIA${'Q3EGRZLSQ7EXAMPL'}`,
  google: `AIza${'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'}`,
  stripe: `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`,
  npm: `npm_${'a1B2c3D4e5'.repeat(4)}`,
  huggingFace: `hf_${'aB1cD2eF3g'.repeat(4)}`,
  groq: `gsk_${'aB1cD2eF3g'.repeat(5)}`,
  vault: `hvs.${'CAESIJ1x2y3z'.repeat(3)}`,
  pem: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
  jwt: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${'s1gn4ture'.repeat(3)}`,
  linear: `lin_api_${'aB3dE5gH7j'.repeat(4)}`,
  shopify: `shpat_${'0a1b2c3d'.repeat(4)}`,
  atlassian: `ATATT3xFfGF0${'aB3dE5gH7j_'.repeat(6)}`,
  digitalOcean: `dop_v1_${'0a1b2c3d'.repeat(8)}`,
  doppler: `dp.st.prd.${'aB3dE5gH7j'.repeat(4)}`.replace('prd.', ''),
  postman: `PMAK-${'0a1b2c3d'.repeat(3)}-${'0a1b2c3d'.repeat(4)}9f`,
  databricks: `dapi${'0a1b2c3d'.repeat(4)}`,
  figma: `figd_${'aB3dE5gH7j'.repeat(4)}`,
  sentry: `sntrys_${'eyJpYXQiOjE3MDAw'.repeat(3)}`,
  grafana: `glsa_${'aB3dE5gH7j'.repeat(4)}`,
  newRelic: `NRAK-${'A1B2C3D4E5F6G7H8J9K0L1M2N3P'}`,
  pulumi: `pul-${'0a1b2c3d4e'.repeat(4)}`,
  terraform: `aB3dE5gH7jK9mN.atlasv1.${'aB3dE5gH7j'.repeat(6)}`,
  googleOauth: `ya29.${'a0AfB_byC1d2E3'.repeat(4)}`,
  supabase: `sbp_${'0a1b2c3d4e'.repeat(4)}`,
  netlify: `nfp_${'aB3dE5gH7j'.repeat(4)}`,
  dockerHub: `dckr_pat_${'aB3dE5gH7j'.repeat(3)}`,
  langSmith: `lsv2_pt_${'0a1b2c3d'.repeat(4)}_${'0a1b2c3d4e'}`,
  pinecone: `pcsk_${'aB3dE5gH7j_'.repeat(5)}`,
  stripeWebhook: `whsec_${'aB3dE5gH7j'.repeat(3)}`,
  sendGrid: `SG.${'aB3dE5gH7j_'.repeat(2)}.${'aB3dE5gH7j-'.repeat(3)}aB3dE5gH7j`,
  cerebras: `csk-${'a1b2c3d4e5'.repeat(5)}`,
  firecrawl: `fc-${'0a1b2c3d'.repeat(4)}`,
  e2b: `e2b_${'0a1b2c3d4e'.repeat(4)}`,
  notion: `ntn_${'aB3dE5gH7j'.repeat(5)}`,
  mapbox: `sk.eyJ1IjoibWUiLCJhIjoiY2x${'xyz'}.${'aB3dE5gH7j'.repeat(2)}`,
};

describe('credentialRuleOf: names', () => {
  it.each([
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'BRAVE_API_KEY',
    'MYAPIKEY',
    'X_APIKEY_2',
    'apiKey',
    'openai_api_key',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_SECURITY_TOKEN',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_SHARED_CREDENTIALS_FILE',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'AZURE_CLIENT_SECRET',
    'AZURE_STORAGE_CONNECTION_STRING',
    'ARM_ACCESS_KEY',
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'GITHUB_PAT',
    'githubToken',
    'NPM_TOKEN',
    'NODE_AUTH_TOKEN',
    'npm_config__auth',
    'npm_config__authToken',
    'YARN_NPM_AUTH_TOKEN',
    'HF_TOKEN',
    'HUGGING_FACE_HUB_TOKEN',
    'CI_JOB_TOKEN',
    'VAULT_TOKEN',
    'MY_SECRET',
    'CLIENT_SECRET_2',
    'clientSecret',
    'PGPASSWORD',
    'DB_PASSWORD',
    'MYSQL_PWD',
    'SMTP_PASS',
    'SSH_PASSPHRASE',
    'DB_PASSWD',
    'SSHPASS',
    'LDAP_BIND_PW',
    'ROOT_PW',
    'ADMIN_PASSCODE',
    'MNEMONIC',
    'WALLET_MNEMONIC',
    'DEPLOYER_MNEMONIC',
    'SEED_PHRASE',
    'RECOVERY_PHRASE',
    'DOCKER_CREDS',
    'SESSION_COOKIE',
    'SLACK_WEBHOOK_URL',
    'HTTP_AUTHORIZATION',
    'BASIC_AUTH',
    'STRIPE_KEY',
    'PRIVATE_KEY',
    'SSH_PRIVATE_KEY',
    'ENCRYPTION_KEYS',
    'DATABASE_CONN_STR',
    'SENTRY_DSN',
    'NEXT_PUBLIC_SENTRY_DSN',
    'DATABASE_DSN',
    'JWT',
    'SUPABASE_JWT',
    'BEARER',
    'API_BEARER',
    'BW_SESSION',
    'OP_SESSION_my',
    'OP_SESSION_team_acme',
    'ATUIN_SESSION',
    'AZURE_STORAGE_SAS',
    'STORAGE_SAS_URL',
    'OTEL_EXPORTER_OTLP_HEADERS',
    'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    'ANTHROPIC_CUSTOM_HEADERS',
    'NETRC',
    'NPMRC',
    'PYPIRC',
    'DOCKERCONFIGJSON',
    'DOCKER_CONFIG_JSON',
    'KUBECONFIG_DATA',
    'KUBE_CONFIG',
    'ANDROID_KEYSTORE_B64',
    'KEYSTORE',
    'CERTIFICATE_P12',
    'P12_BASE64',
    'SIGNING_PFX',
    'GPG_PRIVATE',
    'GCP_SERVICE_ACCOUNT',
    'FIREBASE_SERVICE_ACCOUNT_JSON',
    'SERVICE_ACCOUNT_B64',
    'SPACESHIP_2FA',
    'TOTP',
    'WEBHOOK_HMAC',
    'RECOVERY_CODES',
    'BACKUP_CODES',
    // Numbered: a second key while the first is rotated.
    'OPENAI_API_KEY2',
    'API_KEY1',
    'ACCESS_KEY2',
    'MASTER_KEY2',
    'ENCRYPTION_KEYS2',
    'GITHUB_TOKEN2',
    'TOKEN1',
    'TOKEN1_FOR_CI',
    'githubToken2',
    'GITHUB_PAT2',
    'SMTP_PASS2',
    // Lists of tokens, salts, peppers, pre-shared keys.
    'NPM_TOKENS',
    'GITHUB_TOKENS',
    'botTokens',
    'AUTH_SALT',
    'SECURE_AUTH_SALT',
    'HASHIDS_SALT',
    'PEPPER',
    'WIFI_PSK',
    'WG_PSK_1',
    'SNMP_COMMUNITY',
    'SNMP_RO_COMMUNITY',
    'AUTH_HEADER',
  ])('withholds %s by its name', (name) => {
    expect(credentialRuleOf(name, 'x')).toBeDefined();
  });

  it.each([
    'PATH',
    'HOME',
    'PWD',
    'OLDPWD',
    'SHELL',
    'TERM',
    'USER',
    'LANG',
    'LC_ALL',
    'TMPDIR',
    'TOKENIZERS_PARALLELISM',
    'MAX_TOKENS',
    'OPENAI_MAX_TOKENS',
    'TIKTOKEN_CACHE_DIR',
    'KEYTIMEOUT',
    'XKB_DEFAULT_KEYMAP',
    'GNOME_KEYRING_CONTROL',
    'SSH_AUTH_SOCK',
    'GIT_ASKPASS',
    'SSH_ASKPASS',
    'SUDO_ASKPASS',
    'XAUTHORITY',
    'OAUTH_CLIENT_ID',
    'OPENAI_BASE_URL',
    'AWS_REGION',
    'AWS_PROFILE',
    'NODE_OPTIONS',
    'PASSTHROUGH_MODE',
    'PATCH_LEVEL',
    'SECURITYSESSIONID',
    'JWTLIKE_EXPIRY_SECONDS',
    'DSNLESS_MODE',
    'BEARERS_COUNT',
    'DESKTOP_SESSION',
    'XDG_SESSION_TYPE',
    'XDG_SESSION_ID',
    'DBUS_SESSION_BUS_ADDRESS',
    'GDMSESSION',
    'SAS_HOME',
    'PWDEBUG',
    'PW_TEST_HTML_REPORT_OPEN',
    'NO_PROXY_BYPASS',
    'RANDOM_SEED',
    'PYTHONHASHSEED',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'HEADERSIZE',
    'DOCKER_CONFIG',
    'KUBECONFIG',
    'NPM_CONFIG_USERCONFIG',
    'PRIVATE_REGISTRY_URL',
    'GOOGLE_SERVICE_ACCOUNT_EMAIL',
    'KUBERNETES_SERVICE_HOST',
    'MAX_TOKENS2',
    'MAX_NEW_TOKENS',
    'CLAUDE_CODE_MAX_OUTPUT_TOKENS',
    'MAX_THINKING_TOKENS',
    'THINKING_BUDGET_TOKENS',
    'HF_SPECIAL_TOKENS',
    'SALT_MASTER',
    'SALTSTACK_VERSION',
    'KEYBOARD2_LAYOUT',
    'PATH2',
    'PASSTHROUGH2',
  ])('keeps %s', (name) => {
    expect(credentialRuleOf(name, '/usr/bin:/bin')).toBeUndefined();
  });
});

describe('credentialRuleOf: values under innocent names', () => {
  it.each(Object.entries(fake))('withholds a %s key', (_kind, key) => {
    expect(isCredentialVariable('SOME_SETTING', key)).toBe(true);
    // Inside a longer value too (an option string, a list).
    expect(isCredentialVariable('SOME_SETTING', `--flag=${key} --other`)).toBe(true);
  });

  it.each([
    'postgres://user:hunter2@db.example.com:5432/app',
    'redis://:hunter2@localhost:6379/0',
    'https://x-access-token:abc@github.com/org/repo.git',
    'mongodb+srv://admin:p%40ss@cluster0.example.net/db',
    'http://proxyuser:proxypass@proxy:3128',
    'Server=tcp:example.database.windows.net;Database=app;User ID=me;Password=hunter2;',
    'DefaultEndpointsProtocol=https;AccountName=me;AccountKey=abc123==;EndpointSuffix=core.windows.net',
    `Bearer ${'abcdef0123456789'}`,
    'https://hooks.slack.com/services/T000/B000/XXXXXXXX',
    'https://discord.com/api/webhooks/123/abc',
    '{"auths":{"registry.example.com":{"auth":"dXNlcjpodW50ZXIyaHVudGVyMg=="}}}',
    '{ "auths": { "ghcr.io": { "identitytoken": "eyJhbGciOi.abc" } } }',
    'jdbc:mysql://db:3306/app?user=root&password=Sup3rS3cretPw',
    'jdbc:postgresql://db/app?user=app&password=hunter22&ssl=true',
    'sv=2022-11-02&ss=b&sp=r&se=2026-12-01&sig=AbCdEf0123456789%2BXyZ%3D',
    'https://bucket.s3.amazonaws.com/f?X-Amz-Credential=x&X-Amz-Signature=0a1b2c3d4e5f',
    'https://api.example.com/v1?api_key=0123456789abcdef',
    'wss://stream.example.com/socket?token=abc123def456',
    'AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzXzEyMzQ1Njc4OTBhYmNk',
    "'http.https://github.com/.extraheader'='AUTHORIZATION: bearer abcdefABCDEF0123456789'",
    'Authorization=Basic%20dXNlcjpwYXNzd29yZDEyMzQ1Njc4',
    '{"authorization": "abcdefABCDEF0123456789"}',
  ])('withholds %s', (value) => {
    expect(isCredentialVariable('DATABASE_URL_LIKE', value)).toBe(true);
  });

  it.each([
    '/usr/local/bin:/usr/bin:/bin:/home/me/.local/bin',
    '/opt/sk-learn-environment-python/bin',
    'https://example.com:8443/path@version',
    'ssh://git@github.com:22/org/repo.git',
    'git@github.com:org/repo.git',
    'https://registry.npmjs.org/',
    'http://proxy.internal:3128',
    'en_US.UTF-8',
    'xterm-256color',
    'true',
    'disk-sk-0123',
    'task-force-skipping-steps-in-the-build',
    'unix:path=/run/user/1000/bus',
    '--max-old-space-size=4096',
    'AKIAshort',
    '{"auths":{}}',
    '{"credsStore":"desktop"}',
    'https://example.com/search?q=tokens&page=2',
    'https://example.com/?key=ab',
    'https://example.com/docs?section=password-reset',
  ])('keeps the value %s', (value) => {
    expect(isCredentialVariable('SOME_SETTING', value)).toBe(false);
  });
});

describe('credentialFreeEnvironment', () => {
  const env = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/me',
    OPENAI_API_KEY: fake.openai,
    MY_SECRET: 'hunter2-hunter2',
    INNOCENT: fake.githubClassic,
    TOKENIZERS_PARALLELISM: 'false',
    UNSET: undefined,
  };

  it('keeps the ordinary variables and withholds the credentials', () => {
    expect(credentialFreeEnvironment(env)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/me',
      TOKENIZERS_PARALLELISM: 'false',
    });
    expect(withheldVariableNames(env)).toEqual(['INNOCENT', 'MY_SECRET', 'OPENAI_API_KEY']);
  });

  it('passes the names in `pass`, exactly as named', () => {
    const result = credentialFreeEnvironment(env, { pass: ['MY_SECRET', 'openai_api_key'] });
    expect(result.MY_SECRET).toBe('hunter2-hunter2');
    expect(result.OPENAI_API_KEY).toBeUndefined();
    expect(withheldVariableNames(env, { pass: ['MY_SECRET'] })).toEqual([
      'INNOCENT',
      'OPENAI_API_KEY',
    ]);
  });

  it('does not change its input', () => {
    const copy = { ...env };
    credentialFreeEnvironment(env);
    expect(env).toEqual(copy);
  });
});

describe('credentialRedactor', () => {
  it('replaces every value of a credential variable, passed or not, with its name', () => {
    const redact = credentialRedactor({
      OPENAI_API_KEY: fake.openai,
      MY_SECRET: 'hunter2-hunter2',
    });
    expect(redact(`key ${fake.openai} and ${fake.openai}; hunter2-hunter2.`)).toBe(
      'key [redacted:OPENAI_API_KEY] and [redacted:OPENAI_API_KEY]; [redacted:MY_SECRET].',
    );
  });

  it('replaces the JSON-escaped form of a value', () => {
    const value = 'pa"ss\\word-1234';
    const redact = credentialRedactor({ DB_PASSWORD: value });
    const json = JSON.stringify({ text: `it is ${value}` });
    expect(redact(json)).toBe(JSON.stringify({ text: 'it is [redacted:DB_PASSWORD]' }));
  });

  it('leaves short values, plain paths and ordinary variables alone', () => {
    const redact = credentialRedactor({
      SHORT_TOKEN: 'abc',
      GOOGLE_APPLICATION_CREDENTIALS: '/home/me/gcp.json',
      HOME: '/home/me/work-area',
      LANG: 'en_US.UTF-8',
    });
    const text = 'abc /home/me/gcp.json /home/me/work-area en_US.UTF-8';
    expect(redact(text)).toBe(text);
  });

  it("replaces a URL's password and credential query values where they appear without the URL", () => {
    const redact = credentialRedactor({
      OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1?api-version=2024-10-21&key=Gw7kP2qLx9Vb4Zt',
      DATABASE_URL: 'postgres://app:pw%2Fsecret99@db.internal:5432/orders',
    });
    // What servers and drivers quote: the path and query they were sent, a decoded password.
    expect(
      redact('HTTP 404: no route /v1/chat/completions?api-version=2024-10-21&key=Gw7kP2qLx9Vb4Zt'),
    ).toBe(
      'HTTP 404: no route /v1/chat/completions?api-version=2024-10-21&key=[redacted:OPENAI_BASE_URL]',
    );
    expect(redact('login failed for "app" with "pw/secret99" at db.internal:5432/orders')).toBe(
      'login failed for "app" with "[redacted:DATABASE_URL]" at db.internal:5432/orders',
    );
    expect(redact('{"password":"pw%2Fsecret99"}')).toBe('{"password":"[redacted:DATABASE_URL]"}');
  });

  it("leaves a URL's word-only password alone outside the URL (a dev database's postgres:postgres)", () => {
    const redact = credentialRedactor({
      DATABASE_URL: 'postgres://postgres:postgres@localhost:5432/app',
    });
    expect(redact('psql -U postgres; postgres://postgres:postgres@localhost:5432/app')).toBe(
      'psql -U postgres; [redacted:DATABASE_URL]',
    );
  });

  it('replaces a URL credential shown in encoded forms at the tool boundary', () => {
    const redact = credentialRedactor(
      { ANTHROPIC_BASE_URL: 'https://gw.example/anthropic?token=Gw7kP2qLx9Vb4Zt' },
      { forms: 'encoded' },
    );
    expect(redact('the query was ?token=Gw7kP2qLx9Vb4Zt')).toBe(
      'the query was ?token=[redacted:ANTHROPIC_BASE_URL]',
    );
  });

  it('replaces a longer value whole when it contains a shorter one', () => {
    const redact = credentialRedactor({ A_TOKEN: 'token-12345', B_TOKEN: 'token-12345-and-more' });
    expect(redact('token-12345-and-more token-12345')).toBe(
      '[redacted:B_TOKEN] [redacted:A_TOKEN]',
    );
  });
});
