// The TypeScript SDK against the real stack that tests/clients/test_typescript_sdk.py starts.
// Its environment: MIRIX_BASE_URL and MIRIX_API_KEY (the owner's admin key), MIRIX_INTRUDER_KEY
// (another organization's), MIRIX_READONLY_KEY (memories:read), MIRIX_LIMITED_KEY (1 request a
// minute) with MIRIX_LIMITED_SUBJECT, MIRIX_CACHE_RESET_URL (clears the service's rate-limit
// counters: the window the server named has passed), and MIRIX_WEBHOOK_DELIVERY (a delivery
// signed by the service's own signing code).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  APIConnectionError,
  AuthenticationError,
  Mirix,
  NotFoundError,
  PermissionDeniedError,
  RateLimitedError,
  ValidationError,
  WebhookVerificationError,
  verifyWebhook,
} from "../src/index.js";

const env = process.env;
let sequence = 0;
const unique = (prefix) => `${prefix}-ts-${process.pid}-${++sequence}`;
const collect = async (iterator) => {
  const items = [];
  for await (const item of iterator) items.push(item);
  return items;
};
const CAT = [{ role: "user", name: "Ana", content: "I adopted a cat named Miso last week." }];

test("the configuration comes from MIRIX_API_KEY and MIRIX_BASE_URL", async () => {
  const client = new Mirix();
  assert.equal(client.baseUrl, env.MIRIX_BASE_URL.replace(/\/+$/, ""));
  const subject = unique("env");
  const created = await client.subjects.create(subject);
  assert.equal(created.external_id, subject);
});

test("write, wait, search, answer, delete", async () => {
  const client = new Mirix();
  const subject = unique("ana");
  await client.subjects.create(subject);
  const renamed = await client.subjects.update(subject, { displayName: "Ana" });
  assert.equal(renamed.display_name, "Ana");
  assert.equal((await client.jobs.wait(renamed.graph_reindex_job_id)).status, "succeeded");
  const written = await client.memories.add(subject, { messages: CAT, wait: true });
  assert.ok(written.records.length > 0);
  assert.equal((await client.jobs.get(written.job_id)).status, "succeeded");
  const writtenIds = new Set(written.records.map((r) => r.id));

  const found = await client.search(subject, "What is the name of my cat?");
  assert.ok(
    found.rows.some((row) => row.text.includes("Miso") && writtenIds.has(row.id)),
    JSON.stringify(found.rows),
  );

  const answer = await client.answer(subject, "What is my cat's name?");
  assert.ok(answer.answer.includes("Miso"), JSON.stringify(answer));
  assert.ok(answer.cited_row_ids.length > 0, JSON.stringify(answer));
  assert.ok(answer.cited_row_ids.every((id) => writtenIds.has(id)), JSON.stringify(answer));

  const episodic = written.records.find((r) => r.type === "episodic");
  await client.memories.delete(subject, "episodic", episodic.id);
  await assert.rejects(client.memories.get(subject, "episodic", episodic.id), NotFoundError);

  const receipt = await client.subjects.erase(subject);
  await client.jobs.wait(receipt.job_id);
  await assert.rejects(client.subjects.get(subject), NotFoundError);
});

test("listings follow next_cursor across pages", async () => {
  const client = new Mirix();
  const subject = unique("pages");
  await client.subjects.create(subject);
  const ids = new Set();
  for (let n = 0; n < 5; n += 1) {
    const written = await client.memories.add(subject, { text: `Note ${n}: the meeting room number is ${100 + n}.` });
    for (const r of written.records) if (r.type === "episodic") ids.add(r.id);
  }
  const listed = (await collect(client.memories.list(subject, { type: "episodic", pageSize: 2 }))).map((r) => r.id);
  assert.equal(ids.size, 5);
  assert.equal(new Set(listed).size, listed.length);
  assert.deepEqual(new Set(listed), ids);

  const subjects = (await collect(client.subjects.list({ pageSize: 1 }))).map((s) => s.external_id);
  assert.ok(subjects.includes(subject) && subjects.length >= 2, JSON.stringify(subjects));
});

test("a 429 is retried after Retry-After", async () => {
  const waits = [];
  const resetCounters = () => fetch(env.MIRIX_CACHE_RESET_URL, { method: "POST" });
  const sleep = async (seconds) => {
    waits.push(seconds);
    await resetCounters();
  };
  const subject = env.MIRIX_LIMITED_SUBJECT;
  await resetCounters();
  const client = new Mirix({ apiKey: env.MIRIX_LIMITED_KEY, sleep });
  assert.equal((await client.subjects.get(subject)).external_id, subject);
  assert.equal((await client.subjects.get(subject)).external_id, subject); // a 429 first, then the retry
  assert.equal(waits.length, 1);
  assert.ok(waits[0] >= 1 && waits[0] <= 60, String(waits[0]));

  await resetCounters();
  const impatient = new Mirix({ apiKey: env.MIRIX_LIMITED_KEY, maxRetries: 0 });
  await impatient.subjects.get(subject);
  const error = await impatient.subjects.get(subject).catch((e) => e);
  assert.ok(error instanceof RateLimitedError, String(error));
  assert.equal(error.status, 429);
  assert.equal(error.code, "throttled");
  assert.ok(error.retryAfter >= 1 && error.retryAfter <= 60, String(error.retryAfter));
  await resetCounters();
});

test("a write retried after a lost answer produces one set of rows", async () => {
  const subject = unique("idem");
  let lost = 0;
  const keys = [];
  // The first answer to the write is lost on the way back: the SDK retries with the same key.
  const flaky = async (url, init) => {
    const response = await fetch(url, init);
    if (init.method === "POST" && url.includes("/memories")) {
      keys.push(init.headers["Idempotency-Key"]);
      if (lost === 0) {
        lost += 1;
        await response.text();
        throw new TypeError("fetch failed");
      }
    }
    return response;
  };
  const client = new Mirix({ fetch: flaky, sleep: async () => {} });
  await client.subjects.create(subject);
  const written = await client.memories.add(subject, { text: "My locker code is 4312." });
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  assert.match(keys[0], /^[0-9a-f-]{36}$/);

  const again = await client.memories.add(subject, { text: "My locker code is 4312.", idempotencyKey: keys[0] });
  assert.deepEqual(again.records, written.records);
  const rows = await collect(client.memories.list(subject, { type: "episodic" }));
  assert.deepEqual(
    rows.map((r) => r.id),
    written.records.filter((r) => r.type === "episodic").map((r) => r.id),
  );

  const conflict = await client.memories
    .add(subject, { text: "Another text under the same key.", idempotencyKey: keys[0] })
    .catch((e) => e);
  assert.ok(conflict instanceof ValidationError && conflict.status === 422, String(conflict));
});

test("another organization's key finds nothing", async () => {
  const owner = new Mirix();
  const subject = unique("private");
  await owner.subjects.create(subject);
  const intruder = new Mirix({ apiKey: env.MIRIX_INTRUDER_KEY });
  const error = await intruder.subjects.get(subject).catch((e) => e);
  assert.ok(error instanceof NotFoundError, String(error));
  assert.equal(error.status, 404);
  assert.equal(error.code, "not_found");
  assert.ok(error.requestId);
  await assert.rejects(intruder.search(subject, "anything"), NotFoundError);
  await assert.rejects(intruder.memories.delete(subject, "episodic", crypto.randomUUID()), NotFoundError);
});

test("a bad key is an AuthenticationError, a missing scope a PermissionDeniedError", async () => {
  const nobody = new Mirix({ apiKey: "mx_live_notakey" });
  const error = await nobody.subjects.get("anyone").catch((e) => e);
  assert.ok(error instanceof AuthenticationError, String(error));
  assert.equal(error.status, 401);

  const reader = new Mirix({ apiKey: env.MIRIX_READONLY_KEY });
  await assert.rejects(reader.apiKeys.create("more", ["admin"]), PermissionDeniedError);
});

test("bad input is a ValidationError with details", async () => {
  const client = new Mirix();
  const subject = unique("bad");
  await client.subjects.create(subject);
  const error = await client.memories
    .add(subject, { messages: [{ role: "user", content: "x".repeat(100_001) }] })
    .catch((e) => e);
  assert.ok(error instanceof ValidationError, String(error));
  assert.ok(error.details && JSON.stringify(error.details).includes("messages"), JSON.stringify(error.details));
});

test("an unreachable service is an APIConnectionError after the retries", async () => {
  let slept = 0;
  const client = new Mirix({ baseUrl: "http://127.0.0.1:9", maxRetries: 2, sleep: async () => void (slept += 1) });
  await assert.rejects(client.subjects.get("anyone"), APIConnectionError);
  assert.equal(slept, 2);
});

test("a delivery signed by the service verifies; a tampered or stale one does not", () => {
  const { body, headers, secret, other_secret: otherSecret } = JSON.parse(env.MIRIX_WEBHOOK_DELIVERY);
  const now = Number(headers["webhook-timestamp"]) + 10;
  const event = verifyWebhook(body, headers, secret, { now });
  assert.deepEqual(event, JSON.parse(body));
  assert.deepEqual(verifyWebhook(Buffer.from(body), new Headers(headers), otherSecret, { now }), event);
  assert.throws(() => verifyWebhook(`${body} `, headers, secret, { now }), WebhookVerificationError);
  assert.throws(() => verifyWebhook(body, headers, secret, { now: now + 3600 }), WebhookVerificationError);
  assert.throws(() => verifyWebhook(body, headers, "whsec_" + Buffer.alloc(32).toString("base64"), { now }), WebhookVerificationError);
  assert.throws(() => verifyWebhook(body, { "webhook-id": "x" }, secret, { now }), WebhookVerificationError);
});

test("a write whose answer carries a secret sends no Idempotency-Key and is not retried blindly", async () => {
  const sent = [];
  const losing = async (url, init) => {
    const response = await fetch(url, init);
    sent.push(init.headers);
    await response.text();
    throw new TypeError("fetch failed");
  };
  const client = new Mirix({ fetch: losing, sleep: async () => {} });
  await assert.rejects(client.apiKeys.create(unique("key"), ["memories:read"]), APIConnectionError);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]["Idempotency-Key"], undefined);

  const owner = new Mirix();
  const issued = await owner.apiKeys.create(unique("key"), ["memories:read"]);
  assert.match(issued.secret, /^mx_/);
  const listed = await collect(owner.apiKeys.list());
  assert.ok(listed.some((k) => k.id === issued.api_key.id));
  await owner.apiKeys.revoke(issued.api_key.id);
});

test("a waited write the service answered early returns every row its job wrote", async () => {
  const job = {
    id: "j1",
    kind: "memory.write",
    status: "succeeded",
    attempts: 1,
    created_at: "2026-12-04T00:00:00Z",
    result: {
      routed_types: ["episodic", "semantic"],
      records: [{ type: "episodic", id: "e1" }, { type: "semantic", id: "s1" }],
    },
  };
  const accepted = {
    chunk_id: "c1",
    routed_types: ["episodic"],
    records: [{ type: "episodic", id: "e1" }],
    job_id: "j1",
    job: { ...job, status: "queued", result: {} }, // the service's wait ran out: a 202
  };
  const seen = [];
  const fetch = async (url, init) => {
    seen.push(`${init.method} ${url}`);
    const polls = seen.filter((line) => line.startsWith("GET")).length;
    const [status, body] =
      init.method === "POST" ? [202, accepted] : [200, polls > 1 ? job : { ...job, status: "indexing" }];
    return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  };
  const client = new Mirix({ apiKey: "mx_test", baseUrl: "http://127.0.0.1:9", fetch, sleep: async () => {} });
  const written = await client.memories.add("ana", { messages: [{ role: "user", content: "hi" }], wait: true });
  assert.equal(seen.length, 3, seen.join("\n")); // the write and two polls
  assert.ok(seen[0].includes("wait=true"), seen[0]);
  assert.deepEqual(written.records.map((r) => r.id), ["e1", "s1"]);
  assert.deepEqual(written.routed_types, ["episodic", "semantic"]);
  assert.equal(written.job.status, "succeeded");
});
