// The artifacts service as an operator runs it: a real process from main.ts, gRPC over a real socket,
// downloads over real HTTP, metadata in a throwaway MariaDB database, content in a temp directory.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import {
  ArtifactExpiredSchema,
  ArtifactHeaderSchema,
  ArtifactsService,
  ArtifactState,
  type Artifact,
  type ArtifactHeader,
  type PutArtifactRequestSchema,
  type PutArtifactsRequestSchema,
} from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { EPHEMERAL_ENV, spawnService, startService, type ServiceProcess } from "../../test/support/service-process.js";

const MAX_BYTES = 6 * 1024 * 1024;
const CHUNK = 256 * 1024;

let db: ThrowawayDatabase;
let dir: string;
let outside: string;
let svc: ServiceProcess;
let client: Client<typeof ArtifactsService>;
let httpPort: number;

function envFor(): Record<string, string> {
  return {
    MYSQL_URL: db.url,
    ARTIFACT_DIR: dir,
    ARTIFACT_LINK_SECRET: "test-link-secret-0123456789abcdef0123456789",
    ARTIFACT_PAGE_TOKEN_SECRET: "test-page-token-secret-0123456789",
    ARTIFACT_HTTP_PORT: "0",
    ARTIFACT_MAX_BYTES: String(MAX_BYTES),
    ARTIFACT_SWEEP_INTERVAL_SECONDS: "0.2",
  };
}

function httpPortOf(s: ServiceProcess): number {
  const line = s.lines.find((l) => l.includes('"msg":"download server listening"'));
  if (!line) throw new Error(`no download server line:\n${s.lines.join("\n")}`);
  return (JSON.parse(line) as { httpPort: number }).httpPort;
}

const clientFor = (s: ServiceProcess) => createClient(ArtifactsService, createGrpcTransport({ baseUrl: s.baseUrl }));

beforeAll(async () => {
  db = await createThrowawayDatabase();
  dir = mkdtempSync(join(tmpdir(), "malha-artifacts-"));
  // A sibling of the root holding a secret: nothing the service does may read or write it.
  outside = mkdtempSync(join(tmpdir(), "malha-outside-"));
  writeFileSync(join(outside, "secret.txt"), "outside the root\n");
  svc = await startService("artifacts", envFor());
  client = clientFor(svc);
  httpPort = httpPortOf(svc);
});

afterAll(async () => {
  svc?.kill("SIGKILL");
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

type PutInit = MessageInitShape<typeof PutArtifactRequestSchema>;
type PutManyInit = MessageInitShape<typeof PutArtifactsRequestSchema>;
type HeaderInit = Partial<Omit<ArtifactHeader, "$typeName">>;

function header(h: HeaderInit): ArtifactHeader {
  return create(ArtifactHeaderSchema, { tenant: "acme", contentType: "application/pdf", ...h } as never);
}

async function* putStream(h: HeaderInit, content: Uint8Array, chunk = CHUNK): AsyncIterable<PutInit> {
  yield { part: { case: "header", value: header(h) } };
  for (let i = 0; i < content.length; i += chunk) {
    yield { part: { case: "chunk", value: content.subarray(i, i + chunk) } };
  }
}

const put = (h: HeaderInit, content: Uint8Array, c = client) => c.putArtifact(putStream(h, content));

async function get(tenant: string, id: string, range: { offset?: bigint; length?: bigint } = {}, c = client) {
  let metadata: Artifact | undefined;
  const chunks: Uint8Array[] = [];
  for await (const res of c.getArtifact({ tenant, id, ...range })) {
    if (res.part.case === "metadata") {
      expect(metadata, "metadata comes once, first").toBeUndefined();
      metadata = res.part.value;
    } else if (res.part.case === "chunk") {
      expect(metadata, "metadata precedes content").toBeDefined();
      expect(res.part.value.byteLength).toBeLessThanOrEqual(1024 * 1024);
      chunks.push(res.part.value);
    }
  }
  return { metadata: metadata!, content: Buffer.concat(chunks) };
}

async function refusal(p: Promise<unknown> | (() => Promise<unknown>)): Promise<{ err: ConnectError; reason?: string }> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    const err = ConnectError.from(e);
    return { err, reason: err.findDetails(ErrorInfoSchema)[0]?.reason };
  }
  throw new Error("expected the call to fail");
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
/** Every non-directory entry under ROOT/<sub>, relative to it. */
const files = (sub: string): string[] => {
  const root = join(dir, sub);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => !d.isDirectory())
    .map((d) => relative(root, join(d.parentPath, d.name)));
};

async function rowsNamed(name: string): Promise<RowDataPacket[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM artifact_metadata WHERE name = ?", [name]);
  return rows;
}

function httpGet(path: string, headers: Record<string, string> = {}, port = httpPort) {
  // node:http sends the path exactly as given (no dot-segment normalisation, unlike fetch/URL).
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("put and get", () => {
  it("round-trips a multi-MB file in chunks, with sha256 and size computed while streaming", async () => {
    const content = randomBytes(5 * 1024 * 1024 + 12345);
    const res = await put(
      { name: "items/0001.pdf", jobId: "job_1", expectedSha256: sha256(content), expectedSizeBytes: BigInt(content.length) },
      content,
    );
    expect(res.created).toBe(true);
    const a = res.artifact!;
    expect(a).toMatchObject({
      tenant: "acme",
      name: "items/0001.pdf",
      jobId: "job_1",
      contentType: "application/pdf",
      state: ArtifactState.AVAILABLE,
    });
    expect(a.sha256).toBe(sha256(content));
    expect(a.sizeBytes).toBe(BigInt(content.length));
    expect(a.id).toMatch(/^art_[0-9a-f]{32}$/);
    // Default expiry: ARTIFACT_TTL_DIAS = 7 days after creation.
    expect(timestampDate(a.expiresAt!).getTime() - timestampDate(a.createdAt!).getTime()).toBe(7 * 24 * 3600 * 1000);

    const got = await get("acme", a.id);
    expect(got.metadata.sha256).toBe(a.sha256);
    expect(sha256(got.content)).toBe(sha256(content));
    expect(got.content.equals(content)).toBe(true);
    expect((await client.statArtifact({ tenant: "acme", id: a.id })).artifact?.sizeBytes).toBe(BigInt(content.length));
    const listed = await client.listArtifacts({ tenant: "acme", jobId: "job_1" });
    expect(listed.artifacts.map((x) => x.id)).toContain(a.id);
    // Stored read-only under the root, nothing left in tmp.
    expect(files("blobs")).toContain(join("acme", a.id));
    expect(files("tmp")).toEqual([]);
  });

  it("reads an offset/length range, an empty tail, and refuses an offset beyond the size", async () => {
    const content = randomBytes(700_000);
    const { artifact } = await put({ name: "range.bin" }, content);
    const id = artifact!.id;
    const mid = await get("acme", id, { offset: 300_000n, length: 350_000n });
    expect(mid.content.equals(content.subarray(300_000, 650_000))).toBe(true);
    expect(mid.metadata.sizeBytes).toBe(700_000n);
    const tail = await get("acme", id, { offset: 650_000n, length: 1_000_000n });
    expect(tail.content.equals(content.subarray(650_000))).toBe(true);
    expect((await get("acme", id, { offset: 700_000n })).content.length).toBe(0);
    const beyond = await refusal(get("acme", id, { offset: 700_001n }));
    expect(beyond.err.code).toBe(Code.InvalidArgument);
  });

  it("returns the existing artifact for identical bytes, refuses different bytes with ALREADY_EXISTS, stores nothing new", async () => {
    const content = randomBytes(100_000);
    const first = await put({ name: "boletos-job_2.zip", jobId: "job_2", contentType: "application/zip" }, content);
    const blobsBefore = files("blobs").length;
    const again = await put({ name: "boletos-job_2.zip", jobId: "job_2", contentType: "application/zip" }, content, client);
    expect(again.created).toBe(false);
    expect(again.artifact?.id).toBe(first.artifact?.id);

    const other = Buffer.from(content);
    other[0] = other[0]! ^ 1;
    const taken = await refusal(put({ name: "boletos-job_2.zip", jobId: "job_2", contentType: "application/zip" }, other));
    expect(taken.err.code).toBe(Code.AlreadyExists);
    expect(taken.reason).toBe("NAME_TAKEN");
    expect(files("blobs").length).toBe(blobsBefore);
    expect(files("tmp")).toEqual([]);
    expect(await rowsNamed("boletos-job_2.zip")).toHaveLength(1);

    // The name is scoped by job: the same name under another job is a different artifact.
    const otherJob = await put({ name: "boletos-job_2.zip", jobId: "job_3", contentType: "application/zip" }, other);
    expect(otherJob.created).toBe(true);
  });

  it("refuses a checksum or size mismatch with DATA_LOSS and leaves no temp file and no row", async () => {
    const content = randomBytes(600_000);
    const blobsBefore = files("blobs").length;
    const bad = await refusal(put({ name: "bad-sha.pdf", expectedSha256: "0".repeat(64) }, content));
    expect(bad.err.code).toBe(Code.DataLoss);
    expect(bad.reason).toBe("CHECKSUM_MISMATCH");
    const short = await refusal(put({ name: "bad-size.pdf", expectedSizeBytes: BigInt(content.length + 1) }, content));
    expect(short.err.code).toBe(Code.DataLoss);
    expect(short.reason).toBe("SIZE_MISMATCH");
    const long = await refusal(put({ name: "bad-size.pdf", expectedSizeBytes: 10n }, content));
    expect(long.reason).toBe("SIZE_MISMATCH");
    expect(await rowsNamed("bad-sha.pdf")).toHaveLength(0);
    expect(await rowsNamed("bad-size.pdf")).toHaveLength(0);
    expect(files("tmp")).toEqual([]);
    expect(files("blobs").length).toBe(blobsBefore);
    // Nothing stored means the name is free for the right bytes.
    expect((await put({ name: "bad-sha.pdf", expectedSha256: sha256(content) }, content)).created).toBe(true);
  });

  it("refuses an upload over ARTIFACT_MAX_BYTES with RESOURCE_EXHAUSTED and stores nothing", async () => {
    const blobsBefore = files("blobs").length;
    const big = await refusal(put({ name: "too-big.bin" }, randomBytes(MAX_BYTES + 1)));
    expect(big.err.code).toBe(Code.ResourceExhausted);
    expect(big.reason).toBe("TOO_LARGE");
    const announced = await refusal(put({ name: "too-big.bin", expectedSizeBytes: BigInt(MAX_BYTES + 1) }, randomBytes(10)));
    expect(announced.reason).toBe("TOO_LARGE");
    expect(await rowsNamed("too-big.bin")).toHaveLength(0);
    expect(files("tmp")).toEqual([]);
    expect(files("blobs").length).toBe(blobsBefore);
    // Exactly at the limit is fine.
    expect((await put({ name: "at-limit.bin" }, randomBytes(MAX_BYTES))).artifact?.sizeBytes).toBe(BigInt(MAX_BYTES));
  });

  it("refuses malformed streams and headers with INVALID_ARGUMENT", async () => {
    async function* chunkFirst(): AsyncIterable<PutInit> {
      yield { part: { case: "chunk", value: new Uint8Array(3) } };
    }
    expect((await refusal(client.putArtifact(chunkFirst()))).err.code).toBe(Code.InvalidArgument);
    async function* twoHeaders(): AsyncIterable<PutInit> {
      yield { part: { case: "header", value: header({ name: "two.pdf" }) } };
      yield { part: { case: "header", value: header({ name: "two.pdf" }) } };
    }
    expect((await refusal(client.putArtifact(twoHeaders()))).err.code).toBe(Code.InvalidArgument);
    expect((await refusal(put({ name: "x.pdf", contentType: "" }, new Uint8Array(1)))).err.code).toBe(Code.InvalidArgument);
    expect((await refusal(put({ name: "x.pdf", contentType: "text/html\r\nX-Evil: 1" }, new Uint8Array(1)))).err.code).toBe(
      Code.InvalidArgument,
    );
    const past = await refusal(
      put({ name: "x.pdf", expiry: { case: "expiresAt", value: { seconds: 1n, nanos: 0 } } } as never, new Uint8Array(1)),
    );
    expect(past.err.code).toBe(Code.InvalidArgument);
    expect(await rowsNamed("x.pdf")).toHaveLength(0);
    expect(await rowsNamed("two.pdf")).toHaveLength(0);
    expect(files("tmp")).toEqual([]);
  });
});

describe("batched puts (PutArtifacts)", () => {
  async function* batchStream(items: { h: HeaderInit; content: Uint8Array }[]): AsyncIterable<PutManyInit> {
    for (const { h, content } of items) {
      yield { part: { case: "header", value: header(h) } };
      for (let i = 0; i < content.length; i += 3) yield { part: { case: "chunk", value: content.subarray(i, i + 3) } };
    }
  }
  const putBatch = (items: { h: HeaderInit; content: Uint8Array }[]) => client.putArtifacts(batchStream(items));

  it("stores every artifact of the stream with its own hash and size, in order; an identical re-send changes nothing", async () => {
    const items = [0, 1, 2].map((i) => ({ h: { jobId: "job_batch", name: `items/${i}.pdf` }, content: randomBytes(10 + i * 7) }));
    const res = await putBatch(items);
    expect(res.results.map((r) => [r.artifact!.name, r.artifact!.sha256, Number(r.artifact!.sizeBytes), r.created])).toEqual(
      items.map((it) => [it.h.name, sha256(it.content), it.content.length, true]),
    );
    for (const [i, r] of res.results.entries()) expect((await get("acme", r.artifact!.id)).content.equals(items[i]!.content)).toBe(true);
    const again = await putBatch(items);
    expect(again.results.map((r) => [r.artifact!.id, r.created])).toEqual(res.results.map((r) => [r.artifact!.id, false]));
    expect((await rowsNamed("items/1.pdf")).filter((r) => r.job_id === "job_batch")).toHaveLength(1);
  });

  it("names the refused artifact (index in the message and ErrorInfo) and still stores the valid ones", async () => {
    await put({ jobId: "job_batch2", name: "taken.pdf" }, Buffer.from("first version"));
    const items = [
      { h: { jobId: "job_batch2", name: "ok-1.pdf" }, content: Buffer.from("one") },
      { h: { jobId: "job_batch2", name: "taken.pdf" }, content: Buffer.from("other bytes") },
      { h: { jobId: "job_batch2", name: "ok-2.pdf" }, content: Buffer.from("two") },
    ];
    const { err, reason } = await refusal(putBatch(items));
    expect(err.code).toBe(Code.AlreadyExists);
    expect(reason).toBe("NAME_TAKEN");
    expect(err.rawMessage).toMatch(/^artifact 1 \("taken.pdf"\)/);
    expect(err.findDetails(ErrorInfoSchema)[0]?.metadata.artifact_index).toBe("1");
    expect(await rowsNamed("ok-1.pdf")).toHaveLength(1);
    expect(await rowsNamed("ok-2.pdf")).toHaveLength(1);
  });

  it("refuses a chunk before any header, an empty stream and more than 100 artifacts, storing nothing", async () => {
    const before = files("blobs").length;
    async function* chunkFirst(): AsyncIterable<PutManyInit> {
      yield { part: { case: "chunk", value: Buffer.from("x") } };
    }
    expect((await refusal(client.putArtifacts(chunkFirst()))).err.rawMessage).toContain("first message must be a header");
    async function* empty(): AsyncIterable<PutManyInit> {}
    expect((await refusal(client.putArtifacts(empty()))).err.code).toBe(Code.InvalidArgument);
    const many = Array.from({ length: 101 }, (_, i) => ({ h: { jobId: "job_many", name: `m${i}.pdf` }, content: Buffer.from(`${i}`) }));
    const tooMany = await refusal(putBatch(many));
    expect(tooMany.err.code).toBe(Code.InvalidArgument);
    expect(tooMany.err.rawMessage).toContain("more than 100 artifacts");
    expect(files("blobs").length).toBe(before);
    expect(await rowsNamed("m0.pdf")).toHaveLength(0);
  });
});

describe("containment", () => {
  const badNames = [
    "../escape.pdf",
    "a/../../escape.pdf",
    "/etc/passwd",
    "..",
    "./a.pdf",
    "a//b.pdf",
    "a/",
    "%2e%2e/escape.pdf",
    "..%2fescape.pdf",
    "a\\..\\escape.pdf",
    "a/.../b",
    "nul\0byte",
    "café.pdf",
    "x".repeat(256),
  ];

  it.each(badNames)("refuses the name %j with INVALID_ARGUMENT/INVALID_NAME", async (name) => {
    const { err, reason } = await refusal(put({ name }, Buffer.from("pwned")));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(reason).toBe("INVALID_NAME");
  });

  it("refuses traversal in the tenant and job id, and nothing was written outside or inside the root", async () => {
    for (const tenant of ["..", ".", "../acme", "a/b", "%2e%2e", ""]) {
      const { err, reason } = await refusal(put({ tenant, name: "ok.pdf" }, Buffer.from("pwned")));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(reason).toBe("INVALID_TENANT");
    }
    for (const jobId of ["../x", "a/b", "%2e%2e"]) {
      expect((await refusal(put({ jobId, name: "ok.pdf" }, Buffer.from("pwned")))).err.code).toBe(Code.InvalidArgument);
    }
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(readdirSync(join(dir, ".."))).not.toContain("escape.pdf");
    expect(await rowsNamed("ok.pdf")).toHaveLength(0);
    expect(files("tmp")).toEqual([]);
  });

  it("never follows a symlink planted under the root, for writes or reads", async () => {
    // A tenant directory that is a symlink to a directory outside the root.
    symlinkSync(outside, join(dir, "blobs", "evil"));
    const write = await refusal(put({ tenant: "evil", name: "planted.pdf" }, Buffer.from("should not land outside")));
    expect(write.err.code).toBe(Code.Internal);
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(await rowsNamed("planted.pdf")).toHaveLength(0);
    expect(files("tmp")).toEqual([]);

    // A stored blob swapped for a symlink to a secret outside the root: neither gRPC nor HTTP serves it.
    const { artifact } = await put({ name: "swapped.pdf" }, Buffer.from("original"));
    const link = await client.createDownloadLink({ tenant: "acme", id: artifact!.id });
    const blob = join(dir, "blobs", "acme", artifact!.id);
    unlinkSync(blob);
    symlinkSync(join(outside, "secret.txt"), blob);
    const read = await refusal(get("acme", artifact!.id));
    expect(read.err.code).toBe(Code.Internal);
    expect(read.err.message).not.toContain("outside the root");
    const http = await httpGet(pathOf(link.url));
    expect(http.status).toBe(500);
    expect(http.body.toString()).not.toContain("outside the root");
  });

  it("answers encoded and raw traversal in download URLs with 404", async () => {
    const { artifact } = await put({ name: "linked.pdf" }, Buffer.from("content"));
    const good = pathOf((await client.createDownloadLink({ tenant: "acme", id: artifact!.id })).url);
    const query = good.slice(good.indexOf("?"));
    for (const path of [
      `/v1/artifacts/acme/../../../../etc/passwd${query}`,
      `/v1/artifacts/..%2f..%2f..%2fetc%2fpasswd/${artifact!.id}${query}`,
      `/v1/artifacts/%2e%2e/${artifact!.id}${query}`,
      `/v1/artifacts/acme/${artifact!.id}/..${query}`,
      `/../${dir}/blobs/acme/${artifact!.id}`,
      `/v1/artifacts/acme/${artifact!.id}%00${query}`,
    ]) {
      const res = await httpGet(path);
      expect(res.status, path).toBe(404);
      expect(res.body.toString()).not.toContain("content");
    }
  });
});

describe("tenant isolation", () => {
  it("answers another tenant's artifact with NOT_FOUND on every read, and 404 on its links", async () => {
    const { artifact } = await put({ tenant: "tenant-a", name: "private.pdf", jobId: "job_9" }, Buffer.from("tenant a only"));
    const id = artifact!.id;
    for (const call of [
      () => get("tenant-b", id),
      () => client.statArtifact({ tenant: "tenant-b", id }),
      () => client.createDownloadLink({ tenant: "tenant-b", id }),
      () => client.createDownloadLinks({ tenant: "tenant-b", ids: [id] }),
    ]) {
      const { err, reason } = await refusal(call);
      expect(err.code).toBe(Code.NotFound);
      expect(reason).toBe("ARTIFACT_NOT_FOUND");
    }
    // Same answer as an id that never existed.
    expect((await refusal(client.statArtifact({ tenant: "tenant-a", id: `art_${"0".repeat(32)}` }))).err.code).toBe(Code.NotFound);
    expect((await client.listArtifacts({ tenant: "tenant-b" })).artifacts).toEqual([]);
    expect((await client.listArtifacts({ tenant: "tenant-b", jobId: "job_9", includeExpired: true })).artifacts).toEqual([]);
    // The same name under tenant b is its own artifact.
    expect((await put({ tenant: "tenant-b", name: "private.pdf", jobId: "job_9" }, Buffer.from("b"))).created).toBe(true);

    const link = pathOf((await client.createDownloadLink({ tenant: "tenant-a", id })).url);
    expect((await httpGet(link)).status).toBe(200);
    expect((await httpGet(link.replace("/tenant-a/", "/tenant-b/"))).status).toBe(404);
  });

  it("lists newest first with page tokens bound to their filters", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await put({ tenant: "lister", jobId: "job_l", name: `f${i}.pdf` }, Buffer.from(`${i}`))).artifact!.id);
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listArtifacts({ tenant: "lister", jobId: "job_l", pageSize: 2, pageToken });
      expect(page.artifacts.length).toBeLessThanOrEqual(2);
      seen.push(...page.artifacts.map((a) => a.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual([...ids].reverse());
    const first = await client.listArtifacts({ tenant: "lister", jobId: "job_l", pageSize: 2 });
    const misuse = await refusal(client.listArtifacts({ tenant: "lister", pageSize: 2, pageToken: first.nextPageToken }));
    expect(misuse.reason).toBe("INVALID_PAGE_TOKEN");
    expect(misuse.err.rawMessage).toContain("page_token");
    const [body, sig] = first.nextPageToken.split(".") as [string, string];
    const moved = JSON.parse(Buffer.from(body, "base64url").toString()) as { k: [number, string] };
    moved.k[0] += 1;
    const tampered = `${Buffer.from(JSON.stringify(moved)).toString("base64url")}.${sig}`;
    const forged = await refusal(client.listArtifacts({ tenant: "lister", jobId: "job_l", pageSize: 2, pageToken: tampered }));
    expect([forged.err.code, forged.reason]).toEqual([Code.InvalidArgument, "INVALID_PAGE_TOKEN"]);
    const widened = await refusal(
      client.listArtifacts({ tenant: "lister", jobId: "job_l", includeExpired: true, pageToken: first.nextPageToken }),
    );
    expect([widened.err.code, widened.reason]).toEqual([Code.InvalidArgument, "INVALID_PAGE_TOKEN"]);
    expect((await refusal(client.listArtifacts({ tenant: "lister", pageToken: "garbage" }))).reason).toBe("INVALID_PAGE_TOKEN");
    const negative = await refusal(client.listArtifacts({ tenant: "lister", pageSize: -1 }));
    expect([negative.err.code, negative.err.rawMessage]).toEqual([Code.InvalidArgument, "page_size must not be negative (got -1)"]);
    expect((await refusal(client.listArtifacts({ tenant: "" }))).reason).toBe("INVALID_TENANT");
  });
});

describe("signed download links", () => {
  it("downloads with Content-Length, Content-Type and ETag = sha256, and refuses tampered links with 404", async () => {
    const content = randomBytes(1_500_000);
    const { artifact } = await put({ name: "download.pdf", jobId: "job_dl" }, content);
    const res = await client.createDownloadLink({ tenant: "acme", id: artifact!.id, ttl: { seconds: 600n, nanos: 0 } });
    expect(res.url.startsWith(`http://127.0.0.1:${httpPort}/v1/artifacts/acme/${artifact!.id}?`)).toBe(true);
    const expiresAt = timestampDate(res.expiresAt!).getTime();
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(expiresAt).toBeGreaterThan(Date.now() + 500_000);

    const ok = await httpGet(pathOf(res.url));
    expect(ok.status).toBe(200);
    expect(ok.headers["content-length"]).toBe(String(content.length));
    expect(ok.headers["content-type"]).toBe("application/pdf");
    expect(ok.headers["etag"]).toBe(`"${sha256(content)}"`);
    expect(ok.headers["content-disposition"]).toBe('attachment; filename="download.pdf"');
    expect(ok.body.equals(content)).toBe(true);
    expect((await httpGet(pathOf(res.url), { "If-None-Match": `"${sha256(content)}"` })).status).toBe(304);

    const u = new URL(res.url);
    const sig = u.searchParams.get("signature")!;
    const flipped = `${sig.slice(0, 10)}${sig[10] === "A" ? "B" : "A"}${sig.slice(11)}`;
    const exp = Number(u.searchParams.get("expires"));
    for (const path of [
      `${u.pathname}?expires=${exp}&signature=${flipped}`,
      `${u.pathname}?expires=${exp + 3600}&signature=${sig}`,
      `${u.pathname}?expires=${exp}`,
      `${u.pathname}?expires=${exp}&signature=${sig}&signature=${sig}`,
      u.pathname,
    ]) {
      const bad = await httpGet(path);
      expect(bad.status, path).toBe(404);
      expect(bad.body.length).toBeLessThan(100);
    }
    expect((await refusal(client.createDownloadLink({ tenant: "acme", id: artifact!.id, ttl: { seconds: 0n, nanos: 0 } }))).err.code).toBe(
      Code.InvalidArgument,
    );
    // Above the maximum is refused, not clamped (docs/decisions/0021-api-conventions.md).
    const tooLong = await refusal(
      client.createDownloadLink({ tenant: "acme", id: artifact!.id, ttl: { seconds: 8n * 86_400n, nanos: 0 } }),
    );
    expect([tooLong.err.code, tooLong.err.rawMessage]).toEqual([Code.InvalidArgument, "ttl must be at most 7 days"]);
    // A link is a bearer credential and the secret signs them: neither may reach the logs.
    const logs = svc.lines.join("\n");
    expect(logs).toContain("artifact downloaded");
    expect(logs).not.toContain(sig);
    expect(logs).not.toContain(envFor().ARTIFACT_LINK_SECRET!);
  });
});

describe("download links in bulk", () => {
  it("signs many links in one call, in request order, each opening its own artifact", async () => {
    const contents = [0, 1, 2].map((i) => Buffer.from(`boleto ${i}`));
    const ids: string[] = [];
    for (const [i, c] of contents.entries()) ids.push((await put({ jobId: "job_bulk", name: `items/${i}.pdf` }, c)).artifact!.id);
    const order = [ids[2]!, ids[0]!, ids[1]!];
    const res = await client.createDownloadLinks({ tenant: "acme", ids: order, ttl: { seconds: 600n, nanos: 0 } });
    expect(res.links.map((l) => l.id)).toEqual(order);
    for (const link of res.links) {
      const body = (await httpGet(pathOf(link.url))).body;
      expect(body.equals(contents[ids.indexOf(link.id)]!)).toBe(true);
      expect(timestampDate(link.expiresAt!).getTime()).toBeLessThanOrEqual(Date.now() + 600_000);
    }
  });

  it("is all or nothing: an unknown, repeated or malformed id, no ids or too many are refused with the id named", async () => {
    const { artifact } = await put({ jobId: "job_bulk2", name: "a.pdf" }, Buffer.from("a"));
    const unknown = `art_${"0".repeat(32)}`;
    const missing = await refusal(client.createDownloadLinks({ tenant: "acme", ids: [artifact!.id, unknown] }));
    expect(missing.err.code).toBe(Code.NotFound);
    expect(missing.err.rawMessage).toContain(unknown);
    expect((await refusal(client.createDownloadLinks({ tenant: "acme", ids: [artifact!.id, "../etc"] }))).err.code).toBe(Code.NotFound);
    const repeated = await refusal(client.createDownloadLinks({ tenant: "acme", ids: [artifact!.id, artifact!.id] }));
    expect(repeated.err.code).toBe(Code.InvalidArgument);
    expect(repeated.err.rawMessage).toContain("repeats");
    expect((await refusal(client.createDownloadLinks({ tenant: "acme", ids: [] }))).err.code).toBe(Code.InvalidArgument);
    const many = Array.from({ length: 1001 }, (_, i) => `art_${i.toString(16).padStart(32, "0")}`);
    const tooMany = await refusal(client.createDownloadLinks({ tenant: "acme", ids: many }));
    expect(tooMany.err.code).toBe(Code.InvalidArgument);
    expect(tooMany.err.rawMessage).toContain("at most 1000");
  });
});

describe("expiry and retention", () => {
  it("answers FAILED_PRECONDITION + ArtifactExpired, keeps metadata as EXPIRED, 410/403 on links, and sweeps the content", async () => {
    const { artifact: shortLived } = await put(
      { name: "short.pdf", expiry: { case: "ttl", value: { seconds: 1n, nanos: 0 } } } as never,
      Buffer.from("soon gone"),
    );
    const { artifact: longLived } = await put({ name: "long.pdf" }, Buffer.from("stays"));
    const shortLink = await client.createDownloadLink({ tenant: "acme", id: shortLived!.id, ttl: { seconds: 3600n, nanos: 0 } });
    // Capped at the artifact's own expiry.
    expect(timestampDate(shortLink.expiresAt!).getTime()).toBeLessThanOrEqual(timestampDate(shortLived!.expiresAt!).getTime());
    const longLink = await client.createDownloadLink({ tenant: "acme", id: longLived!.id, ttl: { seconds: 1n, nanos: 0 } });

    const id = shortLived!.id;
    await until("expiry", async () => (await client.statArtifact({ tenant: "acme", id })).artifact?.state === ArtifactState.EXPIRED);

    const expired = await refusal(get("acme", id));
    expect(expired.err.code).toBe(Code.FailedPrecondition);
    expect(expired.reason).toBe("ARTIFACT_EXPIRED");
    const detail = expired.err.findDetails(ArtifactExpiredSchema)[0];
    expect(detail?.artifactId).toBe(id);
    expect(timestampDate(detail!.expiredAt!).getTime()).toBe(timestampDate(shortLived!.expiresAt!).getTime());
    expect((await refusal(client.createDownloadLink({ tenant: "acme", id }))).err.code).toBe(Code.FailedPrecondition);
    expect((await refusal(client.createDownloadLinks({ tenant: "acme", ids: [longLived!.id, id] }))).err.code).toBe(
      Code.FailedPrecondition,
    );
    const stat = (await client.statArtifact({ tenant: "acme", id })).artifact!;
    expect(stat).toMatchObject({ name: "short.pdf", sha256: shortLived!.sha256, state: ArtifactState.EXPIRED });

    expect((await httpGet(pathOf(shortLink.url))).status).toBe(410);
    await until("link expiry", () => Date.now() > timestampDate(longLink.expiresAt!).getTime() + 50 || undefined);
    expect((await httpGet(pathOf(longLink.url))).status).toBe(403);

    // The sweep (every 0.2 s here) deletes the content and marks the row; the row stays for audit.
    await until("sweep", async () => ((await rowsNamed("short.pdf"))[0]?.["swept_at"] ? true : undefined));
    expect(existsSync(join(dir, "blobs", "acme", id))).toBe(false);
    expect(existsSync(join(dir, "blobs", "acme", longLived!.id))).toBe(true);
    expect((await client.statArtifact({ tenant: "acme", id })).artifact?.state).toBe(ArtifactState.EXPIRED);
    expect((await refusal(get("acme", id))).reason).toBe("ARTIFACT_EXPIRED");
    const visible = (await client.listArtifacts({ tenant: "acme", pageSize: 500 })).artifacts.map((a) => a.id);
    expect(visible).not.toContain(id);
    expect(visible).toContain(longLived!.id);
    const all = (await client.listArtifacts({ tenant: "acme", pageSize: 500, includeExpired: true })).artifacts;
    expect(all.find((a) => a.id === id)?.state).toBe(ArtifactState.EXPIRED);
    // The name stays taken by the expired artifact: a re-upload is told so, not silently accepted.
    expect((await refusal(put({ name: "short.pdf" }, Buffer.from("soon gone")))).reason).toBe("ARTIFACT_EXPIRED");
  });
});

describe("crash safety and replicas", () => {
  it("kill -9 during an upload leaves no visible artifact; after a restart the re-upload succeeds and the leftover temp is swept", async () => {
    // A second replica on the same volume and database: it sees what the first stored.
    const replica = await startService("artifacts", envFor());
    const replicaClient = clientFor(replica);
    const { artifact: before } = await put({ name: "before-crash.pdf" }, Buffer.from("durable"));
    expect((await get("acme", before!.id, {}, replicaClient)).content.toString()).toBe("durable");
    // Replicas share ARTIFACT_PAGE_TOKEN_SECRET: a page token from one continues on the other.
    const older = (await put({ tenant: "paged", name: "a.pdf" }, Buffer.from("a"))).artifact!.id;
    await put({ tenant: "paged", name: "b.pdf" }, Buffer.from("b"));
    const first = await client.listArtifacts({ tenant: "paged", pageSize: 1 });
    const next = await replicaClient.listArtifacts({ tenant: "paged", pageSize: 1, pageToken: first.nextPageToken });
    expect([next.artifacts.map((a) => a.id), next.nextPageToken]).toEqual([[older], ""]);

    const content = randomBytes(3 * 1024 * 1024);
    let sent = 0;
    async function* stalled(): AsyncIterable<PutInit> {
      yield { part: { case: "header", value: header({ tenant: "crash", name: "partial.pdf" }) } };
      for (; sent < 1024 * 1024; sent += CHUNK) yield { part: { case: "chunk", value: content.subarray(sent, sent + CHUNK) } };
      await new Promise(() => undefined); // the rest never comes: the server dies first
    }
    const tmpBefore = new Set(files("tmp"));
    const upload = replicaClient.putArtifact(stalled()).catch((e: unknown) => ConnectError.from(e));
    const partial = await until("a partial temp file", () => {
      const f = files("tmp").find((x) => !tmpBefore.has(x));
      if (!f) return undefined;
      try {
        return readFileSync(join(dir, "tmp", f)).length >= CHUNK ? f : undefined;
      } catch {
        return undefined;
      }
    });
    replica.kill("SIGKILL");
    expect((await replica.exited).signal).toBe("SIGKILL");
    // The client learns the upload failed (the exact code depends on how the connection died).
    expect(await upload).toBeInstanceOf(ConnectError);

    // Nothing visible: no row, nothing listed, nothing under blobs for the tenant.
    expect(await rowsNamed("partial.pdf")).toHaveLength(0);
    expect((await client.listArtifacts({ tenant: "crash", includeExpired: true })).artifacts).toEqual([]);
    expect(existsSync(join(dir, "blobs", "crash"))).toBe(false);

    const restarted = await startService("artifacts", envFor());
    try {
      const c = clientFor(restarted);
      expect((await get("acme", before!.id, {}, c)).content.toString()).toBe("durable");
      const again = await put({ tenant: "crash", name: "partial.pdf", expectedSha256: sha256(content) }, content, c);
      expect(again.created).toBe(true);
      expect((await get("crash", again.artifact!.id, {}, c)).content.equals(content)).toBe(true);

      // The dead upload's temp file is removed once it is stale (made old here instead of waiting an hour).
      expect(existsSync(join(dir, "tmp", partial))).toBe(true);
      const old = new Date(Date.now() - 2 * 3600_000);
      utimesSync(join(dir, "tmp", partial), old, old);
      await until("temp sweep", () => !existsSync(join(dir, "tmp", partial)) || undefined);
    } finally {
      restarted.kill("SIGKILL");
    }
  });

  it("stops on SIGTERM with exit code 0, and exits 78 naming the variable when the link secret is missing", async () => {
    const extra = await startService("artifacts", envFor());
    extra.kill("SIGTERM");
    expect((await extra.exited).code).toBe(0);

    const { ARTIFACT_LINK_SECRET: _secret, ...withoutSecret } = envFor();
    const bad = spawnService("artifacts", { ...EPHEMERAL_ENV, ...withoutSecret });
    expect((await bad.exited).code).toBe(78);
    expect(bad.lines.join("\n")).toContain("config error: ARTIFACT_LINK_SECRET is required");
  });
});
