/**
 * Which environment variables hold credentials, so that processes a tool starts (a shell, a REPL,
 * an MCP or language server, a hook) do not receive the user's API keys: a prompt-injected model
 * only has to print its environment to leak them. Runtime-neutral: the environment is a plain record.
 *
 * Two kinds of rule, both deliberately broad (a variable withheld by mistake costs a `pass` entry;
 * a key passed by mistake is in the model's context and the session file):
 * - a name rule looks at the name, upper-cased and split into words at every character that is not
 *   a letter or digit (`OPENAI_API_KEY` → `OPENAI`, `API`, `KEY`; `githubToken` is one word,
 *   `GITHUBTOKEN`). Words are matched, not substrings, where a substring would catch ordinary
 *   settings: `TOKENIZERS_PARALLELISM`, `MAX_TOKENS`, `KEYTIMEOUT`, `SSH_AUTH_SOCK`, `PWD` and
 *   `GIT_ASKPASS` are kept; `SECRET` and `PASSWORD` are matched anywhere.
 * - a value rule looks for a known key format anywhere in the value (`sk-…`, `ghp_…`,
 *   `github_pat_…`, `xoxb-…`, `AKIA…`, a PEM private key, a JWT, a URL with a password…), so a key
 *   under an innocent name (`MY_VAR=sk-proj-…`) is withheld too. Formats need their full length
 *   and, for the short prefixes, a digit, so that paths and words that merely start alike pass.
 * - last, a value that looks like a random secret whatever its name (`credential-random-value.ts`):
 *   a key of a format no rule knows.
 */

import { credentialFormsSource } from './credential-forms.js';
import { redactCutFragments } from './credential-fragments.js';
import { credentialPiecesRedactor } from './credential-pieces.js';
import { looksLikeRandomSecret, randomValueRule } from './credential-random-value.js';
import { urlCredentialParts } from './credential-url.js';
import {
  type GitConfigPair,
  gitConfigPairs,
  gitConfigVariables,
  isGitConfigPairName,
} from './git-config-environment.js';

/** One rule of {@link credentialNameRules} or {@link credentialValueRules}. */
export interface CredentialRule {
  /** Short stable identifier, e.g. `api-key`, `github-token`. */
  readonly id: string;
  /** What the rule catches, for documentation and messages. */
  readonly description: string;
  /** Tested against the upper-cased name (name rules) or the raw value (value rules). */
  readonly pattern: RegExp;
}

// A word boundary in an upper-cased name: the start, the end, or a character that is no letter or digit.
const start = '(?:^|[^A-Z0-9])';
const end = '(?=$|[^A-Z0-9])';
// Digits right after a credential word number it (a second key while the first is rotated:
// OPENAI_API_KEY2, GITHUB_TOKEN2); a name so numbered is still the key's.
const numbered = '[0-9]*';

/** Name rules, tested against the variable's name upper-cased. */
export const credentialNameRules: readonly CredentialRule[] = [
  {
    id: 'key',
    description:
      'a word ending in KEY or KEYS, numbered or not: *_API_KEY, *APIKEY*, AWS_ACCESS_KEY_ID, PRIVATE_KEY, ENCRYPTION_KEY, OPENAI_API_KEY2',
    pattern: new RegExp(`${start}[A-Z0-9]*KEYS?${numbered}${end}|APIKEY`),
  },
  {
    id: 'token',
    description:
      'a word ending in TOKEN, numbered or not: *_TOKEN, GH_TOKEN, NODE_AUTH_TOKEN, AWS_SESSION_TOKEN, githubToken, GITHUB_TOKEN2 (not TOKENIZERS_*, MAX_TOKENS)',
    pattern: new RegExp(`${start}[A-Z0-9]*TOKEN${numbered}${end}`),
  },
  {
    id: 'secret',
    description: 'SECRET anywhere: *SECRET*, AZURE_CLIENT_SECRET, AWS_SECRET_ACCESS_KEY',
    pattern: /SECRET/,
  },
  {
    id: 'password',
    description:
      "PASSWORD, PASSWD, PASSPHRASE or PASSCODE anywhere, the word PASS (DB_PASS, SMTP_PASS2) or SSHPASS (sshpass -e's), PWD after another word (MYSQL_PWD; not PWD, OLDPWD), or a last word PW (LDAP_BIND_PW; not Playwright's PW_TEST_*)",
    pattern: new RegExp(
      `PASSWORD|PASSWD|PASSPHRASE|PASSCODE|${start}(?:SSH)?PASS${numbered}${end}|[^A-Z0-9]PWD${end}|[^A-Z0-9]PW$`,
    ),
  },
  {
    id: 'recovery-phrase',
    description:
      "a wallet's recovery words: MNEMONIC anywhere (Hardhat's and Foundry's .env), SEED_PHRASE, RECOVERY_PHRASE",
    pattern: /MNEMONIC|(?:SEED|RECOVERY)[^A-Z0-9]*PHRASE/,
  },
  {
    id: 'credentials',
    description:
      'CREDENTIAL anywhere, or the word CRED/CREDS: GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE',
    pattern: new RegExp(`CREDENTIAL|${start}CREDS?${end}`),
  },
  {
    id: 'personal-access-token',
    description: 'the word PAT, numbered or not: GITHUB_PAT, AZURE_DEVOPS_PAT, DEPLOY_PAT1',
    pattern: new RegExp(`${start}PAT${numbered}${end}`),
  },
  {
    id: 'auth',
    description:
      'a last word ending in AUTH, or AUTHORIZATION anywhere: npm_config__auth, BASIC_AUTH (not SSH_AUTH_SOCK)',
    pattern: new RegExp(`${start}[A-Z0-9]*AUTH$|AUTHORIZATION`),
  },
  {
    id: 'connection-string',
    description: 'a connection string: AZURE_STORAGE_CONNECTION_STRING, *_CONN_STR',
    pattern: /CONNECTION[^A-Z0-9]*STRING|CONN[^A-Z0-9]*STR(?:ING)?(?=$|[^A-Z0-9])/,
  },
  {
    id: 'cookie',
    description: 'COOKIE anywhere: SESSION_COOKIE',
    pattern: /COOKIE/,
  },
  {
    id: 'webhook',
    description: 'WEBHOOK anywhere (a webhook URL is its own credential): SLACK_WEBHOOK_URL',
    pattern: /WEBHOOK/,
  },
  {
    id: 'dsn',
    description:
      'the word DSN (a DSN carries its key or password): SENTRY_DSN, DATABASE_DSN, NEXT_PUBLIC_SENTRY_DSN',
    pattern: new RegExp(`${start}DSN${end}`),
  },
  {
    id: 'session-key',
    description:
      "a password manager's or shell tool's session key: BW_SESSION (Bitwarden), OP_SESSION_<account> (1Password), ATUIN_SESSION — a last word SESSION (not DESKTOP_SESSION)",
    pattern: new RegExp(`${start}SESSION$|^OP_SESSION${end}`),
  },
  {
    id: 'shared-access-signature',
    description: 'an Azure shared access signature: AZURE_STORAGE_SAS, STORAGE_SAS_URL',
    pattern: new RegExp(`${start}SAS(?:[^A-Z0-9]*(?:URL|URI))?$`),
  },
  {
    id: 'jwt-bearer',
    description: 'the word JWT or BEARER: JWT, SUPABASE_JWT, BEARER, API_BEARER',
    pattern: new RegExp(`${start}(?:JWT|BEARER)${end}`),
  },
  {
    id: 'header-list',
    description:
      'a last word HEADERS (header name=value pairs, which carry keys): OTEL_EXPORTER_OTLP_HEADERS (x-honeycomb-team=…, Authorization=Basic …), OTEL_EXPORTER_OTLP_TRACES_HEADERS, ANTHROPIC_CUSTOM_HEADERS',
    pattern: new RegExp(`${start}HEADERS$`),
  },
  {
    id: 'credential-file-content',
    description:
      "a credential file's content or signing material given as a variable (CI secrets): NETRC, NPMRC, PYPIRC, DOCKERCONFIGJSON, KUBECONFIG_DATA, KUBE_CONFIG, a KEYSTORE, the words P12/PFX/JKS, a last word PRIVATE (GPG_PRIVATE), a SERVICE_ACCOUNT (GCP_SERVICE_ACCOUNT, FIREBASE_SERVICE_ACCOUNT_JSON; not …_EMAIL) — not DOCKER_CONFIG or KUBECONFIG, which are paths",
    pattern: new RegExp(
      `${start}(?:NETRC|NPMRC|NPM_RC|PYPIRC|DOCKERCONFIGJSON|DOCKER_CONFIG_JSON|KUBECONFIG_DATA|KUBE_CONFIG|P12|PFX|JKS)${end}|KEYSTORE|${start}PRIVATE$|SERVICE[^A-Z0-9]*ACCOUNT(?:[^A-Z0-9]*(?:JSON|B64|BASE64))?$`,
    ),
  },
  {
    id: 'token-list',
    description:
      'a last word ending in TOKENS, numbered or not, in a name that counts nothing: NPM_TOKENS, GITHUB_TOKENS, BOT_TOKENS (not MAX_TOKENS, MAX_NEW_TOKENS, THINKING_BUDGET_TOKENS, OUTPUT_TOKENS)',
    pattern: new RegExp(
      `^(?!.*${start}(?:MAX|MIN|NUM|LIMIT|BUDGET|COUNT|TOTAL|THINKING|REASONING|CONTEXT|INPUT|OUTPUT|PROMPT|COMPLETION|RESERVED|SPECIAL|STOP)${end}).*${start}[A-Z0-9]*TOKENS${numbered}$`,
    ),
  },
  {
    id: 'salt-psk',
    description:
      "what a hash or a link is keyed with: a last word SALT or PEPPER (WordPress's AUTH_SALT, HASHIDS_SALT, PEPPER), the word PSK (WIFI_PSK, WG_PSK), an SNMP community, an AUTH_HEADER",
    pattern: new RegExp(
      `${start}(?:SALT|PEPPER)${numbered}$|${start}PSK${numbered}${end}|SNMP.*COMMUNITY|${start}AUTH[^A-Z0-9]*HEADER$`,
    ),
  },
  {
    id: 'one-time-codes',
    description:
      'what makes one-time codes or signs messages: the words TOTP, 2FA, HMAC (SPACESHIP_2FA, WEBHOOK_HMAC), RECOVERY_CODES, BACKUP_CODES',
    pattern: new RegExp(
      `${start}(?:TOTP|2FA|HMAC)${end}|(?:RECOVERY|BACKUP)[^A-Z0-9]*CODES?${end}`,
    ),
  },
];

// A known prefix must start the value or follow a character that cannot be part of a key.
const before = '(?<![A-Za-z0-9_-])';
// The rest of a key: at least `min` key characters, one of them a digit (words and paths rarely have one).
const keyBody = (min: number, characters = 'A-Za-z0-9_-') =>
  `(?=[${characters.replace('0-9', '')}]*[0-9])[${characters}]{${min},}`;

/** Value rules, tested against the variable's value as it is. */
export const credentialValueRules: readonly CredentialRule[] = [
  {
    id: 'url-password',
    description: 'a URL with a password: postgres://user:pass@host, redis://:pass@host',
    // Linear: the scheme is read from the start of its run (first letter found without
    // backtracking), the user part ends at the first `:`. `[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@]*:`
    // matched the same and took cubic time on a long word of `:`s and letters (minutes on 100 kB).
    pattern: /(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@/,
  },
  {
    id: 'url-query-credential',
    description:
      'a URL or query with a credential parameter: jdbc:…?user=x&password=…, ?api_key=…, an Azure SAS or presigned URL (sig=, X-Amz-Signature=)',
    // Linear: a fixed delimiter, one of a list of names, `=`, then a run that stops at the next.
    pattern:
      /[?&;](?:password|passwd|pwd|pass|secret|client_secret|token|access_token|refresh_token|auth|api_?key|apikey|key|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature)=[^&#\s]{6,}/i,
  },
  {
    id: 'openai-anthropic-style',
    description: 'sk-… keys (OpenAI, Anthropic sk-ant-…, OpenRouter sk-or-…, DeepSeek)',
    pattern: new RegExp(`${before}sk-${keyBody(32)}`),
  },
  {
    id: 'github-token',
    description: 'GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_, github_pat_',
    pattern: new RegExp(`${before}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`),
  },
  {
    id: 'gitlab-token',
    description: 'GitLab tokens: glpat-, glrt-, gldt-, glptt-',
    pattern: new RegExp(`${before}gl(?:pat|rt|dt|ptt)-[A-Za-z0-9_-]{20,}`),
  },
  {
    id: 'slack-token',
    description: 'Slack tokens: xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xapp-',
    pattern: new RegExp(`${before}(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}`),
  },
  {
    id: 'aws-access-key-id',
    description: 'AWS access key ids: AKIA…, ASIA… (16 more capitals or digits)',
    pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/,
  },
  {
    id: 'google-api-key',
    description: 'Google API keys: AIza…',
    pattern: new RegExp(`${before}AIza[A-Za-z0-9_-]{35}`),
  },
  {
    id: 'stripe-key',
    description: 'Stripe keys: sk_live_, sk_test_, rk_live_, rk_test_',
    pattern: new RegExp(`${before}[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`),
  },
  {
    id: 'registry-token',
    description: 'registry and hub tokens: npm_…, pypi-AgE…, hf_… (Hugging Face), r8_… (Replicate)',
    pattern: new RegExp(
      `${before}(?:npm_[A-Za-z0-9]{36,}|pypi-AgE[A-Za-z0-9_-]{50,}|hf_${keyBody(30, 'A-Za-z0-9')}|r8_${keyBody(30, 'A-Za-z0-9')})`,
    ),
  },
  {
    id: 'model-provider-key',
    description:
      'other model providers: gsk_ (Groq), xai- (xAI), pplx- (Perplexity), tvly- (Tavily)',
    pattern: new RegExp(
      `${before}(?:gsk_|xai-|pplx-|tvly-(?:dev-|prod-)?)${keyBody(20, 'A-Za-z0-9')}`,
    ),
  },
  {
    id: 'service-token',
    description:
      'service tokens by their prefix: Linear lin_api_, Shopify shpat_/shpss_/shpca_/shppa_, Atlassian ATATT, DigitalOcean dop_v1_, Doppler dp.st., Postman PMAK-, Databricks dapi, Figma figd_, Sentry sntrys_/sntryu_, Grafana glsa_, New Relic NRAK-, Pulumi pul-, Terraform Cloud .atlasv1., Google OAuth ya29., Supabase sbp_/sb_secret_, Netlify nfp_, Docker Hub dckr_pat_, LangSmith lsv2_, Pinecone pcsk_, Stripe webhook whsec_, SendGrid SG., Cerebras csk-, Firecrawl fc-, E2B e2b_, Notion ntn_, Mapbox sk.eyJ',
    pattern: new RegExp(
      `${before}(?:${[
        `lin_api_${keyBody(32, 'A-Za-z0-9')}`,
        'shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}',
        'ATATT3[A-Za-z0-9_=-]{50,}',
        'do[opr]_v1_[a-f0-9]{64}',
        `dp\\.(?:st|ct|sa|scim|audit)\\.${keyBody(30)}`,
        'PMAK-[a-f0-9]{24}-[a-f0-9]{34}',
        'dapi[a-f0-9]{32}',
        `figd_${keyBody(30)}`,
        `sntry[su]_${keyBody(40, 'A-Za-z0-9_=+/-')}`,
        `glsa_${keyBody(32)}`,
        'NRAK-[A-Z0-9]{27}',
        'pul-[a-f0-9]{40}',
        `[A-Za-z0-9]{14}\\.atlasv1\\.${keyBody(40)}`,
        `ya29\\.${keyBody(30)}`,
        'sbp_[a-f0-9]{40}',
        `sb_secret_${keyBody(20)}`,
        `nfp_${keyBody(30, 'A-Za-z0-9')}`,
        `dckr_pat_${keyBody(20)}`,
        'lsv2_(?:pt|sk)_[a-f0-9]{32}',
        `pcsk_${keyBody(40)}`,
        `whsec_${keyBody(24, 'A-Za-z0-9+/=')}`,
        'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}',
        `csk-${keyBody(40, 'a-z0-9')}`,
        'fc-[a-f0-9]{32}',
        'e2b_[a-f0-9]{40}',
        `ntn_${keyBody(40, 'A-Za-z0-9')}`,
        'sk\\.eyJ[A-Za-z0-9_-]{20,}\\.[A-Za-z0-9_-]{10,}',
      ].join('|')})`,
    ),
  },
  {
    id: 'vault-token',
    description: 'HashiCorp Vault tokens: hvs., hvb., hvr.',
    pattern: new RegExp(`${before}hv[sbr]\\.[A-Za-z0-9_-]{20,}`),
  },
  {
    id: 'private-key',
    description: 'a PEM private key (-----BEGIN … PRIVATE KEY-----) or an age secret key',
    pattern: /-----BEGIN[A-Z ]* PRIVATE KEY-----|AGE-SECRET-KEY-1[0-9A-Z]{20,}/,
  },
  {
    id: 'jwt',
    description: 'a JSON Web Token (eyJ….eyJ….…)',
    // At the start of a run of token characters: from every `eyJ` inside one the run was rescanned.
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./,
  },
  {
    id: 'authorization-header',
    description: 'an Authorization header value: Bearer …, Basic …',
    pattern: /(?:^|[^A-Za-z0-9])(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/,
  },
  {
    id: 'authorization-field',
    description:
      'an Authorization header written as a field in any case: AUTHORIZATION: basic … (a git http.extraheader in GIT_CONFIG_VALUE_n), Authorization=Basic%20… (OTLP headers)',
    // Linear: a fixed word, then bounded separators and one run.
    pattern:
      /authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token)(?:\s+|%20))?[A-Za-z0-9._~+/=-]{16,}/i,
  },
  {
    id: 'connection-string-password',
    description: 'a connection string with a password or key: …;Password=…, AccountKey=…',
    pattern:
      /(?:^|;)\s*(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*[^;\s]/i,
  },
  {
    id: 'docker-config-auth',
    description:
      'a Docker config with credentials: {"auths": {"registry": {"auth": "<base64 user:password>"}}} (GitLab CI\'s DOCKER_AUTH_CONFIG)',
    pattern: /"(?:auth|identitytoken|registrytoken)"\s*:\s*"[A-Za-z0-9+/_.=-]{8,}"/,
  },
  {
    id: 'webhook-url',
    description:
      'a URL whose path is its key: Slack, Discord, Zapier, IFTTT and Teams webhooks, a Telegram bot, a generated id after /hooks/ or /webhook/ (n8n, Mattermost)',
    // Linear: each alternative starts at a fixed word; the generic one reads a scheme from the start
    // of its run (from every letter of a long word it took quadratic time), a host, at most nine
    // path segments (none can hold a `/`), then one segment.
    pattern:
      /hooks\.slack\.com\/(?:services|workflows|triggers)\/|discord(?:app)?\.com\/api\/webhooks\/|hooks\.zapier\.com\/hooks\/catch\/|maker\.ifttt\.com\/(?:trigger|use)\/|webhook\.office\.com\/webhookb2\/|api\.telegram\.org\/(?:file\/)?bot\d+:|(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#]+\/(?:[^\s/?#]+\/){0,8}(?:hooks?|webhooks?|webhook-test)\/(?=[^/\s?#]*[0-9])(?=[^/\s?#]*[A-Za-z])[A-Za-z0-9_~.:@=+-]{16,}/i,
  },
  {
    id: 'url-path-key',
    description:
      'a URL with a path segment that can only be a random key: 20+ token characters mixing capitals, small letters and digits, or 32+ letters and digits (not a 40-digit git object id)',
    // Linear: a scheme from the start of its run, a host, at most nine segments (none holds a
    // `/`), then one whole segment read by bounded lookaheads.
    pattern:
      /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#]+(?:\/[^\s/?#]*){0,9}\/(?:(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}|(?![0-9a-f]{40}(?![A-Za-z0-9]))(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{32,})(?![^\s/?#])/,
  },
  {
    id: 'telegram-bot-token',
    description: 'a Telegram bot token: <bot id>:<35 characters>',
    pattern: /(?<![A-Za-z0-9_:-])\d{6,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/,
  },
];

/**
 * Names a name rule matches that hold no credential, kept unless a value rule matches them:
 * `TIKTOKEN_CACHE_DIR` (a cache directory of the tiktoken tokenizer), `DESKTOP_SESSION` (the
 * desktop's name, `gnome`), `KONSOLE_DBUS_SESSION` (a D-Bus object path, `/Sessions/1`).
 */
export const harmlessVariableNames: readonly string[] = [
  'TIKTOKEN_CACHE_DIR',
  'DESKTOP_SESSION',
  'KONSOLE_DBUS_SESSION',
];

/** The first rule by which `name=value` holds a credential, or undefined when none applies. */
export function credentialRuleOf(
  name: string,
  value: string | undefined,
): CredentialRule | undefined {
  if (!harmlessVariableNames.includes(name)) {
    const upper = name.toUpperCase();
    const byName = credentialNameRules.find((rule) => rule.pattern.test(upper));
    if (byName !== undefined) return byName;
  }
  if (value === undefined || value === '') return undefined;
  const byValue = credentialValueRules.find((rule) => rule.pattern.test(value));
  if (byValue !== undefined) return byValue;
  // Last, a key of no known format: a value that looks random (credential-random-value.ts).
  return looksLikeRandomSecret(name, value) ? randomValueRule : undefined;
}

/**
 * Whether `name=value` holds a credential by {@link credentialNameRules}, {@link credentialValueRules}
 * or, for a key of no known format, `randomValueRule` (a value that looks random).
 */
export function isCredentialVariable(name: string, value: string | undefined): boolean {
  return credentialRuleOf(name, value) !== undefined;
}

/** Options of {@link credentialFreeEnvironment} and {@link withheldVariableNames}. */
export interface CredentialFilterOptions {
  /** Names passed even when they hold credentials (exact, case-sensitive: a command that really needs one). */
  pass?: readonly string[];
}

/** An environment as a plain record (Node's `process.env` fits). */
export type EnvironmentRecord = Readonly<Record<string, string | undefined>>;

/**
 * A copy of `env` without the variables that hold credentials (see {@link credentialNameRules} and
 * {@link credentialValueRules}), except those named in `pass`. Undefined values are dropped. git's
 * configuration pairs (`GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>` below `GIT_CONFIG_COUNT`) are
 * judged whole, by the value: those kept are numbered again (git refuses to run with one missing).
 */
export function credentialFreeEnvironment(
  env: EnvironmentRecord,
  options: CredentialFilterOptions = {},
): Record<string, string> {
  const pass = new Set(options.pass ?? []);
  const pairs = gitConfigPairs(env);
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (pairs !== undefined && (name === 'GIT_CONFIG_COUNT' || isPairName(name, env))) continue;
    if (pass.has(name) || !isCredentialVariable(name, value)) result[name] = value;
  }
  if (pairs === undefined) return result;
  return { ...result, ...gitConfigVariables(pairs.filter((pair) => !isWithheldPair(pair, pass))) };
}

/** The names {@link credentialFreeEnvironment} leaves out of `env`, sorted. */
export function withheldVariableNames(
  env: EnvironmentRecord,
  options: CredentialFilterOptions = {},
): string[] {
  const pass = new Set(options.pass ?? []);
  const pairs = gitConfigPairs(env);
  const withheld = Object.entries(env)
    .filter(
      ([name, value]) =>
        value !== undefined &&
        !pass.has(name) &&
        !(pairs !== undefined && isPairName(name, env)) &&
        isCredentialVariable(name, value),
    )
    .map(([name]) => name);
  for (const pair of pairs ?? [])
    if (isWithheldPair(pair, pass))
      withheld.push(`GIT_CONFIG_KEY_${pair.index}`, `GIT_CONFIG_VALUE_${pair.index}`);
  return withheld.sort();
}

function isPairName(name: string, env: EnvironmentRecord): boolean {
  return isGitConfigPairName(name, Number(env.GIT_CONFIG_COUNT));
}

/** A pair whose value holds a credential, or whose key does (`url.https://<token>@host/.insteadOf`). */
function isWithheldPair(pair: GitConfigPair, pass: ReadonlySet<string>): boolean {
  if (pass.has(`GIT_CONFIG_VALUE_${pair.index}`)) return false;
  return (
    isCredentialVariable(`GIT_CONFIG_VALUE_${pair.index}`, pair.value) ||
    credentialValueRules.some((rule) => rule.pattern.test(pair.key))
  );
}

/** Options of {@link credentialRedactor}. */
export interface CredentialRedactorOptions {
  /** Shorter values are not replaced (they would match ordinary text) [8]. */
  minLength?: number;
  /**
   * `exact`: each value as it is and JSON-escaped. `encoded`: also coloured, wrapped, escaped,
   * percent-encoded, reversed, hex and base64 forms (see `credential-forms.ts`), and any stretch
   * of 12 characters or more of a value as dumps show it (`xxd`, `od -c`, `cut -c`; see
   * `credential-pieces.ts`) — for the boundary where a tool's output enters the conversation; a
   * regular expression pass per value [exact].
   */
  forms?: 'exact' | 'encoded';
}

// A value that is only a file path (GOOGLE_APPLICATION_CREDENTIALS, SSH_KEY_PATH) names where a
// secret is, it is not one; replacing it would mangle every mention of that path.
const plainPath = /^(?:~|\.{0,2})\/[\w./-]*$/;

/**
 * A function that replaces, in a text, every occurrence of the value of a variable of `env` that
 * holds a credential (passed or not) with `[redacted:NAME]` — also in its JSON-escaped form, and
 * a fragment of it where the text was cut (before or after an ellipsis, at either end), and the
 * password and credential query values of a URL in it on their own (`urlCredentialParts`) — for
 * what is written down (a saved conversation, a transcript) as a second line of defence. Values
 * shorter than `minLength`, and values that are a plain file path, are left alone.
 */
export function credentialRedactor(
  env: EnvironmentRecord,
  options: CredentialRedactorOptions = {},
): (text: string) => string {
  const replacements = credentialReplacements(env, { ...options, urlParts: true });
  const whole = redactorOf(replacements);
  // A text cut for a line or a report keeps most of a value: its fragment at the cut goes too.
  const exact =
    replacements.length === 0
      ? whole
      : (text: string) => redactCutFragments(whole(text), replacements);
  if (options.forms !== 'encoded') return exact;
  const patterns = encodedPatterns(replacements);
  // Last: what is left of a value once its whole forms are markers, shown in pieces (`xxd`).
  const pieces = credentialPiecesRedactor(replacements);
  return (text) => {
    let result = exact(text);
    for (const [pattern, marker] of patterns) result = result.replace(pattern, () => marker);
    return pieces(result);
  };
}

/** One pattern per value (its JSON-escaped twin adds nothing: escapes are among the forms). */
function encodedPatterns(
  replacements: readonly [string, string][],
): [pattern: RegExp, marker: string][] {
  const patterns: [RegExp, string][] = [];
  const seen = new Set<string>();
  for (const [value, marker] of replacements) {
    const source = credentialFormsSource(value);
    if (source === undefined || seen.has(source)) continue;
    seen.add(source);
    // A replacement function: a marker is inserted as it is (`$&` in a name means nothing).
    patterns.push([new RegExp(source, 'gi'), marker]);
  }
  return patterns;
}

/** Each credential value of `env` (and its JSON-escaped form) with its marker, longest first. */
function credentialReplacements(
  env: EnvironmentRecord,
  options: CredentialRedactorOptions & { urlParts: boolean },
): [value: string, marker: string][] {
  const minLength = options.minLength ?? 8;
  const whole: [string, string][] = [];
  // A URL's password and query keys alone too: a server quotes the path and query it was sent.
  const parts: [string, string][] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < minLength || plainPath.test(value)) continue;
    if (!isCredentialVariable(name, value)) continue;
    const marker = `[redacted:${name}]`;
    whole.push([value, marker]);
    if (!options.urlParts) continue;
    for (const part of urlCredentialParts(value))
      if (part.length >= minLength && part !== value && looksGenerated(part))
        parts.push([part, marker]);
  }
  const replacements: [string, string][] = [];
  for (const [value, marker] of [...whole, ...parts]) {
    replacements.push([value, marker]);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) replacements.push([escaped, marker]);
  }
  // Longest first: a value that contains another is replaced whole. The sort is stable, so a
  // value that is also part of another variable's URL is named after its own variable.
  return replacements.sort((a, b) => b[0].length - a[0].length);
}

/**
 * Whether a URL's password or query value is replaced on its own: only one holding both letters
 * and digits (`hunter2-99`, a key), as `credential-pieces.ts` judges a URL's runs — a dev
 * database's `postgres://postgres:postgres@…` made every "postgres" of every output a marker.
 */
function looksGenerated(part: string): boolean {
  return /[A-Za-z]/.test(part) && /[0-9]/.test(part);
}

function redactorOf(replacements: readonly [string, string][]): (text: string) => string {
  if (replacements.length === 0) return (text) => text;
  return (text) => {
    let result = text;
    for (const [value, marker] of replacements)
      if (result.includes(value)) result = result.split(value).join(marker);
    return result;
  };
}

/** A {@link credentialStreamRedactor}: feed it the pieces, then flush it at the end. */
export interface CredentialStreamRedactor {
  /** What can be shown of the text so far: redacted, a tail that may begin a value held back. */
  push(piece: string): string;
  /** The text held back (the stream ended: it was no value). */
  flush(): string;
}

/**
 * {@link credentialRedactor} for text that arrives in pieces (a model's streamed deltas): a value
 * split across two pieces is redacted all the same. Each `push` returns the text up to the
 * longest tail that could be the start of a value; that tail waits for the next piece (or
 * `flush`). Text holding no part of a value passes at once.
 */
export function credentialStreamRedactor(
  env: EnvironmentRecord,
  options: CredentialRedactorOptions = {},
): CredentialStreamRedactor {
  // Whole values only: a URL's password, complete in the text before the URL is, would be
  // replaced alone and leave the rest of the URL shown (the parts are for quoted paths and
  // queries, which come from servers, not from a model's deltas).
  const replacements = credentialReplacements(env, { ...options, urlParts: false });
  const redact = redactorOf(replacements);
  let pending = '';
  const heldBack = (text: string): number => {
    let longest = 0;
    for (const [value] of replacements)
      for (let length = Math.min(value.length - 1, text.length); length > longest; length--)
        if (text.endsWith(value.slice(0, length))) {
          longest = length;
          break;
        }
    return longest;
  };
  return {
    push(piece) {
      pending = redact(pending + piece);
      const hold = heldBack(pending);
      const shown = pending.slice(0, pending.length - hold);
      pending = pending.slice(pending.length - hold);
      return shown;
    },
    flush() {
      const rest = redact(pending);
      pending = '';
      return rest;
    },
  };
}
