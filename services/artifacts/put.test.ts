// The upload pipeline without the network: real disk, real MariaDB, concurrent uploads of one name.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../libs/db/migrate.js";
import { projectRoot } from "../../libs/config/paths.js";
import { PutArtifactRequestSchema, type PutArtifactRequest } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { ArtifactMetadataStore } from "./metadata.js";
import { putArtifact, type PutDeps } from "./put.js";
import { DiskBlobStore } from "./storage/disk.js";
import { sweepOrphans } from "./sweep.js";

let db: ThrowawayDatabase;
let dir: string;
let deps: PutDeps;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, join(projectRoot(), "migrations"));
  dir = mkdtempSync(join(tmpdir(), "malha-put-"));
  deps = { blobs: await DiskBlobStore.open(dir), meta: new ArtifactMetadataStore(db.pool), maxBytes: 1 << 20, defaultTtlMs: 86_400_000 };
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const msg = (init: MessageInitShape<typeof PutArtifactRequestSchema>): PutArtifactRequest => create(PutArtifactRequestSchema, init);

/** An upload whose chunks arrive only when `gate` opens, so that two uploads really overlap. */
async function* upload(name: string, content: Buffer, gate: Promise<void>): AsyncIterable<PutArtifactRequest> {
  yield msg({ part: { case: "header", value: { tenant: "t", name, contentType: "application/pdf" } } });
  yield msg({ part: { case: "chunk", value: content.subarray(0, 10) } });
  await gate;
  yield msg({ part: { case: "chunk", value: content.subarray(10) } });
}

const blobCount = () => readdirSync(join(dir, "blobs", "t")).length;

describe("concurrent uploads of one name", () => {
  it("identical bytes: one creates, the other gets the same artifact, one blob on disk", async () => {
    const content = randomBytes(50_000);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const both = Promise.all([putArtifact(deps, upload("same.pdf", content, gate)), putArtifact(deps, upload("same.pdf", content, gate))]);
    open();
    const [a, b] = await both;
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.record.id).toBe(b.record.id);
    expect(a.record.sha256).toBe(createHash("sha256").update(content).digest("hex"));
    expect(blobCount()).toBe(1);
    expect(readdirSync(join(dir, "tmp"))).toEqual([]);
  });

  it("different bytes: exactly one wins, the other is ALREADY_EXISTS, and the loser left nothing", async () => {
    const before = blobCount();
    const one = randomBytes(40_000);
    const two = randomBytes(40_000);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const results = Promise.allSettled([
      putArtifact(deps, upload("race.pdf", one, gate)),
      putArtifact(deps, upload("race.pdf", two, gate)),
    ]);
    open();
    const settled = await results;
    const won = settled.filter((s) => s.status === "fulfilled");
    const lost = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(ConnectError.from(lost[0]!.reason).code).toBe(Code.AlreadyExists);
    expect(blobCount()).toBe(before + 1);
    expect(readdirSync(join(dir, "tmp"))).toEqual([]);
  });

  it("a client that goes away mid-stream leaves no temp file", async () => {
    async function* broken(): AsyncIterable<PutArtifactRequest> {
      yield msg({ part: { case: "header", value: { tenant: "t", name: "gone.pdf", contentType: "application/pdf" } } });
      yield msg({ part: { case: "chunk", value: randomBytes(1000) } });
      throw new ConnectError("client went away", Code.Canceled);
    }
    await expect(putArtifact(deps, broken())).rejects.toMatchObject({ code: Code.Canceled });
    expect(readdirSync(join(dir, "tmp"))).toEqual([]);
    expect(await deps.meta.findByName("t", "", "gone.pdf")).toBeUndefined();
  });
});

describe("an insert whose outcome is unknown", () => {
  it("keeps the blob when the connection drops after the row was committed, so the artifact is never without content", async () => {
    const content = randomBytes(20_000);
    // The row commits, then the client loses the connection before the answer (a database killed at COMMIT).
    const meta = new ArtifactMetadataStore(db.pool);
    const flaky = Object.assign(Object.create(meta) as ArtifactMetadataStore, {
      insert: async (record: Parameters<ArtifactMetadataStore["insert"]>[0]) => {
        await meta.insert(record);
        throw Object.assign(new Error("Connection lost: The server closed the connection."), {
          code: "PROTOCOL_CONNECTION_LOST",
          fatal: true,
        });
      },
    });
    const attempt = putArtifact({ ...deps, meta: flaky }, upload("lost-ack.pdf", content, Promise.resolve()));
    await expect(attempt).rejects.toThrow(/Connection lost/);
    // The caller retries: the committed row wins, and its content is there to read.
    const retry = await putArtifact(deps, upload("lost-ack.pdf", content, Promise.resolve()));
    expect(retry.created).toBe(false);
    const chunks: Buffer[] = [];
    for await (const c of await deps.blobs.read(retry.record.storageKey, { offset: 0 }, 64 * 1024)) chunks.push(Buffer.from(c));
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
  });

  it("leaves a blob without a row when the connection dropped before COMMIT, which the orphan scan removes past the grace", async () => {
    const grace = 3_600_000;
    const lostFirst = (committed: boolean) =>
      Object.assign(Object.create(deps.meta) as ArtifactMetadataStore, {
        insert: async (record: Parameters<ArtifactMetadataStore["insert"]>[0]) => {
          if (committed) await deps.meta.insert(record);
          throw Object.assign(new Error("Connection lost: The server closed the connection."), {
            code: "PROTOCOL_CONNECTION_LOST",
            fatal: true,
          });
        },
      });
    const before = new Set(readdirSync(join(dir, "blobs", "t")));
    const added = () => readdirSync(join(dir, "blobs", "t")).filter((f) => !before.has(f));
    await expect(
      putArtifact({ ...deps, meta: lostFirst(false) }, upload("never-committed.pdf", randomBytes(3_000), Promise.resolve())),
    ).rejects.toThrow(/Connection lost/);
    const [orphan] = added();
    await expect(
      putArtifact({ ...deps, meta: lostFirst(true) }, upload("committed.pdf", randomBytes(3_000), Promise.resolve())),
    ).rejects.toThrow(/Connection lost/);
    const committed = (await deps.meta.findByName("t", "", "committed.pdf"))!;
    expect(await deps.meta.findByName("t", "", "never-committed.pdf")).toBeUndefined();
    expect(added().sort()).toEqual([orphan, committed.storageKey.slice(2)].sort());

    // Within the grace both stay: a blob this young may be an upload whose row is on its way.
    expect(await sweepOrphans({ meta: deps.meta, blobs: deps.blobs, staleTempMs: grace })).toBe(0);
    const old = new Date(Date.now() - 2 * grace);
    for (const f of added()) utimesSync(join(dir, "blobs", "t", f), old, old);
    expect(await sweepOrphans({ meta: deps.meta, blobs: deps.blobs, staleTempMs: grace })).toBe(1);
    expect(existsSync(join(dir, "blobs", "t", orphan!))).toBe(false);
    expect(existsSync(join(dir, "blobs", committed.storageKey))).toBe(true);
  });

  it("deletes the blob when the server refused the row (nothing was committed)", async () => {
    const before = blobCount();
    const refusing = Object.assign(Object.create(deps.meta) as ArtifactMetadataStore, {
      insert: async () => {
        throw Object.assign(new Error("Data too long"), { code: "ER_DATA_TOO_LONG", sqlState: "22001", fatal: false });
      },
    });
    await expect(putArtifact({ ...deps, meta: refusing }, upload("refused.pdf", randomBytes(5_000), Promise.resolve()))).rejects.toThrow(
      /Data too long/,
    );
    expect(blobCount()).toBe(before);
  });
});
