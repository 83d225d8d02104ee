// The `data` of the API's success answers, as the tests read them: `call<QueuedEmail>(…)`, `admin<Account>(…)`.
// Written out by hand rather than inferred from src/schemas, so a changed response shape shows up in the tests.

// Operator API (/admin/v1/*)
export type Account = { id: string; name: string };
export type ApiKey = { id: string; key: string; scopes: string[] };
export type OtpToken = {
  id: string;
  token: string;
  analyticsSecret: string;
  allowedIps: string[];
  turnstile: { siteKey: string } | null;
  policy: OtpSendPolicy;
};
/** Where a token's sends may go. */
export type OtpSendPolicy = { domainSendsPerHour: number | null; blockDisposable: boolean; blockSubaddresses: boolean };
/** A token as the operator's PATCH and list show it. */
export type OtpTokenView = {
  id: string;
  allowedIps: string[];
  turnstile: { siteKey: string } | null;
  policy: OtpSendPolicy;
  createdAt: string;
  revokedAt: string | null;
};
export type Sender = { id: string; email: string; name: string | null };
export type Settings = { frozen: boolean; dailyAllowance: number | null; updatedAt: string };
/** The operator's lists: `{ [key]: items, total, page, totalPages }`, newest first. */
type PageOf<K extends string, T> = { [P in K]: T[] } & { total: number; page: number; totalPages: number };
export type AccountList = PageOf<
  'accounts',
  {
    id: string;
    name: string;
    createdAt: string;
    region: string | null;
    jurisdiction: string | null;
    placedAt: string | null;
  }
>;
export type ApiKeyEntry = {
  id: string;
  name: string | null;
  scopes: string[];
  mode: 'live' | 'test';
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};
export type ApiKeyList = PageOf<'apiKeys', ApiKeyEntry>;
export type OtpTokenList = PageOf<'otpTokens', OtpTokenView>;
export type SenderList = PageOf<'senders', { id: string; email: string; name: string | null; createdAt: string }>;

// Mail (routes 1-6)
export type QueuedEmail = { id: string; status: string };
export type TemplateQueued = QueuedEmail & { templateId: string };
export type BatchQueued = QueuedEmail[];
export type EmailLogEntry = { id: string; subject: string; toAddresses: string[]; status: string; createdAt: string };
export type EmailList = { emails: EmailLogEntry[]; total: number; page: number; totalPages: number };
export type EmailDetail = {
  id: string;
  status: 'SCHEDULED' | 'QUEUED' | 'SENT' | 'DELIVERED' | 'BOUNCED' | 'FAILED' | 'SUPPRESSED' | 'CANCELED';
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  messageId: string;
  html?: string;
  text?: string;
  tags: { name: string; value: string }[];
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string; contentId?: string; size: number }[];
  scheduledAt?: string;
  test: boolean;
  createdAt: string;
  sentAt?: string;
  attempts: number;
  lastReply?: string;
  recipients: {
    email: string;
    kind: 'to' | 'cc' | 'bcc';
    status: string;
    reply?: string;
    bounceType?: 'hard' | 'soft' | 'undetermined';
    bounceReason?: string;
    route?: string;
  }[];
  events: { type: string; at: string; detail?: string; route?: string }[];
};
export type Suppression = {
  email: string;
  reason: 'hard_bounce' | 'complaint' | 'rcpt_rejected' | 'manual';
  note: string | null;
  emailId: string | null;
  expiresAt: string | null;
  createdAt: string;
};
export type SuppressionList = { suppressions: Suppression[]; total: number; page: number; totalPages: number };
export type TemplateSummary = { id: string; name: string; subject: string; updatedAt: string };
export type TemplateList = { page: number; limit: number; total: number; items: TemplateSummary[] };
export type TemplateDetail = { id: string; name: string; subject: string; htmlBody: string; textBody: string };
/** Create and update answer the template with its `updatedAt`. */
export type SavedTemplate = TemplateDetail & { updatedAt: string };
export type TemplateDeleted = { id: string; deleted: boolean };

// One-time codes (routes 7-17)
export type OtpSent = { sessionId: string; expiresAt: string; email: string; sent: boolean };
/** POST /api/v1/otp/send (legacy alias) answers without `email`. */
export type LegacyOtpSent = Omit<OtpSent, 'email'>;
export type EmailVerificationSent = OtpSent & { hostedVerifyUrl: string };
export type Verified = { verified: boolean };
export type Verification = { id: string; email: string; sentAt: string; verifiedAt: string };
export type VerificationList = { verifications: Verification[] };
/** GET /api/v1/otp/verifications (legacy alias) lists entries without `sentAt`. */
export type LegacyVerificationList = { verifications: Omit<Verification, 'sentAt'>[] };
export type VerificationStatus = {
  sessionId: string;
  email: string;
  status: 'pending' | 'verified' | 'locked' | 'expired';
  expiresAt: string;
  verifiedAt?: string;
};
