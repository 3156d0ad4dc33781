// Importing through the console with an administrator secret the vault does not accept (a real vault):
// the operator is told the console's configuration is wrong, and the console logs it.
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { createLogger } from "../../libs/log/logger.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { createTestRoot, issueEcnpj, toPfx } from "../../tools/adn-sim/icp-brasil.js";
import { createCertificatesView } from "./certificates-view.js";
import { HttpError } from "./http-kit.js";

let db: ThrowawayDatabase;
const procs: ServiceProcess[] = [];
let vault: ReturnType<typeof createClient<typeof VaultService>>;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  // The store applies the migrations the vault's tables come from.
  procs.push(await startService("store", { MYSQL_URL: db.url }));
  const vaultProc = await startService("vault", {
    MYSQL_URL: db.url,
    NFSE_MASTER_KEY: randomBytes(32).toString("base64"),
    VAULT_ADMIN_SECRET: `admin-${randomBytes(8).toString("hex")}`,
  });
  procs.push(vaultProc);
  vault = createClient(VaultService, createGrpcTransport({ baseUrl: vaultProc.baseUrl }));
}, 60_000);

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await db?.drop();
});

describe("certificates view", () => {
  it("answers a secret the vault refuses (UNAUTHENTICATED) as the console's misconfiguration, and logs it", async () => {
    const lines: string[] = [];
    const log = createLogger({ service: "console", destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) });
    const view = createCertificatesView(vault, "not-the-vault-admin-secret", log);
    const root = createTestRoot();
    const pfx = Buffer.from(toPfx(issueEcnpj(root, { cnpj: "11222333000181" }), [root], "senha"));

    const err = await view.import("console:ada", "3550308", pfx, "senha").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 500, code: "CONSOLE_MISCONFIGURED" });
    expect((err as HttpError).message).toMatch(/the console's configuration is wrong: the vault refused its administrator secret/);
    expect(lines.join("")).toMatch(
      /"level":"error".*"vaultSaid":"ImportCertificate is an administrative call.*"msg":"the vault refused the console's administrator secret/,
    );
    // Listing needs no secret and still works.
    expect(await view.list("3550308")).toEqual({ certificates: [] });
  });
});
