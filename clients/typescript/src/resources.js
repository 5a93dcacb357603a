// The resource namespaces. Each method names its path; the transport does the rest.
// Listings are async iterators that fetch page after page. (The Python SDK's resources.)

import { verify as verifyWebhook } from "./webhooks.js";

const p = (value) => encodeURIComponent(String(value));
const subjectPath = (externalId) => `/v1/subjects/${p(externalId)}`;
const iso = (value) => (value instanceof Date ? value.toISOString() : value);

/** A request body without its unset fields (the service's defaults apply). */
export function body(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}

function messages(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return [{ role: "user", content: value }];
  return value.map((m) => body({ ...m, timestamp: iso(m.timestamp) }));
}

function rowRef(row) {
  if (Array.isArray(row)) return { type: row[0], id: row[1] };
  return { type: row.type, id: row.id };
}

function writeBody(w) {
  return body({
    messages: messages(w.messages),
    text: w.text,
    metadata: w.metadata,
    session_id: w.sessionId ?? w.session_id,
    timestamp: iso(w.timestamp),
  });
}

class Resource {
  constructor(transport) {
    this._t = transport;
  }
}

export class Subjects extends Resource {
  create(externalId, { kind = "user", displayName, metadata } = {}) {
    const json = body({ external_id: externalId, kind, display_name: displayName, metadata });
    return this._t.request({ method: "POST", path: "/v1/subjects", json });
  }

  get(externalId) {
    return this._t.request({ method: "GET", path: subjectPath(externalId) });
  }

  /** Rename the subject or replace its metadata; a new name re-indexes its graph (a job). */
  update(externalId, { displayName, metadata } = {}) {
    const json = body({ display_name: displayName, metadata });
    return this._t.request({ method: "PATCH", path: subjectPath(externalId), json });
  }

  list({ kind, pageSize } = {}) {
    return this._t.paginate({ path: "/v1/subjects", params: { kind, limit: pageSize } });
  }

  /** Erase the subject and everything remembered of it (a receipt; the job finishes it). */
  erase(externalId) {
    return this._t.request({ method: "DELETE", path: subjectPath(externalId) });
  }

  export(externalId) {
    return this._t.request({ method: "GET", path: `${subjectPath(externalId)}/export` });
  }
}

export class Memories extends Resource {
  /**
   * Remember a conversation (`messages`) or a passage (`text`): accepted at once (each message
   * stored as its episodic row, and the `job` that completes the write); `wait` returns once that
   * job finished, every row written and indexed.
   */
  add(subject, { wait = false, idempotencyKey, ...write } = {}) {
    const call = { method: "POST", path: `${subjectPath(subject)}/memories`, json: writeBody(write), idempotencyKey };
    return this._t.write(call, wait);
  }

  /** Many writes in one call, processed by a job (`wait` follows it to the end). */
  addBatch(subject, chunks, { sessionId, wait = false, idempotencyKey } = {}) {
    const json = body({ chunks: chunks.map(writeBody), session_id: sessionId });
    return this._t.write({ method: "POST", path: `${subjectPath(subject)}/memories/batch`, json, idempotencyKey }, wait);
  }

  /** Every row (of `type`, or of all stores), following the cursor. */
  list(subject, { type, filters, sessionId, includeSuperseded, pageSize } = {}) {
    const params = { type, filters, session_id: sessionId, include_superseded: includeSuperseded, limit: pageSize };
    return this._t.paginate({ path: `${subjectPath(subject)}/memories`, params });
  }

  get(subject, type, id) {
    return this._t.request({ method: "GET", path: `${subjectPath(subject)}/memories/${p(type)}/${p(id)}` });
  }

  /** A new row superseding `id` (the old one stays, in its history). */
  update(subject, type, id, changes) {
    const path = `${subjectPath(subject)}/memories/${p(type)}/${p(id)}`;
    return this._t.request({ method: "PATCH", path, json: { changes } });
  }

  /** The row's chain of versions, oldest first (an async iterator). */
  history(subject, type, id) {
    return this._t.paginate({ path: `${subjectPath(subject)}/memories/${p(type)}/${p(id)}/history` });
  }

  /** Remove one row from every store (a receipt). */
  delete(subject, type, id) {
    return this._t.request({ method: "DELETE", path: `${subjectPath(subject)}/memories/${p(type)}/${p(id)}` });
  }

  /** Remove rows by reference (`[type, id]`, `{type, id}` or written records) or by filter. */
  deleteMany(subject, { ids, filters } = {}) {
    const json = body({ ids: ids ? ids.map(rowRef) : undefined, filters });
    return this._t.request({ method: "POST", path: `${subjectPath(subject)}/memories/delete`, json });
  }

  /** The subject's core blocks (persona, preferences), an async iterator. */
  core(subject) {
    return this._t.paginate({ path: `${subjectPath(subject)}/core` });
  }
}

export class Graph extends Resource {
  anchors(subject, { pageSize } = {}) {
    return this._t.paginate({ path: `${subjectPath(subject)}/graph/anchors`, params: { limit: pageSize } });
  }

  frames(subject, { pageSize } = {}) {
    return this._t.paginate({ path: `${subjectPath(subject)}/graph/frames`, params: { limit: pageSize } });
  }

  frame(subject, frameId) {
    return this._t.request({ method: "GET", path: `${subjectPath(subject)}/graph/frames/${p(frameId)}` });
  }

  check() {
    return this._t.request({ method: "POST", path: "/v1/graph/check" });
  }
}

export class Skills extends Resource {
  list(subject) {
    return this._t.request({ method: "GET", path: `${subjectPath(subject)}/skills` });
  }

  get(subject, skillId) {
    return this._t.request({ method: "GET", path: `${subjectPath(subject)}/skills/${p(skillId)}` });
  }

  search(subject, query, { domain, limit } = {}) {
    const json = body({ query, domain, limit });
    return this._t.request({ method: "POST", path: `${subjectPath(subject)}/skills/search`, json });
  }

  /** Record how an agent did a task; verified sessions become skills. */
  recordSession(subject, { task, steps, finalOutput, outcome, domain, idempotencyKey }) {
    const json = body({ task, domain, steps, final_output: finalOutput, outcome });
    return this._t.request({ method: "POST", path: `${subjectPath(subject)}/sessions`, json, idempotencyKey });
  }
}

export class Consent extends Resource {
  get(subject) {
    return this._t.request({ method: "GET", path: `${subjectPath(subject)}/consent` });
  }

  /** Grant (true) or withdraw (false) purposes; a withdrawal erases what it covered. */
  update(subject, purposes) {
    return this._t.request({ method: "PUT", path: `${subjectPath(subject)}/consent`, json: { purposes } });
  }
}

export class Webhooks extends Resource {
  /** A new endpoint; the answer holds its signing secret once. */
  create(url, eventTypes, { includeContentFor, description } = {}) {
    const json = body({ url, event_types: eventTypes, include_content_for: includeContentFor, description });
    // The answer carries a secret: the service stores no answer to replay, so no Idempotency-Key.
    return this._t.request({ method: "POST", path: "/v1/webhook-endpoints", json, idempotent: false });
  }

  list() {
    return this._t.paginate({ path: "/v1/webhook-endpoints" });
  }

  get(endpointId) {
    return this._t.request({ method: "GET", path: `/v1/webhook-endpoints/${p(endpointId)}` });
  }

  update(endpointId, changes) {
    return this._t.request({ method: "PATCH", path: `/v1/webhook-endpoints/${p(endpointId)}`, json: changes });
  }

  delete(endpointId) {
    return this._t.request({ method: "DELETE", path: `/v1/webhook-endpoints/${p(endpointId)}` });
  }

  ping(endpointId) {
    return this._t.request({ method: "POST", path: `/v1/webhook-endpoints/${p(endpointId)}/ping` });
  }

  rotateSecret(endpointId, options = {}) {
    const path = `/v1/webhook-endpoints/${p(endpointId)}/rotate-secret`;
    return this._t.request({ method: "POST", path, json: options, idempotent: false });
  }

  eventTypes() {
    return this._t.request({ method: "GET", path: "/v1/webhook-event-types" });
  }

  /** The event of a signed delivery (see `verifyWebhook`). */
  verify(payload, headers, secret, options) {
    return verifyWebhook(payload, headers, secret, options);
  }
}

export class Jobs extends Resource {
  get(jobId) {
    return this._t.request({ method: "GET", path: `/v1/jobs/${p(jobId)}` });
  }

  /** Poll until the job has succeeded (JobFailedError if it failed, WaitTimeoutError past `timeout` seconds). */
  wait(jobId, { timeout } = {}) {
    return this._t.waitJob(jobId, { timeout });
  }

  list({ status, kind, pageSize } = {}) {
    return this._t.paginate({ path: "/v1/jobs", params: { status, kind, limit: pageSize } });
  }
}

export class ApiKeys extends Resource {
  create(name, scopes, { expiresAt, rateLimitPerMinute } = {}) {
    const json = body({ name, scopes, expires_at: iso(expiresAt), rate_limit_per_minute: rateLimitPerMinute });
    return this._t.request({ method: "POST", path: "/v1/api-keys", json, idempotent: false });
  }

  list() {
    return this._t.paginate({ path: "/v1/api-keys" });
  }

  revoke(apiKeyId) {
    return this._t.request({ method: "POST", path: `/v1/api-keys/${p(apiKeyId)}/revoke` });
  }

  rotate(apiKeyId, { overlapSeconds } = {}) {
    const json = body({ overlap_seconds: overlapSeconds });
    return this._t.request({ method: "POST", path: `/v1/api-keys/${p(apiKeyId)}/rotate`, json, idempotent: false });
  }
}

export class Audit extends Resource {
  list({ since, until, pageSize } = {}) {
    return this._t.paginate({ path: "/v1/audit-log", params: { since, until, limit: pageSize } });
  }

  verify() {
    return this._t.request({ method: "GET", path: "/v1/audit-log/verify" });
  }
}

export class Usage extends Resource {
  get({ since, until } = {}) {
    return this._t.request({ method: "GET", path: "/v1/usage", params: { since, until } });
  }
}
