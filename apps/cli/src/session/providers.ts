import { type Provider, type RetryAttempt, type RetryOptions, terminalSafe } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { apiKeyVariables } from '../config/api-keys.js';
import type { CliOptions, ProviderName } from '../config/args.js';
import { baseUrlProblem } from '../config/base-url.js';
import { CliError } from '../config/cli-error.js';
import { foreignVariableNotes, lookAlikeKeyNotes } from '../config/foreign-variables.js';
import { isModelAlias, readModelName } from '../config/model-names.js';
import { parseJson, readRegularFile } from '../config/project-file.js';
import { closestWord } from '../config/suggest.js';
import { withoutHtmlPage } from '../ui/html-body.js';
import { canRedraw, writeErr, writeNotice } from '../ui/output.js';
import { guardLoopbackBaseUrl } from './loopback-base-url.js';

/** Default model per provider. */
export const defaultModels: Record<ProviderName, string> = {
  anthropic: 'claude-sonnet-4-6',
  openai: 'gpt-5-mini',
  google: 'gemini-2.5-flash',
};

/** The provider and model a session uses. */
export interface ModelChoice {
  provider: Provider;
  model: string;
  /** For the banner: `anthropic claude-sonnet-4-6`, `scripted (steps.json)`. */
  label: string;
}

/**
 * `AGENT_STREAM_IDLE_TIMEOUT` (seconds): how long a provider's response may send nothing — its
 * headers, then each chunk — before the request is closed and retried (before the first token) or
 * ends in an error [300, the providers' default].
 */
function streamOptions(env: Record<string, string | undefined>): { retry: RetryOptions } {
  // Each retry is said as it is waited for: a 429 with `retry-after: 20` held a run for 40 s
  // with nothing on the screen.
  const retry: RetryOptions = {
    // Over a spinner's line on a terminal (the spinner draws again below it).
    onRetry: (attempt) =>
      writeErr(
        `${canRedraw(process.stderr) ? '\r\u001b[K' : ''}${terminalSafe(retryLine(attempt))}\n`,
      ),
  };
  const raw = env.AGENT_STREAM_IDLE_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return { retry };
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliError(
      `AGENT_STREAM_IDLE_TIMEOUT takes seconds (a number > 0, e.g. 120), got "${raw}"`,
    );
  return { retry: { ...retry, idleTimeoutMs: seconds * 1000 } };
}

/** `openai HTTP 429: Rate limit reached — retrying in 20 s (retry 1)`, on one line. */
function retryLine({ attempt, delayMs, error }: RetryAttempt): string {
  const status = error.statusCode === undefined ? '' : ` HTTP ${error.statusCode}`;
  const message = withoutHtmlPage(error.detail ?? error.message)
    .replace(/\s+/g, ' ')
    .trim();
  const said = message.length > 160 ? `${message.slice(0, 159)}…` : message;
  const wait = delayMs < 1000 ? `${delayMs} ms` : `${Math.round(delayMs / 1000)} s`;
  return `${error.provider ?? 'provider'}${status}: ${said} — retrying in ${wait} (retry ${attempt})`;
}

/** Picks the provider: `--scripted`, else `--provider`, else `--base-url` (OpenAI), else the first with an API key. */
export async function chooseProvider(
  options: Pick<CliOptions, 'provider' | 'model' | 'baseUrl' | 'scripted'>,
  env: Record<string, string | undefined> = process.env,
): Promise<ModelChoice> {
  if (options.scripted !== undefined) {
    const { steps, delayMs, contextWindow } = await loadScript(options.scripted);
    const provider = createScriptedProvider(steps, {
      // Nothing here reads them: a deep copy of every request made a long scripted session
      // quadratic in memory (1,260 turns of 40 kB reads: out of memory at 4 GB).
      recordRequests: false,
      ...(delayMs === undefined ? {} : { delayMs }),
      ...(contextWindow === undefined ? {} : { contextWindow }),
    });
    return {
      provider,
      model: options.model ?? 'scripted',
      label: `scripted (${options.scripted})`,
    };
  }
  // A key of spaces only (`export KEY=" "`, a line of a .env file left blank) is no key: it was
  // sent, and the provider's 401 blamed the key's "space around it".
  const hasKey = (name: ProviderName) =>
    apiKeyVariables[name].some((variable) => (env[variable] ?? '').trim() !== '');
  const blank = Object.values(apiKeyVariables)
    .flat()
    .filter((variable) => (env[variable] ?? '') !== '' && (env[variable] ?? '').trim() === '');
  const blankNote =
    blank.length === 0
      ? ''
      : `\n(${blank.join(', ')} ${blank.length === 1 ? 'is' : 'are'} set, but blank: only spaces or line breaks.)`;
  const openAiServer = (env.OPENAI_BASE_URL ?? '') !== '';
  // A model named as other tools name it (`anthropic/claude-…`, `sonnet`): read as meant, said.
  if (options.model !== undefined) {
    const anthropicIds = isModelAlias(options.model)
      ? (await import('@agent/providers-anthropic')).anthropicModels.map((entry) => entry.id)
      : [];
    const named = readModelName(options.model, {
      provider: options.provider,
      ownServer: options.baseUrl !== undefined || openAiServer,
      anthropicIds,
    });
    if (named.note !== undefined) writeNotice(`note: ${named.note}`);
    options = {
      ...options,
      model: named.model,
      ...(named.provider === undefined ? {} : { provider: named.provider }),
    };
  }
  const name: ProviderName | undefined =
    options.provider ??
    (options.baseUrl !== undefined
      ? 'openai'
      : (providerOfModel(options.model, hasKey, openAiServer) ??
        (['anthropic', 'openai', 'google'] as const).find(hasKey) ??
        // OPENAI_BASE_URL alone (Ollama, LM Studio… set up as their docs say): the server of
        // yours that needs no key, as --base-url is.
        (openAiServer ? 'openai' : undefined)));
  // Another tool's name for a key or base URL (OPENAI_API_BASE, ANTHROPIC_AUTH_TOKEN…), named.
  const foreignNotes = (provider?: ProviderName) =>
    foreignVariableNotes(
      { ...env, ...(options.baseUrl === undefined ? {} : { OPENAI_BASE_URL: options.baseUrl }) },
      provider,
    );
  const foreignNote = (provider?: ProviderName) =>
    [...foreignNotes(provider), ...lookAlikeKeyNotes(env, provider)]
      .map((note) => `\n(${note}.)`)
      .join('');
  if (name === undefined) {
    throw new CliError(
      'No model provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY ' +
        '(or pass --base-url for a local OpenAI-compatible server).\n' +
        'To try the agent without a key, run: agent demo' +
        blankNote +
        foreignNote(),
    );
  }
  // A provider chosen by name (flag or settings) without its key fails now, before the session
  // starts, not with an HTTP 401 after the first prompt. An OpenAI-compatible server (a base URL)
  // may need no key.
  const ownServer = name === 'openai' && (options.baseUrl !== undefined || openAiServer);
  if (!hasKey(name) && !ownServer)
    throw new CliError(missingKeyMessage(name) + blankNote + foreignNote(name));
  // With a key, what still matters is a base URL under another name: the run would go to the
  // vendor's own server instead of the one the user set up.
  for (const note of foreignNotes(name)) writeNotice(`note: ${note}`);
  for (const variable of baseUrlVariables[name]) {
    const value = env[variable];
    if (value === undefined || value === '' || (name === 'openai' && options.baseUrl !== undefined))
      continue;
    const problem = baseUrlProblem(value, name);
    if (problem !== undefined) throw new CliError(`${variable} ${problem}`);
  }
  const guardedFetch = await guardLoopbackBaseUrl(
    name === 'openai' && options.baseUrl !== undefined
      ? { source: '--base-url', value: options.baseUrl }
      : baseUrlVariables[name]
          .filter((variable) => (env[variable] ?? '') !== '')
          .map((variable) => ({ source: variable, value: env[variable] ?? '' }))[0],
  );
  const model = options.model ?? defaultModels[name];
  const stream = streamOptions(env);
  // Each provider loads its vendor SDK: import only the one in use (startup time).
  switch (name) {
    case 'anthropic': {
      const { createAnthropicProvider, anthropicModels, findAnthropicModel } = await import(
        '@agent/providers-anthropic'
      );
      noteNearModel(options.model, anthropicModels, findAnthropicModel, name);
      const provider = createAnthropicProvider({
        ...stream,
        ...(guardedFetch === undefined ? {} : { fetch: guardedFetch }),
      });
      return { provider, model, label: `anthropic ${model}` };
    }
    case 'openai': {
      const { createOpenAIProvider, listOpenAIModels, getOpenAIModel } = await import(
        '@agent/providers-openai'
      );
      // A server of the user's serves models of its own names.
      if (!ownServer) noteNearModel(options.model, listOpenAIModels(), getOpenAIModel, name);
      const provider = createOpenAIProvider({
        ...stream,
        ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
        ...(guardedFetch === undefined ? {} : { clientOptions: { fetch: guardedFetch } }),
      });
      return { provider, model, label: `${provider.id} ${model}` };
    }
    case 'google': {
      const { createGeminiProvider, geminiModels, findGeminiModel } = await import(
        '@agent/providers-google'
      );
      noteNearModel(options.model, geminiModels, findGeminiModel, name);
      const provider = createGeminiProvider({
        ...stream,
        ...(guardedFetch === undefined ? {} : { fetch: guardedFetch }),
        // A schema keyword Gemini does not take (minLength…) is still checked on the arguments,
        // so the user has nothing to do about it: one line per tool keyword on every start was
        // noise. Any other warning is shown.
        onWarning: (message) => {
          if (!message.endsWith('(still enforced when validating arguments)'))
            writeNotice(`warning: ${message}`);
        },
      });
      return { provider, model, label: `google ${model}` };
    }
    default: {
      const exhaustive: never = name;
      throw new CliError(`Unknown provider ${String(exhaustive)}`);
    }
  }
}

/** The variables each vendor's SDK reads its base URL from. */
const baseUrlVariables: Readonly<Record<ProviderName, readonly string[]>> = {
  anthropic: ['ANTHROPIC_BASE_URL'],
  openai: ['OPENAI_BASE_URL'],
  google: ['GOOGLE_GEMINI_BASE_URL'],
};

/**
 * A model named by hand that the vendor's table does not hold, a letter or two from one it does
 * (`claude-sonet-4-6`): said at start with the one meant — a new model the table does not know
 * yet is still sent as given. Before, the typo came back as a 404 after the first prompt.
 */
function noteNearModel(
  model: string | undefined,
  known: readonly { id: string }[],
  find: (id: string) => unknown,
  provider: ProviderName,
): void {
  // The vendor's own lookup: dated and versioned ids (`…-20250929`) are known by their prefix.
  if (model === undefined || find(model) !== undefined) return;
  const meant = closestWord(
    model,
    known.map((entry) => entry.id),
  );
  if (meant !== undefined)
    writeNotice(
      `note: ${provider} has no model "${model}" that agent knows; did you mean ${meant}? (sent as given; --model ${meant} for that one)`,
    );
}

/** Model names each vendor gives its models (`claude-…`, `gpt-…`, `o3`, `gemini-…`). */
const vendorModels: readonly [ProviderName, RegExp][] = [
  ['anthropic', /^claude/i],
  ['openai', /^(gpt-|chatgpt|codex|o\d(\b|-))/i],
  ['google', /^(models\/)?(gemini|gemma)/i],
];

/**
 * The provider a model name belongs to, when no provider was named: `--model gpt-5` with keys
 * for both Anthropic and OpenAI goes to OpenAI, not to the first key found (which answered
 * "model not found" after the first prompt). Its key missing is an error naming the variable —
 * unless `OPENAI_BASE_URL` names a server of the user's, which may serve any model (a proxy).
 * `undefined` for a name no vendor pattern knows: the first provider with a key takes it.
 */
function providerOfModel(
  model: string | undefined,
  hasKey: (name: ProviderName) => boolean,
  openAiServer: boolean,
): ProviderName | undefined {
  const vendor = vendorModels.find(([, pattern]) => pattern.test(model ?? ''))?.[0];
  if (vendor === undefined || hasKey(vendor)) return vendor;
  if (openAiServer) return 'openai';
  throw new CliError(
    missingKeyMessage(
      vendor,
      `The model ${model} is ${vendorNames[vendor]}'s (--provider <name> sends it elsewhere), and needs an API key`,
    ),
  );
}

const vendorNames: Record<ProviderName, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  google: 'Google',
};

/** Where each provider's key is made, for the message that asks for one. */
const keyPages: Record<ProviderName, string> = {
  anthropic: 'https://console.anthropic.com/settings/keys',
  openai: 'https://platform.openai.com/api-keys',
  google: 'https://aistudio.google.com/apikey',
};

function missingKeyMessage(
  name: ProviderName,
  lead = `The provider ${name} needs an API key`,
): string {
  const [variable = '', ...others] = apiKeyVariables[name];
  const also = others.length === 0 ? '' : ` (or ${others.join(', ')})`;
  return (
    `${lead}: set ${variable}${also} — export ${variable}=… (make one at ${keyPages[name]}).\n` +
    `To try the agent without a key, run: agent demo`
  );
}

/** Largest `--scripted` file read (bytes). */
const maximumScriptBytes = 64 * 1024 * 1024;

/**
 * Reads a script: a JSON array of assistant turns (`{ text?, thinking?, toolCalls?: [{ name,
 * arguments }], error?, delayMs? }`) or `{ "steps": [...], "delayMs": n, "contextWindow": n }`
 * (the window the scripted model reports, in tokens: compaction then works as with a real one;
 * a summary call takes the next step of the script).
 */
export async function loadScript(path: string): Promise<{
  steps: ScriptedTurn[];
  delayMs: number | undefined;
  contextWindow: number | undefined;
}> {
  let data: unknown;
  try {
    const text = await readRegularFile(path, maximumScriptBytes, 'a script');
    if (text === undefined) throw new Error('no such file');
    data = parseJson(text);
  } catch (error) {
    throw new CliError(
      `Cannot read the script ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const container = Array.isArray(data) ? { steps: data } : data;
  if (container === null || typeof container !== 'object') {
    throw new CliError(`The script ${path} must be a JSON array of turns or { "steps": [...] }`);
  }
  const { steps, delayMs, contextWindow } = container as {
    steps?: unknown;
    delayMs?: unknown;
    contextWindow?: unknown;
  };
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new CliError(`The script ${path} has no steps`);
  }
  if (container !== null && !Array.isArray(data)) {
    const known = ['steps', 'delayMs', 'contextWindow'];
    const unknown = Object.keys(container).filter((key) => !known.includes(key));
    if (unknown.length > 0) {
      throw new CliError(
        `The script ${path}: unknown field ${unknown.map((key) => `"${key}"`).join(', ')} (expected "steps", "delayMs", "contextWindow")`,
      );
    }
  }
  for (const [index, step] of steps.entries()) checkStep(path, step, index);
  if (delayMs !== undefined && typeof delayMs !== 'number') {
    throw new CliError(`The script ${path}: "delayMs" must be a number`);
  }
  if (contextWindow !== undefined && !(typeof contextWindow === 'number' && contextWindow > 0)) {
    throw new CliError(`The script ${path}: "contextWindow" must be a number of tokens > 0`);
  }
  return { steps: steps as ScriptedTurn[], delayMs, contextWindow };
}

const turnFields = ['text', 'thinking', 'toolCalls', 'stopReason', 'usage', 'error', 'delayMs'];
const callFields = ['id', 'name', 'arguments'];

/** One scripted turn: an object of known fields (a typo such as "txt" must not pass silently). */
function checkStep(path: string, step: unknown, index: number): void {
  const where = `The script ${path}: step ${index + 1}`;
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    throw new CliError(`${where} is not an object`);
  }
  const unknown = Object.keys(step).filter((key) => !turnFields.includes(key));
  if (unknown.length > 0) {
    throw new CliError(
      `${where} has unknown field ${unknown.map((key) => `"${key}"`).join(', ')} (expected ${turnFields.join(', ')})`,
    );
  }
  const { toolCalls, text } = step as { toolCalls?: unknown; text?: unknown };
  if (text !== undefined && typeof text !== 'string')
    throw new CliError(`${where}: "text" must be a string`);
  if (toolCalls === undefined) return;
  const calls = Array.isArray(toolCalls) ? toolCalls : [toolCalls];
  const bad = calls.find(
    (call) =>
      call === null ||
      typeof call !== 'object' ||
      typeof (call as { name?: unknown }).name !== 'string' ||
      Object.keys(call).some((key) => !callFields.includes(key)),
  );
  if (!Array.isArray(toolCalls) || bad !== undefined) {
    throw new CliError(
      `${where} has toolCalls that are not [{ "name", "arguments", "id"? }]: ${JSON.stringify(bad ?? toolCalls)}`,
    );
  }
}
