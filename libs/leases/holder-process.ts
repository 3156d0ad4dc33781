// A lease holder in its own process, for tests that kill, pause or isolate it:
//   tsx libs/leases/holder-process.ts <natsUrl> <bucket> <ttlMs> <key> <holder>
// Prints one JSON line per event: acquired (with the fence token), busy, lost (with the reason).
import { connect } from "@nats-io/transport-node";
import { KvLeaseManager } from "./nats-kv-leases.js";

const [url, bucket, ttl, key, holder] = process.argv.slice(2) as [string, string, string, string, string];
const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);

const nc = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
const leases = await KvLeaseManager.open(nc, { bucket, ttlMs: Number(ttl), holder });
const lease = await leases.tryAcquire(key);
if (!lease) {
  say({ event: "busy" });
  process.exit(3);
}
say({ event: "acquired", fence: lease.fenceToken.toString() });
lease.signal.addEventListener("abort", () => {
  const reason = lease.signal.reason as { why?: string } | string;
  say({ event: "lost", why: typeof reason === "string" ? reason : reason.why });
});
setInterval(() => undefined, 1 << 30);
