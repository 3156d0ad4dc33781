// Remessa job RPCs. Creation groups the títulos into deterministic sub-batches at once (returned in the
// response); títulos that cannot be placed (no bank, an id too long for CNAB, a repeated nosso número)
// are FAILED from the start, and repeated ids SKIPPED.
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { agruparSubLotes, bancoAtribuiNossoNumero } from "../../../libs/cobranca/index.js";
import { BoletoSchema } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { CreateRemessaJobRequestSchema, type BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import {
  CnabLayout,
  RemessaFileSchema,
  RemessaJobSchema,
  RemessaTituloSchema,
  RemessaTituloStatusSchema,
  SubloteSchema,
  SubloteState,
  type RemessaJob,
} from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, ItemState, JobKind } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import { LINK_TTL } from "../../../libs/artifacts/client.js";
import { durationMsOf } from "../../../libs/rpc/duration.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import type { PageTokens } from "../../../libs/rpc/page-token.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import { badRequest, checkTenant, itemNotFound, jobNotFinished, jobNotFound, noItems, tooManyItems } from "../errors.js";
import { actingTenant } from "../auth/acting-tenant.js";
import { assignItemIds } from "../jobs/item-ids.js";
import type { ItemRepo } from "../jobs/item-repo.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import type { WorkQueue } from "../jobs/queue.js";
import { agrupavel, layoutNumber, MAX_REMESSA_ID, nossoNumeroDoBanco, type TituloAgrupavel } from "./input.js";
import type { RemessaRepo, SubloteRow } from "./repo.js";
import { isFinalJob, jobStateName } from "../jobs/states.js";
import { artifactRefOf, countersOf, errorsOf, ts } from "../jobs/to-proto.js";
import { BANK_RULES_VERSION, TEMPLATE_VERSION } from "../versions.js";
import { remessaDetailsJson, remessaDetailsOf } from "./details.js";

export interface RemessaHandlerDeps {
  jobs: JobRepo;
  items: ItemRepo;
  sublotes: RemessaRepo;
  queue: WorkQueue;
  artifacts: ArtifactStore;
  log: Logger;
  maxTitulos: number;
  maxTitulosPorArquivo?: number;
  pageTokens: PageTokens;
  clock?: () => Date;
}

const keyOf = (s: SubloteRow) => ({ ...s.chave, layout: s.chave.layout === 400 ? CnabLayout.CNAB_LAYOUT_400 : CnabLayout.CNAB_LAYOUT_240 });

export function remessaHandlers(d: RemessaHandlerDeps): Partial<ServiceImpl<typeof BillingService>> {
  async function load(tenant: string, jobId: string): Promise<JobRow> {
    checkTenant(tenant);
    if (jobId === "") throw badRequest("job_id is required");
    const job = await d.jobs.get(tenant, jobId);
    if (!job || job.kind !== JobKind.REMESSA) throw jobNotFound(jobId);
    return job;
  }

  async function message(job: JobRow): Promise<RemessaJob> {
    const subs = await d.sublotes.list(job.id);
    return create(RemessaJobSchema, {
      jobId: job.id,
      tenant: job.tenant,
      state: job.state,
      layout: remessaDetailsOf(job.detailsJson)?.layout ?? CnabLayout.CNAB_LAYOUT_UNSPECIFIED,
      counters: countersOf(job.totalItems, await d.items.counts(job.id)),
      sublotes: subs.map((s) =>
        create(SubloteSchema, {
          subloteId: s.subloteId,
          key: keyOf(s),
          titulos: s.titulos,
          valorTotalCents: BigInt(s.valorTotalCents),
          state: s.state,
          errors: errorsOf(s.errors),
          attemptCount: s.attemptCount,
          ...(s.file ? { file: fileOf(s) } : {}),
        }),
      ),
      metadata: job.metadata,
      ...(job.duracaoMs !== null
        ? { metrics: { duracaoMs: BigInt(job.duracaoMs), msPorItem: job.processedItems ? job.duracaoMs / job.processedItems : 0 } }
        : {}),
      idempotencyKey: job.idempotencyKey,
      createdAt: ts(job.createdAt),
      startedAt: ts(job.startedAt),
      finishedAt: ts(job.finishedAt),
      updatedAt: ts(job.updatedAt),
    });
  }

  const fileOf = (s: SubloteRow, link?: { url: string; expiresAt: Date | undefined }, expiresAt?: Date | null) =>
    create(RemessaFileSchema, {
      subloteId: s.subloteId,
      key: keyOf(s),
      name: s.file!.artifact.name,
      sizeBytes: BigInt(s.file!.artifact.sizeBytes),
      sha256: s.file!.artifact.sha256,
      registros: s.file!.registros,
      titulos: s.file!.titulos,
      valorTotalCents: BigInt(s.file!.valorTotalCents),
      nsa: s.nsa ?? 0,
      generatedAt: ts(s.generatedAt),
      artifact: artifactRefOf(s.file!.artifact, link, expiresAt),
    });

  return {
    async createRemessaJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      if (req.environment === Environment.UNSPECIFIED)
        throw badRequest("environment is required (PRODUCTION or SANDBOX: separate NSA sequences)");
      if (req.layout === CnabLayout.CNAB_LAYOUT_UNSPECIFIED) throw badRequest("layout is required (CNAB_LAYOUT_240 or CNAB_LAYOUT_400)");
      if (req.titulos.length === 0) throw noItems();
      if (req.titulos.length > d.maxTitulos) throw tooManyItems(req.titulos.length, d.maxTitulos);
      if (req.idempotencyKey.length > 255) throw badRequest("idempotency_key is longer than 255 characters");
      const boletos = req.titulos.map((t) => t.boleto ?? create(BoletoSchema));
      const ids = assignItemIds(boletos);
      const preErrors = new Map<number, { code: string; field: string; message: string }>();
      const candidates: TituloAgrupavel[] = [];
      const seenNn = new Set<string>();
      ids.forEach((a, i) => {
        const b = boletos[i]!;
        if (a.skipped) return;
        const fail = (code: string, field: string, message: string) => preErrors.set(a.position, { code, field, message });
        if (a.preError) return fail(a.preError.code, a.preError.field, a.preError.message);
        if (a.itemId.length > MAX_REMESSA_ID)
          return fail("EXTERNAL_ID_TOO_LONG", "external_id", `the CNAB título id holds ${MAX_REMESSA_ID} characters`);
        if (!b.conta || !/^\d{3}$/.test(b.conta.banco)) return fail("CAMPO_INVALIDO", "conta.banco", "banco must be 3 digits");
        const g = agrupavel(b, a.itemId, a.position, req.layout);
        if (g.nossoNumero !== undefined && bancoAtribuiNossoNumero(g.banco))
          return fail("CAMPO_INVALIDO", "nosso_numero", nossoNumeroDoBanco(g.banco));
        if (g.nossoNumero !== undefined) {
          const nk = [g.banco, g.convenio, g.agencia, g.conta, g.carteira, g.nossoNumero.trim().replace(/^0+(?=\d)/, "")].join("|");
          if (seenNn.has(nk))
            return fail("NOSSO_NUMERO_DUPLICADO", "nosso_numero", "the same nosso número appears twice for this convênio");
          seenNn.add(nk);
        }
        candidates.push(g);
      });
      const subs = agruparSubLotes(candidates, d.maxTitulosPorArquivo ? { maxTitulos: d.maxTitulosPorArquivo } : {});
      const subIndex = new Map<number, number>();
      subs.forEach((s, i) => s.itens.forEach((it) => subIndex.set(it.position, i)));
      const shared = (pick: (b: (typeof boletos)[number]) => string) =>
        boletos.every((b) => pick(b) === pick(boletos[0]!)) ? pick(boletos[0]!) : "";
      const requestSha256 = createHash("sha256")
        .update("remessa")
        .update(toBinary(CreateRemessaJobRequestSchema, create(CreateRemessaJobRequestSchema, { ...req, tenant, requestedBy: "" })))
        .digest("hex");
      const { jobId, replay } = await d.jobs.create({
        tenant,
        kind: JobKind.REMESSA,
        environment: req.environment,
        idempotencyKey: req.idempotencyKey,
        requestSha256,
        requestedBy: req.requestedBy,
        metadata: {
          templateVersion: `cnab-${layoutNumber(req.layout)}`,
          bankRulesVersion: BANK_RULES_VERSION,
          banco: shared((b) => b.conta?.banco ?? ""),
          carteira: shared((b) => b.conta?.carteira ?? ""),
          convenio: shared((b) => b.conta?.convenio ?? ""),
          tenant,
          requestedBy: req.requestedBy,
          environment: req.environment,
        },
        detailsJson: remessaDetailsJson({ layout: req.layout, template: TEMPLATE_VERSION }),
        items: ids.map((a, i) => {
          const pre = preErrors.get(a.position);
          return {
            position: a.position,
            itemId: a.itemId,
            state: a.skipped ? ItemState.SKIPPED : pre ? ItemState.FAILED : ItemState.PENDING,
            inputJson: toJsonString(RemessaTituloSchema, req.titulos[i]!),
            errorsJson:
              a.preError && a.skipped
                ? JSON.stringify([{ ...a.preError, retryable: false }])
                : pre
                  ? JSON.stringify([{ ...pre, retryable: false }])
                  : null,
            subloteIndex: subIndex.get(a.position) ?? null,
          };
        }),
        also: async (c, id) => {
          await d.sublotes.insert(
            c,
            id,
            subs.map((s, i) => ({
              index: i,
              subloteId: s.id,
              chave: s.chave,
              titulos: s.itens.length,
              valorTotalCents: s.itens.reduce((n, it) => n + Number(boletos[it.position - 1]!.valorCents), 0),
            })),
          );
          // Títulos without a nosso número get theirs now, in position order, so the sub-batch is fixed.
          const blocks = new Map<string, { banco: string; convenio: string; positions: number[] }>();
          for (const g of candidates) {
            // a bank that assigns the nosso número gets none of ours: its título goes by its id (decision 0033)
            if (g.nossoNumero !== undefined || bancoAtribuiNossoNumero(g.banco)) continue;
            const conta = boletos[g.position - 1]!.conta!;
            const convenio = (conta.convenio || `${conta.agencia}/${conta.conta}`).slice(0, 32);
            const k = `${g.banco}|${convenio}`;
            const block = blocks.get(k) ?? { banco: g.banco, convenio, positions: [] };
            block.positions.push(g.position);
            blocks.set(k, block);
          }
          for (const b of [...blocks.values()].sort((x, y) => (x.banco + x.convenio < y.banco + y.convenio ? -1 : 1))) {
            await d.items.allocateBlock(
              c,
              id,
              { tenant, environment: req.environment, banco: b.banco, convenio: b.convenio },
              b.positions.sort((x, y) => x - y),
            );
          }
        },
      });
      // Read before enqueueing: the answer is the job as committed, not a fast worker's later state.
      const answer = { job: await message((await d.jobs.get(tenant, jobId))!), idempotentReplay: replay };
      if (!replay)
        await d.queue
          .publish({ type: "job", jobId, round: 0 })
          .catch((err: unknown) => d.log.warn({ err, jobId }, "enqueue failed; the reconciler will retry"));
      return answer;
    },

    async getRemessaJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      return { job: await message(await load(tenant, req.jobId)) };
    },

    async listRemessaTitulos(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await load(tenant, req.jobId);
      const size = pageSizeOf(req.pageSize, { default: 100, max: 1000 });
      let subloteIndex: number | undefined;
      const subs = await d.sublotes.list(job.id);
      if (req.subloteId !== "") {
        const s = subs.find((x) => x.subloteId === req.subloteId);
        if (!s) throw itemNotFound(job.id, req.subloteId);
        subloteIndex = s.index;
      }
      const filter = { tenant: job.tenant, jobId: job.id, subloteId: req.subloteId, state: req.state };
      const [after] = d.pageTokens.decode("ListRemessaTitulos", filter, req.pageToken, ["int"]) ?? [0];
      const rows = await d.items.page(job.id, {
        ...(req.state ? { state: req.state } : {}),
        ...(subloteIndex !== undefined ? { subloteIndex } : {}),
        afterPosition: after,
        limit: size + 1,
        withInput: true,
      });
      const page = rows.slice(0, size);
      return {
        titulos: page.map((r) =>
          create(RemessaTituloStatusSchema, {
            itemId: r.itemId,
            position: r.position,
            subloteId: r.subloteIndex !== null ? (subs[r.subloteIndex]?.subloteId ?? "") : "",
            state: r.state,
            nossoNumero: r.nossoNumero ?? (JSON.parse(r.inputJson) as { boleto?: { nossoNumero?: string } }).boleto?.nossoNumero ?? "",
            errors: r.state === ItemState.COMPLETED ? [] : errorsOf(r.errors),
          }),
        ),
        nextPageToken: rows.length > size ? d.pageTokens.encode("ListRemessaTitulos", filter, [page.at(-1)!.position]) : "",
      };
    },

    async listRemessaFiles(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await load(tenant, req.jobId);
      const ttl = durationMsOf("link_ttl", req.linkTtl, LINK_TTL);
      const all = (await d.sublotes.list(job.id)).filter((s) => s.state === SubloteState.COMPLETED && s.file);
      const size = pageSizeOf(req.pageSize);
      // link_ttl changes the links, not which files come next, so it is not part of the filter.
      const filter = { tenant: job.tenant, jobId: job.id };
      const [after] = d.pageTokens.decode("ListRemessaFiles", filter, req.pageToken, ["int"]) ?? [0];
      const page = all.filter((s) => s.index + 1 > after).slice(0, size);
      const zipRef = isFinalJob(job.state) ? job.manifest?.zip : undefined;
      const ids = [...page.map((s) => s.file!.artifact.artifactId), ...(zipRef ? [zipRef.artifactId] : [])];
      const links = await d.artifacts.links(job.tenant, ids, ttl);
      const files = page.map((s) => fileOf(s, links.get(s.file!.artifact.artifactId), job.artifactsExpiresAt));
      const zip = zipRef ? artifactRefOf(zipRef, links.get(zipRef.artifactId), job.artifactsExpiresAt) : undefined;
      const more = all.filter((s) => s.index + 1 > after).length > size;
      return {
        files,
        ...(zip ? { zip } : {}),
        totalRegistros: BigInt(all.reduce((n, s) => n + s.file!.registros, 0)),
        expiresAt: ts(job.artifactsExpiresAt),
        nextPageToken: more ? d.pageTokens.encode("ListRemessaFiles", filter, [page.at(-1)!.index + 1]) : "",
      };
    },

    async retryRemessaSublotes(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await load(tenant, req.jobId);
      if (!isFinalJob(job.state)) throw jobNotFinished(job.id, jobStateName(job.state));
      const subs = await d.sublotes.list(job.id);
      for (const id of req.subloteIds) if (!subs.some((s) => s.subloteId === id)) throw itemNotFound(job.id, id);
      const chosen = subs.filter(
        (s) => s.state === SubloteState.FAILED && (req.subloteIds.length === 0 || req.subloteIds.includes(s.subloteId)),
      );
      if (chosen.length === 0) return { job: await message(job), requeued: 0 };
      if (!(await d.jobs.startRetryRound(job.id, job.state, job.retryRounds))) {
        throw jobNotFinished(job.id, "changing state");
      }
      const requeued = await d.sublotes.requeueFailed(
        job.id,
        chosen.map((s) => s.index),
      );
      // Títulos that failed with their sub-batch (transient) go back to PENDING; refused ones stay FAILED.
      for (const r of requeued) {
        const rows = await d.items.page(job.id, { subloteIndex: r.index, afterPosition: 0, limit: 100_000 });
        await d.items.markMany(
          job.id,
          rows.filter((x) => x.state === ItemState.FAILED && x.errors.every((e) => e.retryable)).map((x) => x.position),
          ItemState.PENDING,
          null,
          [ItemState.FAILED],
        );
      }
      const answer = await message((await d.jobs.get(job.tenant, job.id))!);
      for (const r of requeued) await d.queue.publish({ type: "sublote", jobId: job.id, index: r.index, attempt: r.attempt });
      if (requeued.length === 0) await d.queue.publish({ type: "finalize", jobId: job.id, round: job.retryRounds + 1 });
      d.log.info({ jobId: job.id, requeued: requeued.length, requestedBy: req.requestedBy }, "remessa sub-batches re-queued");
      return { job: answer, requeued: requeued.length };
    },
  };
}
