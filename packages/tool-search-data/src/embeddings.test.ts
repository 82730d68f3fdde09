import { Agent, type AnyAgentTool } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { toolSearchAssociations, toolSearchEmbeddings, WordEmbeddings } from './index.js';

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, at) => sum + value * (b[at] as number), 0);
}

function embed(text: string): Float32Array {
  const vector = toolSearchEmbeddings().embed(text);
  if (vector === undefined) throw new Error(`no embedding for "${text}"`);
  return vector;
}

describe('toolSearchEmbeddings', () => {
  it('decodes the shipped vectors once and shares them', () => {
    const embeddings = toolSearchEmbeddings();
    expect(embeddings.size).toBeGreaterThan(20_000);
    expect(embeddings.dimensions).toBe(100);
    expect(toolSearchEmbeddings()).toBe(embeddings);
  });

  it('splits words at capitals in linear time (a description of 300,000 capitals took minutes)', () => {
    expect(Array.from(embed(`${'A'.repeat(300_000)}\u0000AAa`))).toEqual(Array.from(embed('AAa')));
    expect(Array.from(embed('HTTPPayment'))).toEqual(Array.from(embed('HTTP Payment')));
    expect(Array.from(embed('refundPayment'))).toEqual(Array.from(embed('refund payment')));
  });

  it("scales each word by the caller's word weight (a word weighed 0 counts for nothing)", () => {
    const weighed = toolSearchEmbeddings().embed('refund the charge', (word) =>
      word === 'charge' ? 0 : 1,
    );
    expect(Array.from(weighed ?? [])).toEqual(Array.from(embed('refund')));
    const halved = toolSearchEmbeddings().embed('refund charge', (word) =>
      word === 'charge' ? 0.5 : 1,
    );
    expect(cosine(halved ?? new Float32Array(100), embed('refund'))).toBeGreaterThan(
      cosine(embed('refund charge'), embed('refund')),
    );
  });

  it('gives texts of unit length, and nothing for text without a known word', () => {
    const vector = embed('Refund a payment');
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    expect(toolSearchEmbeddings().embed('the of and 42 zzqxv')).toBeUndefined();
    expect(toolSearchEmbeddings().embed('')).toBeUndefined();
  });

  it.each([
    ['give the customer their money back', 'Refund a payment', 'Schedule a meeting'],
    // What fine-tuning on API documents taught: the action of the request, not only its topic.
    ['remove the webhook', 'Delete a webhook', 'Create a webhook'],
    ['terminate the job', 'Cancel a job', 'Create a job'],
    ['my picture', 'Set the profile photo', 'Delete a repository'],
    ['CreateInvoice', 'bill a customer', 'play a song'],
  ])('puts "%s" nearer to "%s" than to "%s"', (query, near, far) => {
    expect(cosine(embed(query), embed(near))).toBeGreaterThan(cosine(embed(query), embed(far)));
  });

  it('refuses data whose parts do not line up, naming the counts', () => {
    expect(
      () =>
        new WordEmbeddings({
          dimensions: 2,
          words: 'a\nb',
          vectors: 'AQI=',
          scales: '',
          weights: '',
        }),
    ).toThrow(/2 words but 1 vectors, 0 scales, 0 weights/);
  });

  it('is used by tool_search when passed to the agent', async () => {
    const tool = (name: string, description: string): AnyAgentTool => ({
      name,
      description,
      parameters: { type: 'object', properties: {} },
      defer: true,
      execute: async () => ({ content: [{ type: 'text', text: name }] }),
    });
    const tools = [
      tool('payments_list', 'List the payments of the account.'),
      tool('payments_schedule', 'Schedule a payment for a later date.'),
      tool('payments_refund', 'Refund a payment.'),
    ];
    const provider = createScriptedProvider([
      {
        toolCalls: [
          {
            name: 'tool_search',
            arguments: { query: 'the customer wants the payment reimbursed', limit: 1 },
          },
        ],
      },
      { text: 'done' },
    ]);
    const embedded: string[] = [];
    const embeddings = {
      embed: (text: string) => {
        embedded.push(text);
        return toolSearchEmbeddings().embed(text);
      },
    };
    const agent = new Agent({
      provider,
      model: 'test',
      tools,
      toolSearch: { associations: toolSearchAssociations(), embeddings },
    });
    const state = await agent.run('go').result;
    const result = state.messages.find((message) => message.role === 'toolResult');
    expect(result?.role === 'toolResult' && result.details).toMatchObject({
      loaded: ['payments_refund'],
    });
    expect(embedded).toContain('the customer wants the payment reimbursed');
    expect(embedded).toContain('payments_refund Refund a payment.');
  });
});
