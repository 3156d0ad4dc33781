// JetStream work queues, one stream per task class (docs/domain/toolchain.md §2.2): explicit ack, ack_wait longer than the
// longest task with `working()` heartbeats while it runs, max_deliver then a dead-letter copy, and
// publish dedupe by message id. Subjects and consumers carry a prefix so deployments and test runs never
// share queues. NATS 2.9: one filter subject per consumer, so each consumer owns a subject subtree.
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JsMsg } from "@nats-io/jetstream";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { contextFrom, inSpan, SpanKind, traceHeaders } from "../../../libs/tracing/spans.js";
import type { Logger } from "../../../libs/log/logger.js";

const nanos = (ms: number) => ms * 1_000_000;

/** Task classes, each with its own stream, consumers and concurrency. */
export type TaskClass = "boleto" | "cnab" | "retorno";

export type Task =
  | { type: "job"; jobId: string; round: number }
  | { type: "finalize"; jobId: string; round: number }
  | { type: "item"; jobId: string; position: number; attempt: number }
  | { type: "sublote"; jobId: string; index: number; attempt: number }
  | { type: "retorno"; jobId: string };

export interface QueueNames {
  stream: string;
  /** Per-unit work (items, sub-batches, files). */
  itemSubject: string;
  controlSubject: (kind: "job" | "finalize") => string;
  itemConsumer: string;
  controlConsumer: string;
  dlqStream: string;
  dlqSubject: string;
}

export function queueNames(prefix: string, cls: TaskClass = "boleto"): QueueNames {
  return {
    stream: `${prefix}_${cls}`,
    itemSubject: `${prefix}.${cls}.work`,
    controlSubject: (kind) => `${prefix}.${cls}.ctl.${kind}`,
    itemConsumer: `${prefix}_${cls}_work`,
    controlConsumer: `${prefix}_${cls}_control`,
    dlqStream: `${prefix}_dlq`,
    dlqSubject: `${prefix}.dlq.${cls}`,
  };
}

const isWork = (t: Task) => t.type === "item" || t.type === "sublote" || t.type === "retorno";

function msgIdOf(t: Task): string {
  switch (t.type) {
    case "item":
      return `${t.jobId}:item:${t.position}:${t.attempt}`;
    case "sublote":
      return `${t.jobId}:sublote:${t.index}:${t.attempt}`;
    case "retorno":
      return `${t.jobId}:retorno`;
    default:
      return `${t.jobId}:${t.type}:${t.round}`;
  }
}

export interface QueueSettings {
  ackWaitMs: number;
  maxDeliver: number;
  /** Messages a consumer hands out before acks come back (≥ this process's concurrency). */
  maxAckPending: number;
  /** JetStream replicas of the streams (1 on a single server, 3 on a 3-node cluster). */
  replicas: number;
}

/** Creates (or updates) the streams and durable consumers; safe to run from every replica at start. */
export async function ensureQueues(nc: NatsConnection, names: QueueNames, s: QueueSettings): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const streams: [string, string[], RetentionPolicy][] = [
    [names.stream, [`${names.itemSubject}`, `${names.controlSubject("job").replace(/\.job$/, ".>")}`], RetentionPolicy.Workqueue],
    [names.dlqStream, [names.dlqSubject.replace(/[^.]+$/, ">")], RetentionPolicy.Limits],
  ];
  for (const [name, subjects, retention] of streams) {
    const config = {
      name,
      subjects,
      retention,
      storage: StorageType.File,
      num_replicas: s.replicas,
      duplicate_window: nanos(120_000),
      ...(retention === RetentionPolicy.Limits ? { max_age: nanos(30 * 86_400_000) } : {}),
    };
    const exists = await jsm.streams.info(name).then(
      () => true,
      () => false,
    );
    try {
      await (exists ? jsm.streams.update(name, config) : jsm.streams.add(config));
    } catch (err) {
      throw new Error(
        `cannot ${exists ? "update" : "create"} stream ${name} with ${s.replicas} replica(s) (NATS_REPLICAS): ${(err as Error).message}`,
      );
    }
  }
  const consumer = (durable: string, filter: string) => ({
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(s.ackWaitMs),
    max_deliver: s.maxDeliver,
    filter_subject: filter,
    max_ack_pending: Math.max(64, s.maxAckPending),
  });
  await jsm.consumers.add(names.stream, consumer(names.itemConsumer, names.itemSubject));
  await jsm.consumers.add(names.stream, consumer(names.controlConsumer, names.controlSubject("job").replace(/\.job$/, ".>")));
}

export class WorkQueue {
  private readonly js: JetStreamClient;
  constructor(
    nc: NatsConnection,
    readonly names: QueueNames,
  ) {
    this.js = jetstream(nc);
  }

  /** Deduplicated by id within the stream's window, so a re-publish after a crash is harmless. */
  async publish(task: Task, msgIdOverride?: string): Promise<void> {
    const subject = isWork(task) ? this.names.itemSubject : this.names.controlSubject(task.type as "job" | "finalize");
    const msgID = msgIdOverride ?? msgIdOf(task);
    // A PRODUCER span whose context travels in the message headers: the task's handling, in whichever
    // billing process pulls it, continues the trace of the call (or task) that queued it.
    await inSpan(
      `${subject} publish`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { "messaging.system": "nats", "messaging.destination.name": subject, "messaging.message.id": msgID },
      },
      async () => {
        const h = natsHeaders();
        for (const [k, v] of Object.entries(traceHeaders())) h.set(k, v);
        await this.js.publish(subject, JSON.stringify(task), { msgID, headers: h });
      },
    );
  }

  async deadLetter(task: unknown, reason: string): Promise<void> {
    await this.js.publish(this.names.dlqSubject, JSON.stringify({ task, reason, at: new Date().toISOString() }));
  }

  /**
   * Runs `concurrency` pull loops on a durable consumer. `handle` returns normally to ack, or returns
   * `{ retryInMs }` to nak with a delay; a throw naks with backoff, and on the last delivery `onDead`
   * records the failure, the task is copied to the dead-letter stream and terminated. Heartbeats
   * (`working`) run while a task is handled.
   */
  run(
    consumer: string,
    concurrency: number,
    ackWaitMs: number,
    maxDeliver: number,
    handle: (task: Task, msg: JsMsg) => Promise<void | { retryInMs: number }>,
    onDead: (task: Task, err: unknown) => Promise<void>,
    log: Logger,
  ): { stop: () => Promise<void> } {
    let stopping = false;
    const loop = async () => {
      const c = await this.js.consumers.get(this.names.stream, consumer);
      while (!stopping) {
        let m: JsMsg | null;
        try {
          m = await c.next({ expires: 2000 });
        } catch (err) {
          if (stopping) return;
          log.warn({ err, consumer }, "pull failed; retrying");
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        if (!m) continue;
        const heartbeat = setInterval(() => m!.working(), Math.max(200, Math.floor(ackWaitMs / 3)));
        let task: Task | undefined;
        try {
          task = JSON.parse(m.string()) as Task;
          const parsed = task;
          const msg = m;
          const out = await inSpan(
            `${m.subject} process`,
            {
              kind: SpanKind.CONSUMER,
              parent: contextFrom((k) => msg.headers?.get(k) || undefined),
              attributes: {
                "messaging.system": "nats",
                "messaging.destination.name": m.subject,
                "messaging.consumer.group.name": consumer,
                "messaging.message.delivery_count": m.info.deliveryCount,
              },
            },
            () => handle(parsed, msg),
          );
          if (out && "retryInMs" in out) m.nak(out.retryInMs);
          else await m.ackAck().catch(() => undefined);
        } catch (err) {
          if (m.info.deliveryCount >= maxDeliver || task === undefined) {
            log.error({ err, consumer, delivery: m.info.deliveryCount, task }, "task dead-lettered");
            if (task) await onDead(task, err).catch((e: unknown) => log.error({ err: e }, "recording a dead task failed"));
            await this.deadLetter(task ?? m.string(), (err as Error)?.message ?? String(err)).catch(() => undefined);
            m.term("dead-lettered");
          } else {
            log.warn({ err, consumer, delivery: m.info.deliveryCount }, "task failed; it will be redelivered");
            // Exponential backoff for transient faults: 0.5 s, 1 s, 2 s … capped at 30 s.
            m.nak(Math.min(30_000, 500 * 2 ** Math.min(10, m.info.deliveryCount - 1)));
          }
        } finally {
          clearInterval(heartbeat);
        }
      }
    };
    const loops = Array.from({ length: concurrency }, () =>
      loop().catch((err: unknown) => {
        if (!stopping) log.error({ err, consumer }, "consumer loop ended");
      }),
    );
    return {
      stop: async () => {
        stopping = true;
        await Promise.all(loops);
      },
    };
  }
}
