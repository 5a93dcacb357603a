// The one HTTP layer: authentication, an Idempotency-Key on every write, retries with backoff
// that honours Retry-After, error envelopes turned into typed errors, cursors followed, and
// jobs waited for. Resources only name paths. (The Python SDK's _transport, in fetch.)

import {
  APIConnectionError,
  APITimeoutError,
  JobFailedError,
  WaitTimeoutError,
  errorFromResponse,
  parseRetryAfter,
} from "./errors.js";

export const VERSION = "0.1.0";
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * `maxRetries` more attempts after the first; exponential backoff from `baseDelay` seconds
 * (with jitter, at most `maxDelay`) unless the answer says how long to wait.
 */
export class RetryPolicy {
  constructor({ maxRetries = 3, baseDelay = 0.5, maxDelay = 30, maxRetryAfter = 120 } = {}) {
    Object.assign(this, { maxRetries, baseDelay, maxDelay, maxRetryAfter });
  }

  /**
   * Seconds before attempt `attempt + 1`, or null when not retried (`response` null: a timeout
   * or connection failure). A call that cannot carry an Idempotency-Key is retried only after a
   * 429 (refused before it ran).
   */
  delay(attempt, response, { idempotent = true } = {}) {
    if (attempt >= this.maxRetries) return null;
    if (!idempotent && (!response || response.status !== 429)) return null;
    if (response) {
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      const retryable = RETRIED_STATUSES.has(response.status) || (response.status === 409 && retryAfter !== null);
      if (!retryable) return null;
      if (retryAfter !== null) return retryAfter <= this.maxRetryAfter ? retryAfter : null;
    }
    const backoff = Math.min(this.maxDelay, this.baseDelay * 2 ** attempt);
    return backoff * (0.5 + Math.random() / 2);
  }
}

const defaultSleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

function wire(value) {
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** The id of a write's job unless the answer says it has succeeded. */
function unfinishedJob(result) {
  if (!result || !result.job_id) return null;
  if (result.job && result.job.status === "succeeded") return null;
  return String(result.job_id);
}

/** A write's answer once its job, followed here, has finished: the job, and the rows and
 * routing the job's result names (what a finished server-side wait answers). */
function followed(result, job) {
  const done = job.result || {};
  const answer = { ...result, job };
  if (Array.isArray(result.records) && Array.isArray(done.records)) answer.records = done.records;
  if (Array.isArray(result.routed_types) && Array.isArray(done.routed_types)) answer.routed_types = done.routed_types;
  return answer;
}

export class Transport {
  constructor({ apiKey, baseUrl, timeout, retry, jobPollInterval, jobWaitTimeout, fetch: fetchImpl, sleep }) {
    this.baseUrl = baseUrl;
    this.timeout = timeout;
    this.retry = retry;
    this.jobPollInterval = jobPollInterval;
    this.jobWaitTimeout = jobWaitTimeout;
    this.fetch = fetchImpl || globalThis.fetch.bind(globalThis);
    this.sleep = sleep || defaultSleep;
    this.headers = {
      Authorization: `Bearer ${apiKey}`,
      Accept: "application/json",
      "User-Agent": `mirix-typescript/${VERSION}`,
    };
  }

  url(path, params) {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, wire(value));
    }
    return url.toString();
  }

  /** The raw answer of one call, after the retries: `{response, text}`. */
  async send({ method, path, params, json, idempotencyKey, idempotent = true, headers: extra }) {
    const headers = { ...this.headers, ...(extra || {}) };
    if (WRITE_METHODS.has(method) && idempotent) {
      // One key for every attempt of this call: a retry replays the first answer.
      headers["Idempotency-Key"] = idempotencyKey || globalThis.crypto.randomUUID();
    }
    let body;
    if (json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(json);
    }
    const url = this.url(path, params);
    for (let attempt = 0; ; attempt += 1) {
      let response = null;
      let text = "";
      let error = null;
      try {
        response = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeout * 1000) });
        text = await response.text();
      } catch (exc) {
        response = null;
        error =
          exc && (exc.name === "TimeoutError" || exc.name === "AbortError")
            ? new APITimeoutError(`${method} ${path} timed out after ${this.timeout}s`, { cause: exc })
            : new APIConnectionError(`${method} ${path}: ${exc && exc.message}`, { cause: exc });
      }
      const wait = this.retry.delay(attempt, response, { idempotent });
      if (wait === null) {
        if (response === null) throw error;
        return { response, text };
      }
      await this.sleep(wait);
    }
  }

  /** The parsed answer of one call; a typed error for an error answer. */
  async request(call) {
    const { response, text } = await this.send(call);
    if (!response.ok) throw errorFromResponse(response, text);
    if (response.status === 204 || !text) return null;
    return JSON.parse(text);
  }

  /** Every item of every page, following `next_cursor` (a bare array, from an older service, is one page). */
  async *paginate({ path, params }) {
    const query = { ...(params || {}) };
    for (;;) {
      const page = await this.request({ method: "GET", path, params: query });
      const [results, cursor] = Array.isArray(page) ? [page, null] : [page.results, page.next_cursor];
      yield* results;
      if (!cursor) return;
      query.cursor = cursor;
    }
  }

  pollDelay(polls) {
    return Math.min(5, this.jobPollInterval * 1.5 ** polls);
  }

  async waitJob(jobId, { timeout } = {}) {
    const deadline = Date.now() + (timeout ?? this.jobWaitTimeout) * 1000;
    for (let polls = 0; ; polls += 1) {
      const job = await this.request({ method: "GET", path: `/v1/jobs/${encodeURIComponent(jobId)}` });
      if (job.status === "failed") throw new JobFailedError(job);
      if (job.status === "succeeded") return job;
      if (Date.now() >= deadline) throw new WaitTimeoutError(job);
      await this.sleep(this.pollDelay(polls));
    }
  }

  /** A write; with `wait`, asked to wait server-side and then its job followed to the end. */
  async write(call, wait) {
    const sent = wait ? { ...call, params: { ...(call.params || {}), wait: true } } : call;
    const result = await this.request(sent);
    const jobId = wait ? unfinishedJob(result) : null;
    return jobId ? followed(result, await this.waitJob(jobId)) : result;
  }
}
