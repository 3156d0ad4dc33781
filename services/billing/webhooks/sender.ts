// Drains the webhook outbox: claims due deliveries, POSTs them signed (Standard Webhooks), and records
// the outcome with exponential backoff; after the attempt limit a delivery is DEAD_LETTERED. What a
// consumer answers never touches the job. The body is fixed at enqueue time; only the timestamp and
// signature are renewed per attempt.
import { Agent, fetch } from "undici";
import type { Logger } from "../../../libs/log/logger.js";
import { DeliveryState } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";
import type { DeliveryRow, EndpointRow, WebhookRepo } from "./repo.js";
import type { BillingMetrics } from "../metrics.js";
import { literalAddressProblem, publicOnlyLookup } from "./address.js";
import { signatureHeaders, signingSecrets } from "./signing.js";

export interface WebhookSettings {
  maxAttempts: number;
  timeoutMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  pollMs: number;
  concurrency: number;
  /** Deliver to loopback, private and link-local addresses too (development, in-cluster receivers). */
  allowPrivate: boolean;
}

export function backoffMs(attempt: number, s: Pick<WebhookSettings, "backoffBaseMs" | "backoffMaxMs">): number {
  return Math.min(s.backoffMaxMs, s.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}

export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Connections that refuse non-public addresses after DNS (undefined: any address). */
  private readonly dispatcher: Agent | undefined;

  constructor(
    private readonly repo: WebhookRepo,
    private readonly s: WebhookSettings,
    private readonly log: Logger,
    private readonly metrics?: BillingMetrics,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.dispatcher = s.allowPrivate ? undefined : new Agent({ connect: { lookup: publicOnlyLookup } });
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.s.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Runs a pass now (a job just finished), or right after the current one. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) => this.log.warn({ err }, "webhook pass failed"))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.dispatcher?.close();
  }

  private async pass(): Promise<void> {
    for (;;) {
      // The lease outlives one attempt (bounded by the timeout), so a live sender is never raced by another.
      const due = await this.repo.claimDue(this.s.concurrency, 2 * this.s.timeoutMs + 1_000);
      if (due.length === 0) return;
      await Promise.all(due.map((d) => this.deliver(d)));
    }
  }

  private headers(endpoint: EndpointRow, d: DeliveryRow): Record<string, string> {
    const now = this.clock();
    return signatureHeaders(signingSecrets(endpoint, now), d.id, Math.floor(now.getTime() / 1000), d.body);
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const endpoint = await this.repo.endpoint(d.tenant);
    if (!endpoint?.enabled || (endpoint.eventTypes.length > 0 && !endpoint.eventTypes.includes(d.eventType))) {
      const why = !endpoint ? "no endpoint configured" : !endpoint.enabled ? "endpoint disabled" : "event type not subscribed";
      await this.repo.record(d.id, {
        state: DeliveryState.SKIPPED,
        httpStatus: 0,
        error: why,
        nextAttemptAt: null,
        countsAsAttempt: false,
      });
      this.metrics?.webhookAttempts.inc({ outcome: "skipped" });
      return;
    }
    const attempt = d.attempts + 1;
    let status = 0;
    let error = "";
    try {
      // An IP literal never goes through DNS: checked here; names are checked as their sockets connect.
      const literal = this.s.allowPrivate ? undefined : literalAddressProblem(endpoint.url);
      if (literal) throw new Error(literal);
      const res = await fetch(endpoint.url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "malha-billing-webhooks/1", ...this.headers(endpoint, d) },
        body: d.body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.s.timeoutMs),
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error =
        (err as Error).name === "TimeoutError"
          ? `timeout after ${this.s.timeoutMs} ms`
          : `request failed: ${(err as Error).cause ? String(((err as Error).cause as Error).message ?? (err as Error).cause) : (err as Error).message}`;
    }
    if (error === "") {
      await this.repo.record(d.id, {
        state: DeliveryState.SUCCEEDED,
        httpStatus: status,
        error: "",
        nextAttemptAt: null,
        countsAsAttempt: true,
      });
      this.metrics?.webhookAttempts.inc({ outcome: "succeeded" });
      this.log.info({ deliveryId: d.id, jobId: d.jobId, attempt }, "webhook delivered");
      return;
    }
    const dead = attempt >= d.attemptLimit;
    await this.repo.record(d.id, {
      state: dead ? DeliveryState.DEAD_LETTERED : DeliveryState.RETRYING,
      httpStatus: status,
      error,
      nextAttemptAt: dead ? null : new Date(this.clock().getTime() + backoffMs(attempt, this.s)),
      countsAsAttempt: true,
    });
    this.metrics?.webhookAttempts.inc({ outcome: dead ? "dead_lettered" : "retrying" });
    // The URL may embed credentials: log the delivery, never the endpoint or its secret.
    this.log.warn({ deliveryId: d.id, jobId: d.jobId, attempt, status, error, deadLettered: dead }, "webhook attempt failed");
  }
}
