// A failed run in one line, with what to fix when the cause is a common slip: a refused key (or
// another vendor's), a proxy, an idle timeout, a base URL that does not reach the API.
import type { ProviderError } from '@agent/core';
import { apiKeyVariablesOf } from '../config/api-keys.js';
import { withoutHtmlPage } from './html-body.js';

/** A failed run in one line: the provider, the HTTP status when there was one, and the message. */
export function describeFailure(error: string | undefined, providerError?: ProviderError): string {
  if (providerError === undefined) return error ?? 'the run failed';
  const status = providerError.statusCode === undefined ? '' : ` HTTP ${providerError.statusCode}`;
  const who = providerError.provider ?? 'provider';
  // The provider's own framing (its name, the status) is said once, here.
  const said = providerError.detail ?? providerError.message;
  return `${who}${status}: ${withoutHtmlPage(said)}${refusedKeyHint(providerError)}${proxyHint(providerError)}${idleHint(providerError)}${addressHint(providerError)}`;
}

/**
 * A base URL that did not reach the API: a name that does not resolve (offline, or a typo), a port
 * nothing listens on, a 404 that names no model (the URL without Ollama's or vLLM's `/v1`), or
 * `https://` to a server that speaks plain HTTP. Empty otherwise.
 */
function addressHint(providerError: ProviderError): string {
  const variables = baseUrlVariablesOf(providerError.provider ?? '');
  const where = [
    ...(providerError.provider === 'openai-compatible' ? ['--base-url'] : []),
    ...variables.filter((name) => (process.env[name] ?? '') !== ''),
  ];
  const unresolved = /\b(ENOTFOUND|EAI_AGAIN)\b/.test(providerError.message);
  if (where.length === 0)
    return unresolved ? " — the server's name did not resolve: is this machine offline?" : '';
  if (unresolved)
    return ` — the server's name did not resolve: a typo in the base URL (${where.join(' or ')}), or no network`;
  if (/\bECONNREFUSED\b/.test(providerError.message))
    return ` — nothing listens there: is the server running, on that port (${where.join(' or ')})?`;
  if (providerError.statusCode === 404 && !/model/i.test(providerError.message))
    return ` — nothing answers at that path: check the base URL (${where.join(' or ')}); ${
      providerError.provider === 'anthropic'
        ? "Anthropic's stops before /v1 (https://api.anthropic.com)"
        : 'OpenAI-compatible servers usually take it up to /v1 (http://localhost:11434/v1 for Ollama)'
    }`;
  if (
    /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|wrong version number|packet length too long/i.test(
      providerError.message,
    )
  )
    return ` — the server answered in plain HTTP: use http://, not https://, in the base URL (${where.join(' or ')})`;
  return '';
}

const vendorNames = {
  anthropic: 'an Anthropic',
  openai: 'an OpenAI',
  google: 'a Google',
} as const;

function providerOfVariable(variable: string): 'anthropic' | 'openai' | 'google' {
  return variable.startsWith('ANTHROPIC')
    ? 'anthropic'
    : variable.startsWith('OPENAI')
      ? 'openai'
      : 'google';
}

/** The vendor whose keys start as `key` does: `sk-ant-` Anthropic, `sk-proj-`… OpenAI, `AIza` Google. */
function keyVendor(key: string): 'anthropic' | 'openai' | 'google' | undefined {
  if (key.startsWith('sk-ant-')) return 'anthropic';
  // OpenAI's project, service-account and admin keys, or a legacy one (48 characters after sk-).
  if (/^sk-(proj|svcacct|admin)-|^sk-[A-Za-z0-9]{40,}$/.test(key)) return 'openai';
  if (key.startsWith('AIza')) return 'google';
  return undefined;
}

/** The base URL variables of a provider, by the id its errors carry. */
function baseUrlVariablesOf(provider: string): readonly string[] {
  if (provider === 'openai' || provider === 'openai-compatible') return ['OPENAI_BASE_URL'];
  if (provider === 'anthropic') return ['ANTHROPIC_BASE_URL'];
  if (provider === 'google') return ['GOOGLE_GEMINI_BASE_URL'];
  return [];
}

/**
 * Behind a proxy, Node's fetch goes around HTTPS_PROXY unless NODE_USE_ENV_PROXY=1 (Node ≥ 22.21,
 * 24): a failed connection with a proxy variable set says so. Empty otherwise.
 */
function proxyHint(providerError: ProviderError): string {
  if (providerError.statusCode !== undefined) return '';
  if (
    !/connect|fetch failed|network|socket|ENOTFOUND|ECONNREFUSED|ETIMEDOUT/i.test(
      providerError.message,
    )
  )
    return '';
  const proxy = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].find(
    (name) => (process.env[name] ?? '') !== '',
  );
  if (proxy === undefined || process.env.NODE_USE_ENV_PROXY === '1') return '';
  return ` — ${proxy} is set, but Node's fetch uses it only with NODE_USE_ENV_PROXY=1 (Node ≥ 22.21): export NODE_USE_ENV_PROXY=1`;
}

/**
 * A response closed for sending nothing (core's idle timeout, its retries sharing one deadline):
 * the variable that sets the wait, for a model that thinks long before its first byte.
 */
function idleHint(providerError: ProviderError): string {
  if (!/\(idle timeout\)/.test(providerError.message)) return '';
  return ' — AGENT_STREAM_IDLE_TIMEOUT=<seconds> sets how long a response may send nothing';
}

/**
 * What to do when the provider refused the key (401/403, or Gemini's 400 "API key not valid"):
 * the variable it came from. Empty for any other failure.
 */
function refusedKeyHint(providerError: ProviderError): string {
  const refused =
    providerError.statusCode === 401 ||
    providerError.statusCode === 403 ||
    /api[ _-]?key[^.]*\b(not valid|invalid)\b|API_KEY_INVALID/i.test(providerError.message);
  if (!refused) return '';
  const variables = apiKeyVariablesOf(providerError.provider ?? '');
  const set = variables.filter((name) => (process.env[name] ?? '') !== '');
  if (set.length === 0 && variables.length > 0)
    return ` — set ${variables.join(' or ')} (agent --help names each provider's variable)`;
  if (set.length === 0) return ' — check the API key the server expects';
  // A key read with $(cat key.txt) or pasted with a space: the usual cause, said precisely.
  const padded = set.find((name) => {
    const value = process.env[name] ?? '';
    return value !== value.trim();
  });
  if (padded !== undefined)
    return ` — the key in ${padded} has a space or a line break around it: set it without (export ${padded}="$(tr -d '[:space:]' < key.txt)")`;
  const quoted = set.find((name) => /^(['"]).*\1$/s.test(process.env[name] ?? ''));
  if (quoted !== undefined)
    return ` — the key in ${quoted} has quotes around it, kept as part of the key (a .env file read by a tool that keeps them): set it without`;
  // Another vendor's key, by the prefix each vendor gives its keys (never the key itself).
  for (const name of set) {
    const vendor = keyVendor(process.env[name] ?? '');
    if (vendor !== undefined && !apiKeyVariablesOf(vendor).includes(name))
      return ` — the key in ${name} looks like ${vendorNames[vendor]} key: put it in ${apiKeyVariablesOf(vendor)[0]}, and ${vendorNames[providerOfVariable(name)]} key in ${name}`;
  }
  return ` — the key in ${set.join(', ')} was refused: check it (a stray space, an expired or revoked key, another provider's key)`;
}
