// The contract's rules (buf.validate annotations in the protos) are what the running services enforce:
// requests that break them are INVALID_ARGUMENT naming the field, before anything is stored, on every
// service; a boleto without a value is issued only when the request says so.
import { create, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateBoletoJobRequestSchema } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { CnabLayout } from "../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { connectJson } from "../../test/support/connect-json.js";
import { boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
});

const TENANT = "contract";
const CREATE = "/malha.billing.v1.BillingService/CreateBoletoJob";

/** A valid CreateBoletoJob body as Connect JSON, to be spoilt by each test. */
function body(): Record<string, unknown> {
  const req = create(CreateBoletoJobRequestSchema, {
    tenant: TENANT,
    idempotencyKey: `k-${Math.random()}`,
    environment: Environment.SANDBOX,
    items: [boletoValido(1)],
  });
  return JSON.parse(toJsonString(CreateBoletoJobRequestSchema, req)) as Record<string, unknown>;
}

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

async function jobCount(): Promise<number> {
  return (await mesh.billingClient().listJobs({ tenant: TENANT, pageSize: 1000 })).jobs.length;
}

describe("contract validation on the billing service", () => {
  it("refuses a misspelt JSON field, naming it, and stores nothing", async () => {
    const b = body();
    const item = (b.items as Record<string, unknown>[])[0]!;
    item.valorCentz = item.valorCents;
    delete item.valorCents;
    const before = await jobCount();
    const res = await connectJson(mesh.billing[0]!.baseUrl, CREATE, JSON.stringify(b));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("invalid_argument");
    expect(res.body.message).toMatch(/valorCentz/);
    expect(await jobCount()).toBe(before);
  });

  it("refuses an enum number outside the declared set", async () => {
    const res = await connectJson(mesh.billing[0]!.baseUrl, CREATE, JSON.stringify({ ...body(), environment: 99 }));
    expect(res.body.code).toBe("invalid_argument");
    expect(res.body.message).toMatch(/^environment: value must be one of the defined enum values/);
  });

  it("refuses a negative remessa valor as INVALID_ARGUMENT, not INTERNAL", async () => {
    const err = await refusal(
      mesh.billingClient().createRemessaJob({
        tenant: TENANT,
        idempotencyKey: "neg",
        environment: Environment.SANDBOX,
        layout: CnabLayout.CNAB_LAYOUT_240,
        titulos: [{ boleto: boletoValido(1, { valorCents: -1n }) }],
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/^titulos\[0\]\.boleto\.valor_cents: must be greater than or equal to 0/);
  });

  it("refuses a 10 MiB pagador name at once", async () => {
    const huge = boletoValido(1);
    huge.pagador!.name = "A".repeat(10 * 1024 * 1024);
    const err = await refusal(
      mesh.billingClient().createBoletoJob({ tenant: TENANT, idempotencyKey: "huge", environment: Environment.SANDBOX, items: [huge] }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/^items\[0\]\.pagador\.name: must be at most 100 characters/);
  });

  it("refuses more instruções than the ficha prints", async () => {
    const b = boletoValido(1, { instrucoes: ["1", "2", "3", "4", "5", "6", "7"] });
    const err = await refusal(
      mesh.billingClient().createBoletoJob({ tenant: TENANT, idempotencyKey: "instr", environment: Environment.SANDBOX, items: [b] }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/^items\[0\]\.instrucoes: must contain no more than 6 item/);
  });

  it("issues a boleto of zero cents only when the request says it has no value", async () => {
    const c = mesh.billingClient();
    const zero = await refusal(
      c.createBoletoJob({
        tenant: TENANT,
        idempotencyKey: "zero",
        environment: Environment.SANDBOX,
        items: [boletoValido(1, { valorCents: 0n })],
      }),
    );
    expect(zero.code).toBe(Code.InvalidArgument);
    expect(zero.rawMessage).toMatch(/^items\[0\]: valor_cents must be positive; a boleto without a value says so with sem_valor/);
    const both = await refusal(
      c.createBoletoJob({
        tenant: TENANT,
        idempotencyKey: "both",
        environment: Environment.SANDBOX,
        items: [boletoValido(1, { semValor: true })],
      }),
    );
    expect(both.code).toBe(Code.InvalidArgument);

    const created = await c.createBoletoJob({
      tenant: TENANT,
      idempotencyKey: "sem-valor",
      environment: Environment.SANDBOX,
      items: [boletoValido(1, { valorCents: 0n, semValor: true })],
    });
    let job = created.job!;
    while (![JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await c.getBoletoJob({ tenant: TENANT, jobId: job.jobId })).job!;
    }
    const [item] = (await c.listBoletoJobItems({ tenant: TENANT, jobId: job.jobId })).items;
    expect(item!.state).toBe(ItemState.COMPLETED);
    // the barcode's value field is zeros: the pagador keys in the amount
    expect(item!.result!.codigoBarras.slice(9, 19)).toBe("0000000000");
  });
});

describe("contract validation on the other services", () => {
  it("the artifacts service refuses a misspelt JSON field too", async () => {
    const res = await connectJson(
      mesh.artifacts.baseUrl,
      "/malha.artifacts.v1.ArtifactsService/StatArtifact",
      JSON.stringify({ tenant: TENANT, artifactIdd: "x" }),
    );
    expect(res.body.code).toBe("invalid_argument");
    expect(res.body.message).toMatch(/artifactIdd/);
  });
});
