// npx tsx bench/sweep-parts.ts — the coordinator's per-sweep work that grows with the fleet, without the
// rest of the mesh (issue #20, bench/README.md fleet section): (a) reading who holds each of F feeds'
// leases from NATS KV, H of them held; (b) queueing F jobs into a worker pool of W busy workers, each
// enqueue checking that the key is not queued already (what `Scheduler.enqueueFeeds` does per feed), then
// a second sweep over the same keys. Needs NATS_URL. Flags: --feeds 11140 --held 128 --workers 128.
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { feedLeaseKey } from "../libs/leases/keys.js";
import { KvLeaseManager } from "../libs/leases/nats-kv-leases.js";
import { WorkerPool } from "../services/coordinator/pool.js";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}
const FEEDS = Number(flag("feeds", "11140"));
const HELD = Number(flag("held", "128"));
const WORKERS = Number(flag("workers", "128"));
const ms = (t0: bigint) => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0);

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const bucket = `bench_sweep_${randomBytes(4).toString("hex")}`;
const leases = await KvLeaseManager.open(nc, { bucket, ttlMs: 120_000, holder: "bench" });
const keys = Array.from({ length: FEEDS }, (_, i) => feedLeaseKey(String(1_000_000 + i), 1, "1"));
const held = await Promise.all(keys.slice(0, HELD).map((k) => leases.tryAcquire(k)));

let t0 = process.hrtime.bigint();
let found = 0;
for (const k of keys) if (await leases.holderOf(k)) found++;
console.log(`(a) ${FEEDS} feeds, ${HELD} held: one KV get per feed ${ms(t0)} ms (${found} held)`);
const snapshot = (leases as { holders?: () => Promise<Map<string, string>> }).holders;
if (snapshot) {
  t0 = process.hrtime.bigint();
  const all = await snapshot.call(leases);
  console.log(`(a) ${FEEDS} feeds, ${HELD} held: one snapshot of the bucket ${ms(t0)} ms (${all.size} held)`);
}

const never = new Promise<void>(() => undefined);
const pool = new WorkerPool<{ key: string }>("bench", WORKERS, () => never);
for (const sweep of [1, 2]) {
  t0 = process.hrtime.bigint();
  let queued = 0;
  for (const key of keys) if (!pool.has(key) && pool.enqueue({ key })) queued++;
  console.log(`(b) sweep ${sweep}: ${FEEDS} feeds into a pool of ${WORKERS} busy workers ${ms(t0)} ms (${queued} queued)`);
}

for (const lease of held) await lease?.release();
await (await new Kvm(nc).open(bucket)).destroy();
await nc.close();
process.exit(0);
