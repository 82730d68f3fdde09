/**
 * Regular expressions of core that run on text others write (an MCP server's tool descriptions,
 * a provider's error, a project's configured commands), each against the input that made it
 * backtrack for seconds to hours on JavaScript's engine, on the thread the loop needs. A test
 * here that hangs is the failure; each also checks the expression still does its job.
 */
import { describe, expect, it } from 'vitest';
import { isContextOverflowText } from './context-overflow.js';
import { credentialRuleOf } from './credential-environment.js';
import { resolvePathPattern } from './path-rules.js';
import type { AnyAgentTool } from './tool.js';
import { searchTerms, ToolSearchIndex, toolSummary } from './tool-search-index.js';

const tool = (name: string, description: string): AnyAgentTool => ({
  name,
  label: name,
  description,
  parameters: { type: 'object', properties: {} },
  execute: async () => ({ content: [] }),
});

describe('tool search on hostile descriptions', () => {
  it('a summary strips tags, not a run of unclosed <', () => {
    expect(toolSummary(`${'<'.repeat(300_000)}`)).toBe(`${'<'.repeat(159)}…`);
    expect(toolSummary('<b>Lists</b> the <i>branches</i>. More.')).toBe('Lists the branches.');
  });

  it('words split at capitals in a run of 300,000 capitals', () => {
    expect(searchTerms(`${'A'.repeat(300_000)}\u0000AAa`).at(-1)).toBe('aa');
    expect(searchTerms('HTMLParser getHTTPResponse')).toEqual(
      searchTerms('HTML Parser get HTTP Response'),
    );
  });

  it('the index and its embedding text take the hostile descriptions of a server', () => {
    const embedded: string[] = [];
    const index = new ToolSearchIndex(
      [
        tool('tags', `Lists things. ${'<'.repeat(200_000)}`),
        tool('methods', `Lists things ${'(PUT '.repeat(60_000)}`),
        tool('path', `Lists things. GET /${'{'.repeat(200_000)}`),
        tool('camel', `Lists things ${'A'.repeat(200_000)}`),
        tool('plain', 'Lists things (GET /calendars/{calendarId}/events). <b>Done</b>.'),
      ],
      {
        embeddings: {
          embed: (text) => {
            embedded.push(text);
            return new Float32Array([1]);
          },
        },
      },
    );
    expect(index.search('lists things', 10).map((match) => match.name)).toHaveLength(5);
    expect(embedded).toContain('plain Lists things. calendars events');
  });
});

describe('context overflow on a long error text', () => {
  it('finds Gemini\'s wording, and is quick on "input token count" repeated', () => {
    expect(isContextOverflowText('input token count '.repeat(200_000))).toBe(false);
    expect(
      isContextOverflowText(
        'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
      ),
    ).toBe(true);
  });
});

describe('credential value rules on a long word', () => {
  it('a URL with a password: cubic on letters, "://" and ":"s before', () => {
    const word = `${'A'.repeat(3000)}://${':\u0000'.repeat(3000)}:A://:+@`;
    expect(credentialRuleOf('', word)?.id).toBe('url-password');
    expect(credentialRuleOf('', `${'A'.repeat(3000)}://${':\u0000'.repeat(3000)}`)).toBe(undefined);
    for (const found of [
      'postgres://user:pass@host',
      'redis://:secret@host',
      'x 1http://u:p:q@h',
      'a.b+c-d://u:p@h',
    ])
      expect(credentialRuleOf('', found)?.id).toBe('url-password');
    for (const kept of ['https://host/a:b@c', 'http://user@host', 'mailto:a:b@c', '1234://u:p@h'])
      expect(credentialRuleOf('', kept)).toBe(undefined);
  });

  it('a JWT, among 50,000 "eyJ" that begin none', () => {
    expect(credentialRuleOf('', 'eyJ--------'.repeat(50_000))).toBe(undefined);
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl';
    expect(credentialRuleOf('', jwt)?.id).toBe('jwt');
    expect(credentialRuleOf('', `token=${jwt}`)?.id).toBe('jwt');
  });
});

describe('path rules on a root of many slashes', () => {
  it('drops the trailing slashes of the root', () => {
    const root = `/${'/'.repeat(300_000)}x/`;
    expect(resolvePathPattern('a', root)).toMatchObject({ ok: true });
    expect(resolvePathPattern('a', '/work//')).toEqual({ ok: true, pattern: '/work/a' });
  });
});
