// The services' NATS connection against the stack's real server: without async traces, a failed request
// still says what failed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "./connect.js";

let nc: NatsConnection;
beforeAll(async () => {
  const url = process.env.NATS_URL;
  if (!url) throw new Error("NATS_URL is not set: run `bash scripts/stack.sh start` and export its env");
  nc = await connectNats(url, "connect-test");
});
afterAll(async () => {
  await nc?.close();
});

describe("connectNats", () => {
  it("connects and answers requests", async () => {
    expect(nc.info?.server_id).toBeTruthy();
    const sub = nc.subscribe("malha.test.echo", { max: 1, callback: (_err, msg) => msg.respond(msg.data) });
    const reply = await nc.request("malha.test.echo", "olá", { timeout: 2000 });
    expect(reply.string()).toBe("olá");
    sub.unsubscribe();
  });

  it("names the failure of a request nobody answers, and of one answered too late", async () => {
    const noResponders = await nc.request("malha.test.nobody", "x", { timeout: 2000 }).catch((e: unknown) => e as Error);
    expect(noResponders).toBeInstanceOf(Error);
    expect(String(noResponders)).toMatch(/no responders/i);

    const sub = nc.subscribe("malha.test.silent", { callback: () => undefined });
    await nc.flush();
    const late = await nc.request("malha.test.silent", "x", { timeout: 200 }).catch((e: unknown) => e as Error);
    expect(late).toBeInstanceOf(Error);
    expect(String(late)).toMatch(/timeout/i);
    sub.unsubscribe();
  });
});
