// Slots against a real nats-server: one taker per key per period, across connections (replicas), and
// the key free again once the period is over.
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KvSlots } from "./slots.js";

const prefix = `slots_test_${randomBytes(4).toString("hex")}`;
const PERIOD = 1500;
let a: NatsConnection;
let b: NatsConnection;

beforeAll(async () => {
  const servers = process.env.NATS_URL ?? "nats://127.0.0.1:14222";
  [a, b] = await Promise.all([connect({ servers }), connect({ servers })]);
});
afterAll(async () => {
  await (await new Kvm(a).open(`${prefix}_${PERIOD}`)).destroy().catch(() => undefined);
  await Promise.all([a?.close(), b?.close()]);
});

describe("KvSlots", () => {
  it("gives a key's slot to one of two replicas per period, and again after it", async () => {
    const [one, two] = await Promise.all([
      KvSlots.open(a, { bucketPrefix: prefix, periodMs: PERIOD, holder: "one" }),
      KvSlots.open(b, { bucketPrefix: prefix, periodMs: PERIOD, holder: "two" }),
    ]);
    const first = await Promise.all([one.take("cert.3550308.1"), two.take("cert.3550308.1")]);
    expect(first.filter(Boolean)).toHaveLength(1);
    // Another certificate has its own slot.
    expect(await two.take("cert.3304557.1")).toBe(true);
    expect(await one.take("cert.3550308.1")).toBe(false);
    // Once the period is over the key is gone by itself (nobody deleted it).
    let again = false;
    for (let i = 0; i < 100 && !again; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await one.take("cert.3550308.1");
    }
    expect(again).toBe(true);
    await expect(one.take("bad key")).rejects.toThrow(/invalid lease key/);
  });
});
