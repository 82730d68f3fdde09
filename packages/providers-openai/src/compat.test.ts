import { describe, expect, it } from 'vitest';
import { compatPresets, detectCompatServer, resolveCompat } from './compat.js';
import { addCost, getOpenAIModel } from './openai-models.js';
import { createOpenAIProvider } from './openai-provider.js';

describe('compat detection', () => {
  it('recognises servers by host and default port', () => {
    expect(detectCompatServer(undefined)).toBe('openai');
    expect(detectCompatServer('https://api.openai.com/v1')).toBe('openai');
    expect(detectCompatServer('http://localhost:11434/v1')).toBe('ollama');
    expect(detectCompatServer('http://127.0.0.1:1234/v1')).toBe('lm-studio');
    expect(detectCompatServer('http://localhost:8080/v1')).toBe('llama.cpp');
    expect(detectCompatServer('http://gpu-box:8000/v1')).toBe('vllm');
    expect(detectCompatServer('https://openrouter.ai/api/v1')).toBe('openrouter');
    expect(detectCompatServer('https://api.groq.com/openai/v1')).toBe('groq');
    expect(detectCompatServer('http://10.0.0.5:9999/v1')).toBe('generic');
    expect(detectCompatServer('not a url')).toBe('generic');
  });

  it('lets explicit fields override the guess', () => {
    expect(resolveCompat('http://localhost:11434/v1')).toEqual(compatPresets.ollama);
    expect(resolveCompat('http://localhost:11434/v1', { streamUsage: true })).toEqual({
      ...compatPresets.ollama,
      streamUsage: true,
    });
    expect(resolveCompat(undefined).strictTools).toBe(true);
  });

  it('reads OPENAI_API_KEY and OPENAI_BASE_URL, explicit options first', () => {
    const fromEnv = createOpenAIProvider({
      env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://localhost:11434/v1' },
    });
    expect(fromEnv.baseURL).toBe('http://localhost:11434/v1');
    expect(fromEnv.id).toBe('ollama');
    expect(fromEnv.api).toBe('chat');
    const explicit = createOpenAIProvider({
      baseURL: 'https://api.openai.com/v1',
      env: { OPENAI_BASE_URL: 'http://localhost:11434/v1' },
    });
    expect(explicit.id).toBe('openai');
    expect(explicit.api).toBe('responses');
    expect(explicit.compat.strictTools).toBe(true);
  });
});

describe('model catalogue', () => {
  it('knows context windows, dated snapshots and router prefixes', () => {
    expect(getOpenAIModel('gpt-4o')?.contextWindow).toBe(128_000);
    expect(getOpenAIModel('gpt-4o-2024-08-06')?.id).toBe('gpt-4o');
    expect(getOpenAIModel('openai/gpt-4.1-mini')?.id).toBe('gpt-4.1-mini');
    expect(getOpenAIModel('my-finetune')).toBeUndefined();
  });

  it('turns usage into cost, and leaves unknown models without one', () => {
    const usage = addCost(
      {
        input: 1_000_000,
        output: 100_000,
        cacheRead: 200_000,
        cacheWrite: 0,
        totalTokens: 1_300_000,
      },
      'gpt-4.1',
    );
    expect(usage.cost).toEqual({
      input: 2,
      output: 0.8,
      cacheRead: 0.1,
      cacheWrite: 0,
      total: 2.9,
    });
    const unknown = addCost(
      { input: 5, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 10 },
      'llama3.2',
    );
    expect(unknown.cost).toBeUndefined();
  });
});
