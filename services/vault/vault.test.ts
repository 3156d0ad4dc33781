// The vault's logic against a real MariaDB throwaway database, without the network.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RowDataPacket } from "mysql2/promise";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../libs/config/paths.js";
import { migrate } from "../../libs/db/migrate.js";
import { CertificateStatus, ImportRejectionReason } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { createTestRoot, issueEcnpj, toPfx, type Issued } from "../../tools/adn-sim/icp-brasil.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { createPageTokens } from "../../libs/rpc/page-token.js";
import { Keyring } from "./crypto.js";
import { ImportRefusal } from "./import-refusal.js";
import { effectiveStatus } from "./listing.js";
import { CertificateRepository } from "./repository.js";
import { findUndecryptable, rotateMasterKey, verifyMasterKeys } from "./rotation.js";
import { Vault } from "./vault.js";

const DAY = 24 * 3600_000;
const silent = pino({ level: "silent" });
const pageTokens = createPageTokens({ secret: Buffer.from("vault-test-page-token-secret"), errorDomain: "malha.vault" });
const k1 = randomBytes(32);
const k2 = randomBytes(32);
const root = createTestRoot();

let db: ThrowawayDatabase;
let repo: CertificateRepository;
beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, join(projectRoot(), "migrations"));
  repo = new CertificateRepository(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

const keyring = (keys: Record<string, Buffer>, active: string) => new Keyring({ activeKeyId: active, keys: new Map(Object.entries(keys)) });
const vaultWith = (ring: Keyring) => new Vault(repo, ring, silent, pageTokens);
const ibgeSeq = { n: 3_500_000 };
const newIbge = () => String(ibgeSeq.n++);
const cert = (days: number, cnpj = "11222333000181"): Issued => issueEcnpj(root, { cnpj, notAfter: new Date(Date.now() + days * DAY) });
const importOf = (ibge: string, c: Issued, password = "senha") => ({
  ibge,
  pfx: toPfx(c, [root], password),
  password,
  requestedBy: "op@test",
});

async function expectCode(p: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const ce = err as ConnectError;
  expect(Code[ce.code]).toBe(Code[code]);
  if (message) expect(ce.rawMessage).toMatch(message);
  return ce;
}

describe("import and lifecycle", () => {
  const vault = () => vaultWith(keyring({ k1 }, "k1"));

  it("re-import is idempotent; a later-expiring certificate becomes ACTIVE and the old one stays, INACTIVE", async () => {
    const ibge = newIbge();
    const older = cert(100);
    const first = await vault().importCertificate(importOf(ibge, older));
    expect(first).toMatchObject({ created: true, activated: true });
    const again = await vault().importCertificate(importOf(ibge, older, "senha"));
    expect(again).toMatchObject({ created: false, activated: false });
    expect(again.row.id).toBe(first.row.id);

    const newer = await vault().importCertificate(importOf(ibge, cert(300)));
    expect(newer).toMatchObject({ created: true, activated: true, replacedId: first.row.id });
    const shorter = await vault().importCertificate(importOf(ibge, cert(50)));
    expect(shorter).toMatchObject({ created: true, activated: false });

    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT id, status, active_ibge FROM certificates WHERE ibge = ? ORDER BY id", [
      ibge,
    ]);
    expect(rows.map((r) => [String(r["id"]), r["status"], r["active_ibge"]])).toEqual([
      [first.row.id, "inactive", null],
      [newer.row.id, "active", ibge],
      [shorter.row.id, "inactive", null],
    ]);
  });

  it("stores and lists an alphanumeric CNPJ (IN RFB 2.229/2024) as the certificate carries it", async () => {
    const ibge = newIbge();
    const imported = await vault().importCertificate(importOf(ibge, cert(200, "12ABC34501DE35")));
    expect(imported.row.cnpj).toBe("12ABC34501DE35");
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT cnpj FROM certificates WHERE id = ?", [imported.row.id]);
    expect(rows[0]!.cnpj).toBe("12ABC34501DE35");
    const page = await vault().list({ ibge, status: CertificateStatus.ACTIVE, pageSize: 10, pageToken: "" });
    expect(page.rows.map((r) => r.cnpj)).toEqual(["12ABC34501DE35"]);
    expect((await vault().clientCredentials(ibge, "")).row.cnpj).toBe("12ABC34501DE35");
    // A malformed one is refused before anything is stored.
    const refused = await vault()
      .importCertificate(importOf(ibge, cert(300, "12ABC34501DE36")))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(ImportRefusal);
    expect((refused as ImportRefusal).reason).toBe(ImportRejectionReason.INVALID_CNPJ);
    const wire = (refused as ImportRefusal).toConnectError();
    expect(Code[wire.code]).toBe(Code[Code.InvalidArgument]);
    expect(wire.rawMessage).toMatch(/holds "12ABC34501DE36", which has a wrong check digit/);
    const [count] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM certificates WHERE ibge = ?", [ibge]);
    expect(Number(count[0]!.n)).toBe(1);
  });

  it("keeps exactly one ACTIVE certificate when imports for one municipality race", async () => {
    const ibge = newIbge();
    const certs = [120, 400, 200, 300].map((days) => cert(days));
    const outcomes = await Promise.all(certs.map((c) => vault().importCertificate(importOf(ibge, c))));
    expect(outcomes.every((o) => o.created)).toBe(true);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT fingerprint_sha256 FROM certificates WHERE active_ibge = ?", [ibge]);
    expect(rows.map((r) => r["fingerprint_sha256"])).toEqual([certs[1]!.fingerprint256]);
    const [statuses] = await db.pool.query<RowDataPacket[]>(
      "SELECT status, COUNT(*) AS n FROM certificates WHERE ibge = ? GROUP BY status ORDER BY status",
      [ibge],
    );
    expect(statuses.map((r) => [r["status"], Number(r["n"])])).toEqual([
      ["active", 1],
      ["inactive", 3],
    ]);
  });

  it("deactivates (reason required, idempotent, no promotion) and activates back, demoting the current one", async () => {
    const ibge = newIbge();
    const a = await vault().importCertificate(importOf(ibge, cert(200)));
    const b = await vault().importCertificate(importOf(ibge, cert(100)));
    await expectCode(vault().deactivate(a.row.id, "  ", "op"), Code.InvalidArgument, /reason is required/);
    const off = await vault().deactivate(a.row.id, "chave comprometida", "op");
    expect(effectiveStatus(off, new Date())).toBe(CertificateStatus.DEACTIVATED);
    expect(off.deactivationReason).toBe("chave comprometida");
    expect((await vault().deactivate(a.row.id, "outra", "op")).deactivationReason).toBe("chave comprometida");
    await expectCode(vault().clientCredentials(ibge, ""), Code.NotFound, new RegExp(`${ibge} has no ACTIVE certificate`));

    const on = await vault().activate(b.row.id, "op");
    expect(on.replacedId).toBeUndefined();
    const back = await vault().activate(a.row.id, "op");
    expect(back.replacedId).toBe(b.row.id);
    expect(back.row).toMatchObject({ status: "active", deactivatedAt: null, deactivationReason: null });
    expect((await vault().get(b.row.id)).status).toBe("inactive");
    await expectCode(vault().activate("999999999", "op"), Code.NotFound, /not found/);
    await expectCode(vault().get("abc"), Code.NotFound, /not found/);
  });

  it("credential version changes with every activation and `known_version` short-circuits", async () => {
    const ibge = newIbge();
    const a = await vault().importCertificate(importOf(ibge, cert(200)));
    const first = await vault().clientCredentials(ibge, "");
    expect(first.privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    const same = await vault().clientCredentials(ibge, first.version);
    expect(same).toMatchObject({ unchanged: true, privateKeyPem: "", chainPem: "" });
    const b = await vault().importCertificate(importOf(ibge, cert(300)));
    const second = await vault().clientCredentials(ibge, first.version);
    expect(second.unchanged).toBe(false);
    expect(second.row.id).toBe(b.row.id);
    await vault().activate(a.row.id, "op");
    await vault().activate(b.row.id, "op");
    expect((await vault().clientCredentials(ibge, second.version)).unchanged).toBe(false);
    await expectCode(vault().clientCredentials("12345", ""), Code.InvalidArgument, /ibge must be 7 digits/);
  });

  it("refuses to activate an expired certificate and reports an expired ACTIVE one as EXPIRED", async () => {
    const ibge = newIbge();
    const a = await vault().importCertificate(importOf(ibge, cert(10)));
    const later = new Vault(repo, keyring({ k1 }, "k1"), silent, pageTokens, () => new Date(Date.now() + 20 * DAY));
    const expired = await expectCode(later.clientCredentials(ibge, ""), Code.FailedPrecondition, /expired at .*status EXPIRED/);
    expect(expired.findDetails(ErrorInfoSchema).map((d) => d.reason)).toEqual(["CERTIFICATE_EXPIRED"]);
    await expectCode(later.activate(a.row.id, "op"), Code.FailedPrecondition, /expired at/);
    expect(effectiveStatus(await later.get(a.row.id), later.now())).toBe(CertificateStatus.EXPIRED);
  });

  it("lists with filters, expiring-soon order and keyset pages that refuse other filters", async () => {
    const ibge = newIbge();
    const ids: string[] = [];
    for (const days of [40, 10, 25]) ids.push((await vault().importCertificate(importOf(ibge, cert(days)))).row.id);
    const expiringBefore = new Date(Date.now() + 30 * DAY);
    const p1 = await vault().list({ ibge, status: CertificateStatus.UNSPECIFIED, expiringBefore, pageSize: 1, pageToken: "" });
    expect(p1.rows.map((r) => r.id)).toEqual([ids[1]]);
    const p2 = await vault().list({ ibge, status: CertificateStatus.UNSPECIFIED, expiringBefore, pageSize: 1, pageToken: p1.nextToken });
    expect(p2.rows.map((r) => r.id)).toEqual([ids[2]]);
    expect(p2.nextToken).toBe("");
    const all = await vault().list({ ibge, status: CertificateStatus.UNSPECIFIED, pageSize: 2, pageToken: "" });
    const rest = await vault().list({ ibge, status: CertificateStatus.UNSPECIFIED, pageSize: 2, pageToken: all.nextToken });
    expect([...all.rows, ...rest.rows].map((r) => r.id)).toEqual([ids[0], ids[2], ids[1]]);
    const active = await vault().list({ ibge, status: CertificateStatus.ACTIVE, pageSize: 0, pageToken: "" });
    expect(active.rows.map((r) => r.id)).toEqual([ids[0]]);
    await expectCode(
      vault().list({ ibge: newIbge(), status: 0, pageSize: 2, pageToken: all.nextToken }),
      Code.InvalidArgument,
      /other filters/,
    );
    await expectCode(
      vault().list({ ibge, status: 0, pageSize: 2, pageToken: "bm9wZQ" }),
      Code.InvalidArgument,
      /invalid page_token: malformed/,
    );
    const [body, sig] = all.nextToken.split(".") as [string, string];
    const moved = JSON.parse(Buffer.from(body, "base64url").toString()) as { k: unknown[] };
    moved.k[1] = 0;
    const tampered = `${Buffer.from(JSON.stringify(moved)).toString("base64url")}.${sig}`;
    await expectCode(vault().list({ ibge, status: 0, pageSize: 2, pageToken: tampered }), Code.InvalidArgument, /signature mismatch/);
    await expectCode(
      vault().list({ ibge, status: 0, pageSize: -1, pageToken: "" }),
      Code.InvalidArgument,
      /page_size must not be negative/,
    );
    await expectCode(vault().list({ ibge: "12", status: 0, pageSize: 2, pageToken: "" }), Code.InvalidArgument, /ibge must be 7 digits/);
  });
});

describe("encryption at rest", () => {
  it("binds each ciphertext to its row: a copy fails with DATA_LOSS, other rows keep working", async () => {
    const vault = vaultWith(keyring({ k1 }, "k1"));
    const [ibgeA, ibgeB] = [newIbge(), newIbge()];
    const a = await vault.importCertificate(importOf(ibgeA, cert(100)));
    const b = await vault.importCertificate(importOf(ibgeB, cert(100, "99888777000100")));
    await db.pool.query(
      `UPDATE certificates dst JOIN certificates src ON src.id = ?
         SET dst.private_key_ciphertext = src.private_key_ciphertext, dst.private_key_nonce = src.private_key_nonce,
             dst.private_key_auth_tag = src.private_key_auth_tag
       WHERE dst.id = ?`,
      [a.row.id, b.row.id],
    );
    const err = await expectCode(vault.clientCredentials(ibgeB, ""), Code.DataLoss, /private_key ciphertext failed authentication/);
    expect(err.rawMessage).not.toMatch(/BEGIN/);
    expect((await vault.clientCredentials(ibgeA, "")).privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    const bad = await findUndecryptable(repo, keyring({ k1 }, "k1"));
    expect(bad).toContainEqual(expect.objectContaining({ id: b.row.id, problem: expect.stringMatching(/private_key ciphertext failed/) }));
    expect(bad.map((r) => r.id)).not.toContain(a.row.id);
    await db.pool.query("DELETE FROM certificates WHERE id = ?", [b.row.id]);
  });

  it("serves credentials only for the municipality bound into the ciphertext: a re-pointed row is DATA_LOSS", async () => {
    const vault = vaultWith(keyring({ k1 }, "k1"));
    const [ibgeB, ibgeC] = [newIbge(), newIbge()];
    const b = await vault.importCertificate(importOf(ibgeB, cert(100)));
    const c = await vault.importCertificate(importOf(ibgeC, cert(100, "99888777000100")));
    const servedB = await vault.clientCredentials(ibgeB, "");
    expect(servedB.privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);

    // Without the master key, C's ACTIVE marker is moved to B's row.
    await db.pool.query("UPDATE certificates SET active_ibge = NULL, status = 'inactive' WHERE id = ?", [c.row.id]);
    await db.pool.query("UPDATE certificates SET active_ibge = ? WHERE id = ?", [ibgeC, b.row.id]);
    const repointed = await expectCode(vault.clientCredentials(ibgeC, ""), Code.DataLoss, /imported for municipality .* marked ACTIVE for/);
    expect(repointed.findDetails(ErrorInfoSchema)[0]?.reason).toBe("CIPHERTEXT_TAMPERED");
    expect(repointed.rawMessage).not.toMatch(/BEGIN/);

    // Rewriting the municipality column too does not help: the ciphertext still names B.
    await db.pool.query("UPDATE certificates SET ibge = ? WHERE id = ?", [ibgeC, b.row.id]);
    const rewritten = await expectCode(vault.clientCredentials(ibgeC, ""), Code.DataLoss, /ciphertext failed authentication/);
    expect(rewritten.findDetails(ErrorInfoSchema)[0]?.reason).toBe("CIPHERTEXT_TAMPERED");

    // Put back as imported, both serve again (rows written before this check carry the same binding).
    await db.pool.query("UPDATE certificates SET ibge = ?, active_ibge = ? WHERE id = ?", [ibgeB, ibgeB, b.row.id]);
    await db.pool.query("UPDATE certificates SET active_ibge = ?, status = 'active' WHERE id = ?", [ibgeC, c.row.id]);
    expect((await vault.clientCredentials(ibgeB, "")).privateKeyPem).toBe(servedB.privateKeyPem);
    expect((await vault.clientCredentials(ibgeC, "")).privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
  });

  it("refuses key bytes that contradict the check value recorded for their key id", async () => {
    const id = `kc${randomBytes(3).toString("hex")}`;
    await verifyMasterKeys(repo, keyring({ [id]: k1 }, id));
    await verifyMasterKeys(repo, keyring({ [id]: k1 }, id));
    await expect(verifyMasterKeys(repo, keyring({ [id]: k2 }, id))).rejects.toThrow(
      new RegExp(`master key '${id}' is not the key this database recorded`),
    );
  });
});

describe("rotation", () => {
  it("moves rows in bounded, resumable steps; skips and reports rows no key opens; then the old key can go", async () => {
    const ring1 = keyring({ r1: k1 }, "r1");
    const vault1 = vaultWith(ring1);
    const ibges = [newIbge(), newIbge(), newIbge()];
    for (const ibge of ibges) await vault1.importCertificate(importOf(ibge, cert(100)));
    // A row under a key nobody has: reported, never blocks the others.
    await db.pool.query("UPDATE certificates SET key_id = 'lost' WHERE ibge = ?", [ibges[0]]);

    const both = keyring({ r1: k1, r2: k2 }, "r2");
    const before = await repo.countNotUnderKey("r2");
    const step = await rotateMasterKey(repo, both, "", 1);
    expect(step).toMatchObject({ targetKeyId: "r2", rowsReencrypted: 1, done: false });
    expect(step.rowsRemaining).toBe(before - 1 - step.undecryptable.length);
    let last = step;
    while (last.rowsRemaining > 0) last = await rotateMasterKey(repo, both, "r2", 1);
    const lostId = (await vault1.list({ ibge: ibges[0]!, status: 0, pageSize: 1, pageToken: "" })).rows[0]!.id;
    expect(last.undecryptable).toContain(lostId);
    expect(last.done).toBe(false);
    expect((await rotateMasterKey(repo, both, "r2", 0)).rowsReencrypted).toBe(0);
    await expectCode(rotateMasterKey(repo, both, "nope", 0), Code.FailedPrecondition, /'nope' is not configured/);

    const only2 = vaultWith(keyring({ r2: k2 }, "r2"));
    for (const ibge of ibges.slice(1)) expect((await only2.clientCredentials(ibge, "")).privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    await expectCode(only2.clientCredentials(ibges[0]!, ""), Code.FailedPrecondition, /master key 'lost'/);
    await db.pool.query("DELETE FROM certificates WHERE key_id = 'lost'");
  });
});
