// Type declarations of the MIRIX client (the JavaScript in this folder is the implementation).
// Field names of requests and responses are the service's (snake_case, as in /v1/schema);
// options of the client's methods are camelCase.

export declare const VERSION: string;
export declare const DEFAULT_BASE_URL: string;
export declare const SECRET_PREFIX: "whsec_";

export type MemoryType = "episodic" | "semantic" | "core" | "procedural" | "resource";
export type SearchMode = "graph" | "flat";
export type MetadataValue = string | number | boolean | null | Array<string | number | boolean | null>;
export type Metadata = Record<string, MetadataValue>;
/** `{and: [...]}`, `{or: [...]}`, `{not: ...}` over `metadata.<key>` and row fields, with eq/ne/in/nin/gt/gte/lt/lte/contains/exists. */
export type Filters = Record<string, unknown>;
export type JSONObject = Record<string, unknown>;

// Errors -------------------------------------------------------------------------------------

export declare class MirixError extends Error {}
export declare class APIConnectionError extends MirixError {}
export declare class APITimeoutError extends APIConnectionError {}
export declare class ConfigurationError extends MirixError {}
export declare class APIError extends MirixError {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly requestId: string | null;
  readonly headers: Headers;
  /** The envelope's message (without the status and code `message` starts with). */
  readonly rawMessage: string;
}
export declare class BadRequestError extends APIError {}
export declare class ValidationError extends BadRequestError {}
export declare class AuthenticationError extends APIError {}
export declare class PermissionDeniedError extends APIError {}
export declare class NotFoundError extends APIError {}
export declare class ConflictError extends APIError {}
export declare class PayloadTooLargeError extends APIError {}
export declare class UnprocessableEntityError extends ValidationError {}
export declare class RateLimitedError extends APIError {
  /** Seconds the service asked to wait (Retry-After), or null. */
  readonly retryAfter: number | null;
}
export declare class ServerError extends APIError {}
export declare class JobFailedError extends MirixError {
  readonly job: Job;
}
export declare class WaitTimeoutError extends MirixError {
  readonly job: Job;
}
export declare class WebhookVerificationError extends MirixError {}

export declare function errorFromResponse(response: Response, body: string): APIError;
export declare function parseRetryAfter(value: string | null | undefined, now?: number): number | null;

// Retries ------------------------------------------------------------------------------------

export interface RetryOptions {
  maxRetries?: number;
  baseDelay?: number;
  maxDelay?: number;
  maxRetryAfter?: number;
}
export declare class RetryPolicy {
  constructor(options?: RetryOptions);
  readonly maxRetries: number;
  readonly baseDelay: number;
  readonly maxDelay: number;
  readonly maxRetryAfter: number;
  /** Seconds before the next attempt, or null when the answer (null: a network failure) is not retried. */
  delay(attempt: number, response: Response | null, options?: { idempotent?: boolean }): number | null;
}

// Models -------------------------------------------------------------------------------------

export interface Subject {
  id: string;
  external_id: string;
  kind: string;
  display_name?: string | null;
  metadata?: Metadata | null;
  created_at: string;
  [extra: string]: unknown;
}
export interface SubjectUpdated extends Subject {
  /** Set when the new name re-indexes the subject's graph. */
  graph_reindex_job_id: string | null;
}
export interface Message {
  role: "user" | "assistant" | "system" | "tool";
  content: string;
  name?: string;
  id?: string;
  timestamp?: string | Date;
}
export interface MemoryWrite {
  messages?: Message[] | string;
  text?: string;
  timestamp?: string | Date;
  sessionId?: string;
  metadata?: Metadata;
}
export interface WrittenRecord {
  type: string;
  id: string;
}
/**
 * A write's answer. Accepted (202): `records` are the rows stored at once (each message's
 * episodic row, documents, vault entries) and `job` the job that completes the write; once that
 * job finished (`wait: true`): every row of the write and the router's `routed_types`.
 */
export interface WriteResult {
  chunk_id: string;
  routed_types: string[];
  records: WrittenRecord[];
  job_id: string;
  job?: Job | null;
  [extra: string]: unknown;
}
export interface BatchAccepted {
  batch_id: string;
  job_id: string;
  chunks_total: number;
  [extra: string]: unknown;
}
export interface MemoryRecord {
  id: string;
  type: string;
  created_at: string;
  current: boolean;
  supersedes?: string | null;
  superseded_by?: string | null;
  valid_from?: string | null;
  valid_to?: string | null;
  provenance?: JSONObject | null;
  content: JSONObject;
  metadata?: Metadata;
  index_status?: string | null;
  [extra: string]: unknown;
}
export type RowLike = [type: MemoryType, id: string] | { type: string; id: string };
export interface Fact {
  frame_id: string;
  predicate: string;
  roles: Array<{ role: string; anchor: string; name: string }>;
  literals: Record<string, string>;
  event_time?: string | null;
  event_time_precision?: string | null;
  status: string;
  /** The ids of the rows the fact rests on. */
  citations: string[];
  score: number;
  current: boolean;
  superseded_by?: string | null;
  valid_from?: string | null;
  valid_to?: string | null;
  [extra: string]: unknown;
}
export interface EvidenceRow {
  id: string;
  type: string;
  text: string;
  event_time?: string | null;
  mention_time?: string | null;
  attribute?: string | null;
  provenance?: JSONObject | null;
  selected_as?: string | null;
  metadata: Metadata;
  current: boolean;
  superseded_by?: string | null;
  valid_from?: string | null;
  valid_to?: string | null;
  [extra: string]: unknown;
}
export interface SearchResult {
  mode: string;
  fallback: boolean;
  plan: JSONObject;
  facts: Fact[];
  rows: EvidenceRow[];
  typed: JSONObject;
  budget: { rows_inspected: number; rows_returned: number; facts_returned: number; tokens_returned: number; [extra: string]: unknown };
  [extra: string]: unknown;
}
export interface CitedRow {
  id: string;
  metadata: Metadata;
  current: boolean;
  superseded_by?: string | null;
  valid_from?: string | null;
  valid_to?: string | null;
}
export interface Answer {
  answer: string;
  cited_row_ids: string[];
  cited_rows: CitedRow[];
  searches: number;
  check: JSONObject;
  plan: JSONObject;
  fallback: boolean;
  [extra: string]: unknown;
}
export interface Job {
  id: string;
  kind: string;
  status: "queued" | "running" | "indexing" | "succeeded" | "failed" | (string & {});
  subject_id?: string | null;
  attempts: number;
  created_at: string;
  started_at?: string | null;
  finished_at?: string | null;
  error?: JSONObject | null;
  result?: JSONObject | null;
  [extra: string]: unknown;
}
export interface JobAccepted {
  job_id: string;
  [extra: string]: unknown;
}
export interface ErasureAccepted {
  job_id: string;
  [extra: string]: unknown;
}
export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expires_at?: string | null;
  revoked_at?: string | null;
  last_used_at?: string | null;
  rotated_from?: string | null;
  created_at: string;
  [extra: string]: unknown;
}
export interface IssuedApiKey {
  api_key: ApiKey;
  /** The key itself; shown once. */
  secret: string;
  [extra: string]: unknown;
}
export interface Step {
  kind: "thought" | "action" | "tool_call" | "tool_result" | "message";
  content: string;
  tool?: string;
}
export interface WebhookEndpoint {
  id: string;
  url: string;
  description?: string | null;
  event_types: string[];
  include_content_for: string[];
  enabled: boolean;
  disabled_reason?: string | null;
  disabled_at?: string | null;
  created_at: string;
  updated_at: string;
  [extra: string]: unknown;
}
export interface AuditEntry {
  sequence: number;
  organization_id: string;
  created_at: string;
  actor: string;
  action: string;
  subject_id?: string | null;
  target_ids: string[];
  request_id?: string | null;
  previous_hash: string;
  entry_hash: string;
  [extra: string]: unknown;
}

// Resources ----------------------------------------------------------------------------------

export interface WriteOptions {
  /** Return once the write's indexing job has finished. */
  wait?: boolean;
  /** Defaults to a fresh UUID, the same for every retry of this call. (Writes whose answer carries a secret — creating or rotating an API key or a webhook secret — send none and are retried only after a 429.) */
  idempotencyKey?: string;
}

export declare class Subjects {
  create(externalId: string, options?: { kind?: string; displayName?: string; metadata?: Metadata }): Promise<Subject>;
  get(externalId: string): Promise<Subject>;
  /** Rename the subject or replace its metadata; a new name re-indexes its graph (a job). */
  update(externalId: string, options: { displayName?: string; metadata?: Metadata }): Promise<SubjectUpdated>;
  list(options?: { kind?: string; pageSize?: number }): AsyncIterableIterator<Subject>;
  erase(externalId: string): Promise<ErasureAccepted>;
  export(externalId: string): Promise<JSONObject>;
}

export declare class Memories {
  add(subject: string, write: MemoryWrite & WriteOptions): Promise<WriteResult>;
  addBatch(subject: string, chunks: MemoryWrite[], options?: { sessionId?: string } & WriteOptions): Promise<BatchAccepted>;
  list(
    subject: string,
    options?: { type?: MemoryType; filters?: Filters; sessionId?: string; includeSuperseded?: boolean; pageSize?: number },
  ): AsyncIterableIterator<MemoryRecord>;
  get(subject: string, type: MemoryType, id: string): Promise<MemoryRecord>;
  update(subject: string, type: MemoryType, id: string, changes: JSONObject): Promise<MemoryRecord>;
  /** The row's chain of versions, oldest first. */
  history(subject: string, type: MemoryType, id: string): AsyncIterableIterator<MemoryRecord>;
  delete(subject: string, type: MemoryType, id: string): Promise<JSONObject | null>;
  deleteMany(subject: string, options: { ids?: RowLike[]; filters?: Filters }): Promise<JSONObject>;
  core(subject: string): AsyncIterableIterator<MemoryRecord>;
}

export declare class Graph {
  anchors(subject: string, options?: { pageSize?: number }): AsyncIterableIterator<JSONObject>;
  frames(subject: string, options?: { pageSize?: number }): AsyncIterableIterator<JSONObject>;
  frame(subject: string, frameId: string): Promise<JSONObject>;
  check(): Promise<JobAccepted>;
}

export declare class Skills {
  list(subject: string): Promise<JSONObject>;
  get(subject: string, skillId: string): Promise<JSONObject>;
  search(subject: string, query: string, options?: { domain?: string; limit?: number }): Promise<JSONObject>;
  recordSession(
    subject: string,
    session: { task: string; steps: Step[]; finalOutput: string; outcome?: string; domain?: string; idempotencyKey?: string },
  ): Promise<JSONObject>;
}

export declare class Consent {
  get(subject: string): Promise<JSONObject>;
  update(subject: string, purposes: Record<string, boolean>): Promise<JSONObject>;
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;
export interface VerifyOptions {
  toleranceSeconds?: number;
  /** Seconds since the epoch (default: now). */
  now?: number;
}

export declare class Webhooks {
  create(
    url: string,
    eventTypes: string[],
    options?: { includeContentFor?: string[]; description?: string },
  ): Promise<WebhookEndpoint & { secret: string }>;
  list(): AsyncIterableIterator<WebhookEndpoint>;
  get(endpointId: string): Promise<WebhookEndpoint>;
  update(endpointId: string, changes: JSONObject): Promise<WebhookEndpoint>;
  delete(endpointId: string): Promise<null>;
  ping(endpointId: string): Promise<JSONObject>;
  rotateSecret(endpointId: string, options?: JSONObject): Promise<JSONObject>;
  eventTypes(): Promise<JSONObject>;
  verify(payload: string | Uint8Array, headers: WebhookHeaders, secret: string, options?: VerifyOptions): unknown;
}

export declare class Jobs {
  get(jobId: string): Promise<Job>;
  /** Poll until the job has succeeded (JobFailedError, or WaitTimeoutError past `timeout` seconds). */
  wait(jobId: string, options?: { timeout?: number }): Promise<Job>;
  list(options?: { status?: string; kind?: string; pageSize?: number }): AsyncIterableIterator<Job>;
}

export declare class ApiKeys {
  create(
    name: string,
    scopes: string[],
    options?: { expiresAt?: string | Date; rateLimitPerMinute?: number },
  ): Promise<IssuedApiKey>;
  list(): AsyncIterableIterator<ApiKey>;
  revoke(apiKeyId: string): Promise<ApiKey>;
  rotate(apiKeyId: string, options?: { overlapSeconds?: number }): Promise<IssuedApiKey>;
}

export declare class Audit {
  list(options?: { since?: string | Date; until?: string | Date; pageSize?: number }): AsyncIterableIterator<AuditEntry>;
  verify(): Promise<JSONObject>;
}

export declare class Usage {
  get(options?: { since?: string | Date; until?: string | Date }): Promise<JSONObject>;
}

// The client ---------------------------------------------------------------------------------

export interface MirixOptions {
  /** Default: MIRIX_API_KEY. */
  apiKey?: string;
  /** Default: MIRIX_BASE_URL, else http://127.0.0.1:8000. */
  baseUrl?: string;
  /** Seconds per attempt (default 60). */
  timeout?: number;
  /** Attempts after the first on 429/502/503/504, timeouts and connection failures (default 3). */
  maxRetries?: number;
  /** Seconds before the first job poll (default 0.5; polls slow down to every 5 s). */
  jobPollInterval?: number;
  /** Seconds a `wait: true` write or `jobs.wait` waits at most (default 300). */
  jobWaitTimeout?: number;
  /** The fetch to send requests with (default: the global one). */
  fetch?: typeof fetch;
  /** What waits between retries and job polls (default: a timer). */
  sleep?: (seconds: number) => Promise<void>;
}

export interface SearchOptions {
  filters?: Filters;
  limit?: number;
  mode?: SearchMode;
  memoryTypes?: MemoryType[];
  tokenBudget?: number;
  since?: string | Date;
  until?: string | Date;
}
export interface AnswerOptions {
  mode?: SearchMode;
  tokenBudget?: number;
}

export declare class Mirix {
  constructor(options?: MirixOptions);
  readonly baseUrl: string;
  readonly subjects: Subjects;
  readonly memories: Memories;
  readonly graph: Graph;
  readonly skills: Skills;
  readonly consent: Consent;
  readonly webhooks: Webhooks;
  readonly jobs: Jobs;
  readonly apiKeys: ApiKeys;
  readonly audit: Audit;
  readonly usage: Usage;

  /** Facts (each citing its rows) and rows relevant to `query` in the subject's memory. */
  search(subject: string, query: string, options?: SearchOptions): Promise<SearchResult>;
  /** The mem0 form. */
  search(query: string, options: SearchOptions & { userId: string }): Promise<SearchResult>;
  /** An answer from the subject's memory with the ids of the rows it rests on. */
  answer(subject: string, query: string, options?: AnswerOptions): Promise<Answer>;
  answer(query: string, options: AnswerOptions & { userId: string }): Promise<Answer>;

  // The mem0-style facade
  add(messages: Message[] | string, options: { userId: string; metadata?: Metadata; wait?: boolean }): Promise<WriteResult>;
  getAll(options: { userId: string; filters?: Filters; type?: MemoryType }): AsyncIterableIterator<MemoryRecord>;
  get(memoryId: string, options: { userId: string; type: MemoryType }): Promise<MemoryRecord>;
  update(memoryId: string, changes: JSONObject, options: { userId: string; type: MemoryType }): Promise<MemoryRecord>;
  delete(memoryId: string, options: { userId: string; type: MemoryType }): Promise<JSONObject | null>;
  deleteAll(options: { userId: string }): Promise<ErasureAccepted>;
  history(memoryId: string, options: { userId: string; type: MemoryType }): AsyncIterableIterator<MemoryRecord>;
}

export declare function signWebhook(
  payload: string | Uint8Array,
  options: { secret: string; messageId: string; timestamp: number },
): string;
/** The decoded event of a signed delivery; WebhookVerificationError when the signature, headers or timestamp are wrong. */
export declare function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options?: VerifyOptions,
): unknown;

export default Mirix;
