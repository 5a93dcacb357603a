// `new Mirix({apiKey, baseUrl})`: the resource namespaces, search and answer, and a mem0-style
// facade (add/getAll/get/update/delete/deleteAll/history, search/answer with `userId`).

import { ConfigurationError } from "./errors.js";
import { ApiKeys, Audit, Consent, Graph, Jobs, Memories, Skills, Subjects, Usage, Webhooks, body } from "./resources.js";
import { RetryPolicy, Transport, VERSION } from "./transport.js";

export * from "./errors.js";
export { RetryPolicy, VERSION } from "./transport.js";
export { ApiKeys, Audit, Consent, Graph, Jobs, Memories, Skills, Subjects, Usage, Webhooks } from "./resources.js";
export { SECRET_PREFIX, WebhookVerificationError, sign as signWebhook, verify as verifyWebhook } from "./webhooks.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";

const env = (name) => globalThis.process?.env?.[name] || undefined;
const iso = (value) => (value instanceof Date ? value.toISOString() : value);

/** `[subject, query, options]` for `search("ana", "where?")` and the mem0 form `search("where?", {userId: "ana"})`. */
function subjectAndQuery(first, second, third) {
  if (typeof second === "string") {
    if (third && third.userId !== undefined) throw new TypeError("pass the subject positionally or as userId, not both");
    return [first, second, third || {}];
  }
  const options = second || {};
  if (options.userId === undefined) {
    throw new TypeError("a query is needed: search(subject, query) or search(query, {userId: subject})");
  }
  return [options.userId, first, options];
}

export class Mirix {
  /**
   * `apiKey` and `baseUrl` default to MIRIX_API_KEY and MIRIX_BASE_URL. `timeout` and the
   * job options are in seconds; `sleep(seconds)` is what waits between retries and job polls.
   */
  constructor({
    apiKey,
    baseUrl,
    timeout = 60,
    maxRetries = 3,
    jobPollInterval = 0.5,
    jobWaitTimeout = 300,
    fetch,
    sleep,
  } = {}) {
    const key = apiKey || env("MIRIX_API_KEY");
    if (!key) throw new ConfigurationError("No API key: pass {apiKey: ...} or set MIRIX_API_KEY.");
    const url = String(baseUrl || env("MIRIX_BASE_URL") || DEFAULT_BASE_URL).replace(/\/+$/, "");
    if (!/^https?:\/\//.test(url)) {
      throw new ConfigurationError(`The base URL ${JSON.stringify(url)} must start with http:// or https://.`);
    }
    const transport = new Transport({
      apiKey: key,
      baseUrl: url,
      timeout,
      retry: new RetryPolicy({ maxRetries }),
      jobPollInterval,
      jobWaitTimeout,
      fetch,
      sleep,
    });
    this._transport = transport;
    this.subjects = new Subjects(transport);
    this.memories = new Memories(transport);
    this.graph = new Graph(transport);
    this.skills = new Skills(transport);
    this.consent = new Consent(transport);
    this.webhooks = new Webhooks(transport);
    this.jobs = new Jobs(transport);
    this.apiKeys = new ApiKeys(transport);
    this.audit = new Audit(transport);
    this.usage = new Usage(transport);
  }

  get baseUrl() {
    return this._transport.baseUrl;
  }

  /** Facts (each citing its rows) and rows relevant to `query` in the subject's memory. */
  search(subjectOrQuery, queryOrOptions, options) {
    const [subject, query, o] = subjectAndQuery(subjectOrQuery, queryOrOptions, options);
    const json = body({
      query,
      filters: o.filters,
      limit: o.limit,
      mode: o.mode,
      memory_types: o.memoryTypes,
      token_budget: o.tokenBudget,
      since: iso(o.since),
      until: iso(o.until),
    });
    return this._transport.request({ method: "POST", path: `/v1/subjects/${encodeURIComponent(subject)}/search`, json });
  }

  /** An answer from the subject's memory with the ids of the rows it rests on. */
  answer(subjectOrQuery, queryOrOptions, options) {
    const [subject, query, o] = subjectAndQuery(subjectOrQuery, queryOrOptions, options);
    const json = body({ query, mode: o.mode, token_budget: o.tokenBudget });
    return this._transport.request({ method: "POST", path: `/v1/subjects/${encodeURIComponent(subject)}/answer`, json });
  }

  // The mem0-style facade -------------------------------------------------------------------

  /** mem0's `add`: remember `messages` (or a string) for `userId`; waits for indexing by default. */
  add(messages, { userId, metadata, wait = true }) {
    return this.memories.add(userId, { messages, metadata, wait });
  }

  /** mem0's `getAll`: every row of `userId` (an async iterator over the pages). */
  getAll({ userId, filters, type }) {
    return this.memories.list(userId, { type, filters });
  }

  get(memoryId, { userId, type }) {
    return this.memories.get(userId, type, memoryId);
  }

  update(memoryId, changes, { userId, type }) {
    return this.memories.update(userId, type, memoryId, changes);
  }

  delete(memoryId, { userId, type }) {
    return this.memories.delete(userId, type, memoryId);
  }

  /** mem0's `deleteAll`: erase the subject and everything remembered of it. */
  deleteAll({ userId }) {
    return this.subjects.erase(userId);
  }

  history(memoryId, { userId, type }) {
    return this.memories.history(userId, type, memoryId);
  }
}

export default Mirix;
