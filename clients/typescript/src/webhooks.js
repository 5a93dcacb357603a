// Verifying a webhook delivery: Standard Webhooks signatures, as the service signs them.
// A delivery carries webhook-id, webhook-timestamp and webhook-signature (one or more
// space-separated `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one per active
// secret during a rotation); the key is the base64 after `whsec_` in the endpoint's secret.

import { createHmac, timingSafeEqual } from "node:crypto";
import { MirixError } from "./errors.js";

export const SECRET_PREFIX = "whsec_";

/** The delivery is not signed by the secret, is malformed, or is too old (a replay). */
export class WebhookVerificationError extends MirixError {}

function key(secret) {
  if (typeof secret !== "string" || !secret.startsWith(SECRET_PREFIX)) {
    throw new WebhookVerificationError("a webhook secret starts with 'whsec_'");
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new WebhookVerificationError("a webhook secret is 'whsec_' followed by base64");
  }
  return Buffer.from(encoded, "base64");
}

const bytes = (payload) => (typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload));

/** The `v1,...` signature of one delivery under `secret`. */
export function sign(payload, { secret, messageId, timestamp }) {
  const hmac = createHmac("sha256", key(secret));
  hmac.update(`${messageId}.${timestamp}.`);
  hmac.update(bytes(payload));
  return `v1,${hmac.digest("base64")}`;
}

function header(headers, name) {
  if (typeof headers.get === "function") return headers.get(name) ?? undefined;
  const found = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : headers[found];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The decoded event of a delivery whose signature matches `secret` and whose timestamp is
 * within `toleranceSeconds` of now; WebhookVerificationError otherwise. Pass the raw body.
 */
export function verify(payload, headers, secret, { toleranceSeconds = 300, now } = {}) {
  const messageId = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!messageId || !stamp || !/^\d+$/.test(stamp) || !signatures) {
    throw new WebhookVerificationError("missing or malformed webhook-id/-timestamp/-signature headers");
  }
  const timestamp = Number(stamp);
  const current = now ?? Date.now() / 1000;
  if (Math.abs(current - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError("the delivery's timestamp is outside the tolerance (a replay?)");
  }
  const expected = Buffer.from(sign(payload, { secret, messageId, timestamp }));
  const matches = signatures
    .split(/\s+/)
    .filter(Boolean)
    .some((candidate) => {
      const given = Buffer.from(candidate);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  if (!matches) throw new WebhookVerificationError("no signature matches the secret");
  return JSON.parse(bytes(payload).toString("utf8"));
}
