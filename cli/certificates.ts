import { readFileSync } from "node:fs";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CertificateStatus, VaultService, type Certificate } from "../libs/gen/malha/vault/v1/vault_pb.js";
import { str, type Command, type Context } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { enumName, iso, json, parseEnum, when } from "./format.js";
import { write } from "./io.js";
import { pfxPassword } from "./password.js";
import { table } from "./table.js";
import { vaultAdminCall } from "./vault-admin.js";

const DAY_MS = 24 * 3600 * 1000;

function plain(c: Certificate) {
  return {
    id: c.id,
    ibge: c.ibge,
    cnpj: c.cnpj,
    status: enumName(CertificateStatus, c.status),
    subject: c.subject,
    notAfter: iso(c.notAfter),
    fingerprintSha256: c.fingerprintSha256,
  };
}

function daysLeft(c: Certificate, now: number): string {
  if (!c.notAfter) return "-";
  return String(Math.floor((Number(c.notAfter.seconds) * 1000 - now) / DAY_MS));
}

function print(ctx: Context, certificates: Certificate[]): void {
  if (ctx.json) return write(ctx.io.out, json(certificates.map(plain)));
  const now = Date.now();
  ctx.io.out.write(
    table(
      ["id", "ibge", "cnpj", "status", "not after", "days left", "subject"],
      certificates.map((c) => [
        c.id,
        c.ibge,
        c.cnpj,
        enumName(CertificateStatus, c.status).toLowerCase(),
        when(c.notAfter),
        daysLeft(c, now),
        c.subject,
      ]),
    ),
  );
}

async function listAll(ctx: Context, filter: { ibge?: string; status?: CertificateStatus; expiringBefore?: Date }): Promise<Certificate[]> {
  const vault = ctx.targets.client("vault", VaultService);
  const all: Certificate[] = [];
  let pageToken = "";
  do {
    const res = await vault.listCertificates({
      ibge: filter.ibge ?? "",
      status: filter.status ?? CertificateStatus.UNSPECIFIED,
      ...(filter.expiringBefore ? { expiringBefore: timestampFromDate(filter.expiringBefore) } : {}),
      pageSize: 500,
      pageToken,
    });
    all.push(...res.certificates);
    pageToken = res.nextPageToken;
  } while (pageToken);
  return all;
}

export const certificatesImport: Command = {
  usage: "certificates import <ibge> <file.pfx> [--password-file <file>]",
  summary:
    "import an A1 PFX into the vault (password: --password-file, MALHA_PFX_PASSWORD or a prompt; as administrator: MALHA_VAULT_ADMIN_SECRET[_FILE] or an admin client certificate)",
  options: { "password-file": { type: "string" }, "requested-by": { type: "string" } },
  positionals: [2, 2],
  async run(ctx) {
    const [ibge, file] = ctx.positionals as [string, string];
    let pfx: Buffer;
    try {
      pfx = readFileSync(file);
    } catch (err) {
      throw new UsageError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const admin = vaultAdminCall(ctx.io.env);
    const password = await pfxPassword(ctx.io, str(ctx.values, "password-file"));
    const vault = ctx.targets.client("vault", VaultService);
    const res = await vault.importCertificate(
      {
        ibge,
        pfx,
        password,
        requestedBy: str(ctx.values, "requested-by") ?? ctx.io.env.USER ?? "malha-cli",
      },
      admin,
    );
    const c = res.certificate!;
    if (ctx.json) {
      write(
        ctx.io.out,
        json({ ...plain(c), created: res.created, activated: res.activated, replacedCertificateId: res.replacedCertificateId || null }),
      );
      return;
    }
    const what = res.created ? "imported" : "already stored";
    const active = res.activated ? `, now ACTIVE${res.replacedCertificateId ? ` (replaces ${res.replacedCertificateId})` : ""}` : "";
    write(ctx.io.out, `${what}: ${c.id} for ${c.ibge}, CNPJ ${c.cnpj}, valid until ${when(c.notAfter)}${active}`);
  },
};

export const certificatesList: Command = {
  usage: "certificates list [--ibge <ibge>] [--status active|inactive|deactivated|expired]",
  summary: "list stored certificates (metadata only; keys never leave the vault)",
  options: { ibge: { type: "string" }, status: { type: "string" } },
  async run(ctx) {
    const status = str(ctx.values, "status");
    let parsed: CertificateStatus | undefined;
    try {
      parsed = status ? parseEnum(CertificateStatus, status, "--status") : undefined;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const ibge = str(ctx.values, "ibge");
    print(ctx, await listAll(ctx, { ...(ibge ? { ibge } : {}), ...(parsed ? { status: parsed } : {}) }));
  },
};

export const certificatesExpiring: Command = {
  usage: "certificates expiring [--days 30]",
  summary: "ACTIVE certificates that expire within the given days (exit 0 either way; empty list = none)",
  options: { days: { type: "string" } },
  async run(ctx) {
    const days = Number(str(ctx.values, "days") ?? "30");
    if (!Number.isInteger(days) || days < 0) throw new UsageError("--days must be a non-negative integer");
    print(ctx, await listAll(ctx, { status: CertificateStatus.ACTIVE, expiringBefore: new Date(Date.now() + days * DAY_MS) }));
  },
};
