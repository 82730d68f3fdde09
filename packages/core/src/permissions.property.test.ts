import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  matchesSubjectPattern,
  type PermissionGrant,
  type PermissionMode,
  PermissionPolicy,
} from './permissions.js';
import type { PermissionTier } from './tool.js';

// The precedence of DESIGN §4, checked over random rule sets, modes, grants, later mode switches
// and opaque calls: deny rules and "never" grants beat everything; an opaque call or one an ask
// rule covers is never allowed without a question; an allow needs the mode or every subject covered.

const words = ['rm', 'git', 'echo', 'ls'];
const subjectArb = fc
  .tuple(fc.constantFrom(...words), fc.constantFrom('', ' x', ' -rf x', ' push', ' status'))
  .map(([name, rest]) => `${name}${rest}`);
const patternArb = fc.oneof(
  subjectArb,
  fc.constantFrom(...words).map((name) => `${name} *`),
  fc.constant('*'),
  fc.constantFrom('git push*', 'git st*'),
);
const ruleArb = fc.oneof(
  patternArb.map((pattern) => `bash(${pattern})`),
  fc.constant('bash'),
  fc.constant('other'),
);
const modeArb = fc.constantFrom<PermissionMode>(
  'default',
  'read-only',
  'workspace-write',
  'full-access',
);
const tierArb = fc.constantFrom<PermissionTier>('read-only', 'workspace-write', 'full-access');
const grantArb = fc.record({
  subject: subjectArb,
  decision: fc.constantFrom<'allow' | 'deny'>('allow', 'deny'),
});
const tiersByMode: Record<PermissionMode, readonly PermissionTier[]> = {
  default: [],
  'read-only': ['read-only'],
  'workspace-write': ['read-only', 'workspace-write'],
  'full-access': ['read-only', 'workspace-write', 'full-access'],
  plan: ['read-only'],
};

function ruleMatches(rule: string, subject: string): boolean {
  if (rule === 'bash') return true;
  if (!rule.startsWith('bash(')) return false;
  return matchesSubjectPattern(subject, rule.slice(5, -1));
}

describe('PermissionPolicy precedence (property)', () => {
  it('deny and never beat everything; opaque and ask never auto-allow; allow needs mode or cover', () => {
    fc.assert(
      fc.property(
        fc.record({
          allow: fc.array(ruleArb, { maxLength: 4 }),
          ask: fc.array(ruleArb, { maxLength: 2 }),
          deny: fc.array(ruleArb, { maxLength: 2 }),
          mode: modeArb,
          laterMode: fc.option(modeArb, { nil: undefined }),
          grants: fc.array(grantArb, { maxLength: 4 }),
          subjects: fc.array(subjectArb, { minLength: 1, maxLength: 3 }),
          tier: tierArb,
          opaque: fc.option(fc.constant('arithmetic over variables'), { nil: undefined }),
        }),
        (input) => {
          const grants: PermissionGrant[] = input.grants.map((grant) => ({
            tool: 'bash',
            subject: grant.subject,
            decision: grant.decision,
          }));
          const policy = new PermissionPolicy({
            allow: input.allow,
            ask: input.ask,
            deny: input.deny,
            mode: input.mode,
            grants,
          });
          // A mode switched after the grants were given must not override a "never".
          if (input.laterMode !== undefined) policy.setMode(input.laterMode);
          const mode = input.laterMode ?? input.mode;
          const outcome = policy.evaluate({
            toolName: 'bash',
            tier: input.tier,
            subjects: input.subjects,
            ...(input.opaque === undefined ? {} : { opaque: input.opaque }),
          });
          // Last grant per subject wins (later answers replace earlier ones).
          const grantOf = new Map(grants.map((grant) => [grant.subject, grant.decision]));
          const denied =
            input.subjects.some((subject) =>
              input.deny.some((rule) => ruleMatches(rule, subject)),
            ) || input.subjects.some((subject) => grantOf.get(subject) === 'deny');
          if (denied) {
            expect(outcome.behavior).toBe('deny');
            return;
          }
          const asked =
            input.opaque !== undefined ||
            input.subjects.some((subject) => input.ask.some((rule) => ruleMatches(rule, subject)));
          if (asked) {
            expect(outcome.behavior).toBe('ask');
            return;
          }
          const covered = input.subjects.every(
            (subject) =>
              grantOf.get(subject) === 'allow' ||
              input.allow.some((rule) => ruleMatches(rule, subject)),
          );
          const expected = tiersByMode[mode].includes(input.tier) || covered ? 'allow' : 'ask';
          expect(outcome.behavior).toBe(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('an "always" answer to an opaque call grants nothing; a "never" sticks', async () => {
    const answers = ['always', 'never'] as const;
    let index = 0;
    const policy = new PermissionPolicy({ approver: () => answers[index++] ?? 'deny' });
    const opaque = { toolName: 'bash', tier: 'full-access' as const, opaque: 'eval of a variable' };
    const first = await policy.check({ ...opaque, subjects: ['eval $x'] } as never);
    expect(first.behavior).toBe('allow');
    expect(policy.grants).toEqual([]);
    await policy.check({ ...opaque, subjects: ['eval $y'] } as never);
    expect(policy.grants).toEqual([{ tool: 'bash', subject: 'eval $y', decision: 'deny' }]);
  });
});
