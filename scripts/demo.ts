// The quickstart's demo (scripts/dev.sh up): registers a few municipalities, imports the simulator's
// test e-CNPJ certificates into the vault (as PFX, like an operator would), asks the coordinator to
// sync them, and prints progress until every feed has caught up; then, with the tenant "demo"'s API
// token (MALHA_BILLING_TOKEN_FILE, made by dev.sh), runs a small boleto job to its zip.
//   tsx scripts/demo.ts <certs dir> <ibge,ibge,...>
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import forge from "node-forge";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { CoordinatorService, FeedState } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../libs/gen/malha/store/v1/types_pb.js";
import { VaultService } from "../libs/gen/malha/vault/v1/vault_pb.js";
import { BillingService } from "../libs/gen/malha/billing/v1/billing_pb.js";
import { Environment, JobState } from "../libs/gen/malha/billing/v1/types_pb.js";
import { TaxIdKind } from "../libs/gen/malha/common/v1/common_pb.js";
import { billingToken } from "../cli/billing-common.js";
import { vaultAdminCall } from "../cli/vault-admin.js";
import { MESH, type MeshServiceName } from "../libs/rpc/mesh.js";

const NAMES: Record<string, { name: string; uf: string }> = {
  "3550308": { name: "São Paulo", uf: "SP" },
  "3304557": { name: "Rio de Janeiro", uf: "RJ" },
  "4106902": { name: "Curitiba", uf: "PR" },
  "5300108": { name: "Brasília", uf: "DF" },
  "2304400": { name: "Fortaleza", uf: "CE" },
};

const [certsDir, list] = process.argv.slice(2);
if (!certsDir || !list) {
  process.stderr.write("usage: tsx scripts/demo.ts <certs dir> <ibge,ibge,...>\n");
  process.exit(2);
}
const dir: string = certsDir;
const ibges = list.split(",").filter((i) => NAMES[i]);
const client = <S extends Parameters<typeof createClient>[0]>(service: S, name: MeshServiceName) =>
  createClient(
    service,
    createGrpcTransport({
      baseUrl: process.env[`MALHA_${name.toUpperCase().replace("-", "_")}_URL`] ?? `http://127.0.0.1:${MESH[name].port}`,
    }),
  );
const vault = client(VaultService, "vault");
const store = client(StoreService, "store");
const coordinator = client(CoordinatorService, "coordinator");

/** The simulator writes PEM; operators hand the vault a PFX and its password, so the demo does too. */
function pfxOf(ibge: string): { pfx: Uint8Array; password: string } {
  const certs = readFileSync(join(dir, `${ibge}.pem`), "utf8")
    .split(/(?=-----BEGIN CERTIFICATE-----)/)
    .filter((p) => p.includes("BEGIN CERTIFICATE"))
    .map((p) => forge.pki.certificateFromPem(p));
  const key = forge.pki.privateKeyFromPem(readFileSync(join(dir, `${ibge}.key`), "utf8"));
  const password = randomBytes(12).toString("base64url");
  const der = forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(key, certs, password, { algorithm: "3des" })).getBytes();
  return { pfx: Buffer.from(der, "binary"), password };
}

for (const ibge of ibges) {
  const { name, uf } = NAMES[ibge]!;
  await store.registerMunicipality({
    ibge,
    name,
    uf,
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
  const { pfx, password } = pfxOf(ibge);
  const imported = await vault.importCertificate({ ibge, pfx, password, requestedBy: "demo" }, vaultAdminCall(process.env));
  console.log(`demo: ${ibge} ${name}/${uf} registered; certificate ${imported.certificate?.cnpj} imported`);
  const { decisions } = await coordinator.syncNow({ ibge, requestedBy: "demo" });
  for (const d of decisions) console.log(`demo: ${ibge} sync ${d.accepted ? "started" : `skipped (reason ${d.reason})`}`);
}

const deadline = Date.now() + 300_000;
for (;;) {
  const { statuses } = await coordinator.listFeedStatus({});
  const mine = statuses.filter((s) => ibges.includes(s.feed?.ibge ?? ""));
  console.log(
    "demo: " +
      mine
        .map((s) => `${s.feed?.ibge} ${FeedState[s.state]} cursor ${s.cursor} docs ${s.documentsCount} events ${s.eventsCount}`)
        .join(" | "),
  );
  if (mine.length === ibges.length && mine.every((s) => s.lastOutcome === RunOutcome.CAUGHT_UP)) break;
  if (Date.now() > deadline) {
    console.error("demo: not every feed caught up within 5 minutes; see the coordinator's log");
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 1000));
}
console.log("demo: every demo municipality is synced");

// Billing, as a tenant sees it: three boletos with PDFs and a zip. The key is the day's, so a second
// `npm start` the same day gets the same job back.
const token = billingToken(process.env);
if (token) {
  const billing = createClient(
    BillingService,
    createGrpcTransport({
      baseUrl: process.env.MALHA_BILLING_URL ?? `http://127.0.0.1:${MESH.billing.port}`,
      interceptors: [(next) => (req) => (req.header.set("authorization", `Bearer ${token}`), next(req))],
    }),
  );
  const day = new Date(Date.now() + 15 * 86_400_000);
  const vencimento = { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() };
  const items = [1, 2, 3].map((n) => ({
    externalId: `demo-${n}`,
    conta: { banco: "237", agencia: "1234", carteira: "09", conta: "0012345" },
    nossoNumero: String(9000 + n),
    valorCents: BigInt(15_000 * n),
    vencimento,
    pagador: { name: `Cliente Demo ${n}`, document: { kind: TaxIdKind.CPF, number: "52998224725" } },
    beneficiario: {
      name: "Empresa Exemplo Ltda",
      document: { kind: TaxIdKind.CNPJ, number: "11222333000181" },
      address: { street: "Av. Paulista", number: "1000", city: "Sao Paulo", uf: "SP", cep: "01310100" },
    },
  }));
  const created = await billing.createBoletoJob({
    environment: Environment.SANDBOX,
    idempotencyKey: `demo-${new Date().toISOString().slice(0, 10)}`,
    requestedBy: "demo",
    items,
  });
  let job = created.job!;
  for (let i = 0; i < 600 && ![JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state); i++) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await billing.getBoletoJob({ jobId: job.jobId })).job!;
  }
  const art = job.state === JobState.COMPLETED ? await billing.getBoletoJobArtifacts({ jobId: job.jobId }) : undefined;
  console.log(
    `demo: boleto job ${job.jobId} for tenant ${job.tenant} ${JobState[job.state]?.toLowerCase()}: ${job.counters?.completed ?? 0} PDFs${art?.zip ? `, zip ${art.zip.sizeBytes} bytes (sha256 ${art.zip.sha256.slice(0, 12)}…)` : ""}`,
  );
  if (art?.zip)
    console.log(
      `demo: the zip, through its signed link (valid until ${art.zip.downloadUrlExpiresAt ? new Date(Number(art.zip.downloadUrlExpiresAt.seconds) * 1000).toISOString() : "-"}): ${art.zip.downloadUrl}`,
    );
  if (job.state !== JobState.COMPLETED) process.exit(1);
}
