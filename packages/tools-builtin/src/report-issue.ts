/**
 * `report_issue`: drafts a bug report or feature request about the agent itself. Nothing is sent:
 * the draft comes back as text, goes to `onDraft` (an app may show it, save it or open it), and,
 * when a GitHub repository is configured, as a link to GitHub's new-issue page with the draft
 * filled in — the user reads it and submits it themselves. Kiro's `report_issue`/`gh_issue`
 * `{ title, expected_behavior?, actual_behavior?, steps_to_reproduce? }` is this tool's own shape.
 */
import { AgentError, type DefinedTool, defineTool } from '@agent/core';
import * as z from 'zod';

/** An issue as drafted. */
export interface IssueDraft {
  title: string;
  /** The Markdown body: the sections given, then the host's context. */
  body: string;
  /** GitHub's new-issue page with the draft filled in, when `repository` is set. */
  url?: string | undefined;
}

/** Options of {@link createReportIssueTool}. */
export interface ReportIssueToolOptions {
  /** `owner/name` of the GitHub repository issues are for; without it, no link is made. */
  repository?: string;
  /**
   * Facts the host adds to every draft (version, model, OS…), as `label: value` lines; read at
   * each call. Keep secrets out: the draft is meant to be published.
   */
  context?: () => Readonly<Record<string, string>>;
  /** Receives each draft (to show, save or open it); errors it throws are ignored. */
  onDraft?: (draft: IssueDraft) => void;
}

/** Arguments of report_issue. */
export interface ReportIssueArgs {
  title: string;
  expected_behavior?: string | undefined;
  actual_behavior?: string | undefined;
  steps_to_reproduce?: string | undefined;
}

/** GitHub keeps a new-issue link working up to about 8,000 characters; the body is cut to fit. */
const maxUrlChars = 8000;

/** The Markdown body of a draft. */
function issueBody(args: ReportIssueArgs, context: Readonly<Record<string, string>>): string {
  const sections: string[] = [];
  const add = (heading: string, text: string | undefined) => {
    if (text !== undefined && text.trim() !== '') sections.push(`## ${heading}\n\n${text.trim()}`);
  };
  add('Expected behaviour', args.expected_behavior);
  add('Actual behaviour', args.actual_behavior);
  add('Steps to reproduce', args.steps_to_reproduce);
  const facts = Object.entries(context).map(([label, value]) => `- ${label}: ${value}`);
  if (facts.length > 0) sections.push(`## Environment\n\n${facts.join('\n')}`);
  return sections.length === 0 ? '(no details given)' : sections.join('\n\n');
}

/** GitHub's new-issue link for a draft, the body shortened (with a marker) to keep it usable. */
function newIssueUrl(repository: string, title: string, body: string): string {
  const base = `https://github.com/${repository}/issues/new`;
  const link = (text: string) => `${base}?${new URLSearchParams({ title, body: text }).toString()}`;
  let url = link(body);
  let keep = body.length;
  while (url.length > maxUrlChars && keep > 0) {
    keep = Math.floor(keep * 0.8);
    url = link(`${body.slice(0, keep)}\n\n…(shortened: paste the full draft)`);
  }
  return url;
}

const repositoryPattern = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** The report_issue tool; see the module comment. */
export function createReportIssueTool(
  options: ReportIssueToolOptions = {},
): DefinedTool<ReportIssueArgs, IssueDraft> {
  const { repository } = options;
  if (repository !== undefined && !repositoryPattern.test(repository))
    throw new AgentError(`report_issue: repository must be "owner/name", got "${repository}"`);
  const optionalText = (what: string) => z.string().optional().describe(what);
  return defineTool({
    name: 'report_issue',
    label: 'Report issue',
    description:
      'Drafts a bug report or feature request about this assistant (not about the user’s code) ' +
      'when the user asks to report one. Nothing is sent: the user gets the draft' +
      `${repository === undefined ? '' : ' and a link to file it on GitHub'} and submits it themselves.`,
    // Kiro's tool is `gh_issue` in its code and `report_issue` on the wire.
    aliases: ['gh_issue'],
    input: z.object({
      title: z.string().trim().min(1).describe('The title of the issue.'),
      expected_behavior: optionalText('What should have happened.'),
      actual_behavior: optionalText('What happened instead.'),
      steps_to_reproduce: optionalText('The requests or steps that led to it.'),
    }),
    source: 'builtin',
    // It only writes text; publishing is the user's own step.
    policy: { permission: 'read-only' },
    execute: async (args) => {
      const body = issueBody(args, options.context?.() ?? {});
      const url = repository === undefined ? undefined : newIssueUrl(repository, args.title, body);
      const draft: IssueDraft = { title: args.title, body, url };
      try {
        options.onDraft?.(draft);
      } catch {
        // A display callback must not fail the call.
      }
      const text = [
        'Issue drafted (not submitted). Show it to the user.',
        url === undefined ? undefined : `File it here: ${url}`,
        '',
        `# ${args.title}`,
        '',
        body,
      ].filter((line) => line !== undefined);
      return { content: [{ type: 'text', text: text.join('\n') }], details: draft };
    },
  });
}
