import { PermissionPolicy, StaticToolExecutor } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { createExitPlanModeTool, type PlanAnswer } from './plan-mode.js';

// Kiro's planner agent ends planning with `switch_to_execution {plan}`: here that is
// exit_plan_mode, with the same approval and mode switch.
describe('switch_to_execution (Kiro) → exit_plan_mode', () => {
  const plan = '## Plan\n1. Add the --json flag to args.ts\n2. Test it';

  it('shows the plan; approved, the session leaves plan mode for the chosen mode', async () => {
    const policy = new PermissionPolicy({ mode: 'plan' });
    const shown: string[] = [];
    const tools = new StaticToolExecutor().register(
      createExitPlanModeTool({
        policy: () => policy,
        approve: async (text): Promise<PlanAnswer> => {
          shown.push(text);
          return { type: 'approved', mode: 'workspace-write' };
        },
      }),
    );
    const result = await tools.executeResult('switch_to_execution', { plan });
    expect(result).toMatchObject({ toolName: 'exit_plan_mode', isError: false });
    expect(shown).toEqual([plan]);
    expect(policy.mode).toBe('workspace-write');
  });

  it('kept planning: the mode stays plan', async () => {
    const policy = new PermissionPolicy({ mode: 'plan' });
    const tools = new StaticToolExecutor().register(
      createExitPlanModeTool({
        policy: () => policy,
        approve: async (): Promise<PlanAnswer> => ({ type: 'keep-planning' }),
      }),
    );
    expect(await tools.execute('switch_to_execution', { plan })).toMatch(/stay in plan mode/);
    expect(policy.mode).toBe('plan');
  });
});
