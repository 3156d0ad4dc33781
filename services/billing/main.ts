// Wiring only: config, MySQL, NATS work queues (boleto, cnab, retorno), the artifacts client, the PDF
// render threads, one job engine per kind on its queue, the webhook sender and the RPC handlers. Migrations are applied
// in ready(); consumers start only after them.
import type { ServiceImpl } from "@connectrpc/connect";
import { createMysqlPool } from "../../libs/db/pool.js";
import { countTransactionRetries } from "../../libs/db/tx-metrics.js";
import { ensureSchema } from "../../libs/db/schema-ready.js";
import { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { JobKind } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { connectNats } from "../../libs/nats/connect.js";
import { servicePageTokens } from "../../libs/rpc/page-token.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { ArtifactStore } from "./jobs/artifacts-client.js";
import { BoletoUnits } from "./boleto/units.js";
import { readBillingConfig } from "./config.js";
import { BILLING_ERROR_DOMAIN } from "./errors.js";
import { createHandlers } from "./boleto/handlers.js";
import { JobEngine, type JobUnits } from "./jobs/engine.js";
import { ItemRepo } from "./jobs/item-repo.js";
import { JobRepo } from "./jobs/job-repo.js";
import { ensureQueues, queueNames, WorkQueue } from "./jobs/queue.js";
import { startReconciler } from "./jobs/reconcile.js";
import { startRetention } from "./jobs/retention.js";
import { remessaHandlers } from "./remessa/handlers.js";
import { RemessaRepo } from "./remessa/repo.js";
import { RemessaUnits } from "./remessa/units.js";
import { RenderPool } from "./boleto/render-pool.js";
import { retornoHandlers } from "./retorno/handlers.js";
import { RetornoRepo } from "./retorno/repo.js";
import { RetornoUnits } from "./retorno/units.js";
import { createBillingMetrics, registerOpenJobGauges } from "./metrics.js";
import { billingAccess, loadTenantTokens, tenantTokenResolver, trustedNetworkResolver } from "./auth/tenant-auth.js";
import { completionEventWriter } from "./webhooks/events.js";
import { webhookHandlers } from "./webhooks/handlers.js";
import { WebhookRepo } from "./webhooks/repo.js";
import { WebhookSender } from "./webhooks/sender.js";

await runService("billing", async ({ env, log, metrics }) => {
  const config = readBillingConfig(env);
  const tenantTokens = config.tenantAuth.mode === "tokens" ? loadTenantTokens(config.tenantAuth.file, log) : undefined;
  if (!tenantTokens)
    log.warn("BILLING_TRUST_NETWORK=true: billing does not authenticate callers; whoever reaches it may act for any tenant");
  const artifactsPeer = peerClient(env, "artifacts", ArtifactsService);
  const pool = createMysqlPool(config.mysqlUrl, { connectionLimit: config.mysqlConnectionLimit });
  countTransactionRetries(pool, metrics.registry);
  const nc = await connectNats(config.natsUrl, `billing-${process.pid}`);
  const boletoQueue = new WorkQueue(nc, queueNames(config.natsPrefix, "boleto"));
  const cnabQueue = new WorkQueue(nc, queueNames(config.natsPrefix, "cnab"));
  const retornoQueue = new WorkQueue(nc, queueNames(config.natsPrefix, "retorno"));
  const retornos = new RetornoRepo(pool);
  const jobs = new JobRepo(pool);
  const items = new ItemRepo(pool);
  const sublotes = new RemessaRepo(pool);
  const artifacts = new ArtifactStore(artifactsPeer.client);
  const renderPool = new RenderPool(config.renderThreads, config.itemTimeoutMs);
  const webhooks = new WebhookRepo(pool);
  const billingMetrics = createBillingMetrics(metrics.registry);
  registerOpenJobGauges(metrics.registry, () => jobs.openJobs());
  const sender = new WebhookSender(webhooks, config.webhook, log, billingMetrics);
  const completionEvent = completionEventWriter(webhooks, config.webhook.maxAttempts);
  const onFinished = () => sender.wake();
  const engine = (units: JobUnits, queue: WorkQueue) =>
    new JobEngine(units, {
      jobs,
      queue,
      log,
      tenantMaxRunningJobs: config.tenantMaxRunningJobs,
      artifactTtlMs: config.artifactTtlMs,
      completionEvent,
      onFinished,
      metrics: billingMetrics,
    });
  const boletoEngine = engine(
    new BoletoUnits({
      jobs,
      items,
      pool: renderPool,
      artifacts,
      ackWaitMs: config.ackWaitMs,
      jobTimeoutMs: config.jobTimeoutMs,
      artifactTtlMs: config.artifactTtlMs,
      metrics: billingMetrics,
    }),
    boletoQueue,
  );
  const remessaEngine = engine(new RemessaUnits({ jobs, items, sublotes, artifacts, artifactTtlMs: config.artifactTtlMs }), cnabQueue);
  const retornoEngine = engine(new RetornoUnits({ jobs, retornos, artifacts }), retornoQueue);
  const stops: (() => Promise<void> | void)[] = [];
  const pageTokens = servicePageTokens(config.pageTokenSecret, BILLING_ERROR_DOMAIN, log);
  const handlers: Partial<ServiceImpl<typeof BillingService>> = {
    ...createHandlers({
      jobs,
      items,
      queue: boletoQueue,
      artifacts,
      log,
      maxItems: config.maxItems,
      artifactTtlDays: config.artifactTtlDays,
      pageTokens,
    }),
    ...remessaHandlers({
      jobs,
      items,
      sublotes,
      queue: cnabQueue,
      artifacts,
      log,
      maxTitulos: config.remessaMaxTitulos,
      ...(config.remessaMaxTitulosPorArquivo ? { maxTitulosPorArquivo: config.remessaMaxTitulosPorArquivo } : {}),
      pageTokens,
    }),
    ...retornoHandlers({
      jobs,
      retornos,
      queue: retornoQueue,
      artifacts,
      log,
      inlineMaxBytes: config.retornoInlineMaxBytes,
      maxBytes: config.retornoMaxBytes,
      pageTokens,
    }),
    ...webhookHandlers({
      repo: webhooks,
      sender,
      allowHttp: config.webhook.allowHttp,
      allowPrivate: config.webhook.allowPrivate,
      maxAttempts: config.webhook.maxAttempts,
      pageTokens,
    }),
  };

  return {
    services: [serve(BillingService, handlers, billingAccess)],
    auth: { resolvers: [tenantTokens ? tenantTokenResolver(tenantTokens) : trustedNetworkResolver()] },
    async ready() {
      await ensureSchema(pool, config, log);
      const settings = (concurrency: number) => ({
        ackWaitMs: config.ackWaitMs,
        maxDeliver: config.maxDeliver,
        maxAckPending: concurrency * 4,
        replicas: config.natsReplicas,
      });
      await ensureQueues(nc, boletoQueue.names, settings(config.renderConcurrency));
      await ensureQueues(nc, cnabQueue.names, settings(config.cnabConcurrency));
      await ensureQueues(nc, retornoQueue.names, settings(config.retornoConcurrency));
      const run = (q: WorkQueue, consumer: string, n: number, e: JobEngine) =>
        q.run(consumer, n, config.ackWaitMs, config.maxDeliver, e.handle, e.onDead, log).stop;
      stops.push(
        run(boletoQueue, boletoQueue.names.controlConsumer, 2, boletoEngine),
        run(boletoQueue, boletoQueue.names.itemConsumer, config.renderConcurrency, boletoEngine),
        run(cnabQueue, cnabQueue.names.controlConsumer, 1, remessaEngine),
        run(cnabQueue, cnabQueue.names.itemConsumer, config.cnabConcurrency, remessaEngine),
        // A retorno's single unit starts and concludes its job: no control consumer.
        run(retornoQueue, retornoQueue.names.itemConsumer, config.retornoConcurrency, retornoEngine),
      );
      const reconciler = startReconciler({
        pool,
        queues: { [JobKind.BOLETO]: boletoQueue, [JobKind.REMESSA]: cnabQueue, [JobKind.RETORNO]: retornoQueue },
        log,
        intervalMs: config.reconcileIntervalMs,
        staleMs: Math.max(config.ackWaitMs, config.reconcileIntervalMs),
      });
      sender.start();
      stops.push(reconciler.stop, () => sender.stop());
      if (config.retentionMs > 0) {
        const retention = startRetention({
          pool,
          log,
          retentionMs: config.retentionMs,
          intervalMs: config.retentionSweepMs,
          onPurged: (n) => billingMetrics.jobsPurged.inc(n),
        });
        stops.push(retention.stop);
      }
      log.info(
        {
          prefix: config.natsPrefix,
          renderConcurrency: config.renderConcurrency,
          renderThreads: config.renderThreads,
          cnabConcurrency: config.cnabConcurrency,
        },
        "billing workers started",
      );
    },
    async close() {
      await Promise.all(stops.map((s) => s()));
      await renderPool.close();
      await nc.drain().catch(() => undefined);
      await pool.end();
      artifactsPeer.close();
    },
  };
});
