// Creating a KV bucket that other replicas may be creating at the same moment.
import type { NatsConnection } from "@nats-io/transport-node";
import { Kvm, type KV, type KvOptions } from "@nats-io/kv";

/**
 * The bucket, created if it does not exist. nats.js's `create` asks for the stream and adds it when
 * missing: two replicas starting together on a server without it can both find none, and the server
 * then refuses the later add (seen once as "subjects overlap with an existing stream" when a test's two
 * coordinators started at once on a fresh server). A failed create therefore opens the bucket the other
 * replica made; when there is none, the create's own error is what the caller gets.
 */
export async function createOrOpenBucket(nc: NatsConnection, name: string, opts: Partial<KvOptions>): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(name, opts);
  } catch (err) {
    try {
      // open() binds without asking the server: status() is what finds the stream, or not.
      const kv = await kvm.open(name);
      await kv.status();
      return kv;
    } catch {
      throw err;
    }
  }
}
