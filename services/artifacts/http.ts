// Plain HTTP downloads for consumers that do not speak gRPC. Answers: 200 with the content; 404 for
// anything not a validly signed link to an existing artifact of that tenant (contract: a bad signature is
// indistinguishable from a missing artifact); 410 for an expired artifact; 403 for a genuine link whose own
// expiry has passed. The request URL is a bearer credential: it is never logged.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Logger } from "../../libs/log/logger.js";
import { READ_CHUNK_BYTES } from "./handlers.js";
import type { LinkSigner } from "./links.js";
import { isExpired, type ArtifactMetadataStore } from "./metadata.js";
import type { BlobStore } from "./storage/blob-store.js";

export interface DownloadDeps {
  signer: LinkSigner;
  meta: ArtifactMetadataStore;
  blobs: BlobStore;
  log: Logger;
  now?: () => Date;
}

export interface DownloadServer {
  port: number;
  close(): Promise<void>;
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text) + 1),
    "Cache-Control": "no-store",
    ...extra,
  });
  res.end(`${text}\n`);
}

/** The last path segment as a download filename; names are [A-Za-z0-9._-] per segment, so it needs no escaping. */
const fileName = (name: string) => name.slice(name.lastIndexOf("/") + 1);

export function downloadHandler(deps: DownloadDeps) {
  const clock = deps.now ?? (() => new Date());
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      plain(res, 405, "method not allowed", { Allow: "GET, HEAD" });
      return;
    }
    const claims = deps.signer.verify(req.url ?? "");
    if (!claims) {
      plain(res, 404, "not found");
      return;
    }
    const record = await deps.meta.get(claims.tenant, claims.id);
    if (!record) {
      plain(res, 404, "not found");
      return;
    }
    const now = clock();
    if (isExpired(record, now)) {
      plain(res, 410, `artifact expired at ${record.expiresAt.toISOString()}`);
      return;
    }
    if (claims.expiresSec * 1000 <= now.getTime()) {
      plain(res, 403, "download link expired; ask for a new one");
      return;
    }
    const etag = `"${record.sha256}"`;
    const headers = {
      "Content-Type": record.contentType,
      ETag: etag,
      // Private: the URL carries the credential, shared caches must not keep the content.
      "Cache-Control": "private, no-store",
      "Content-Disposition": `attachment; filename="${fileName(record.name)}"`,
      // The content type is the uploader's word: never let a browser run it on our origin.
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "sandbox; default-src 'none'",
    };
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    // Asked for HEAD too: it proves the content is there (read opens the file only when iterated).
    const content = await deps.blobs.read(record.storageKey, { offset: 0 }, READ_CHUNK_BYTES);
    res.writeHead(200, { ...headers, "Content-Length": record.sizeBytes.toString() });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    await pipeline(Readable.from(content), res);
    deps.log.info({ artifactId: record.id, tenant: record.tenant, bytes: record.sizeBytes.toString() }, "artifact downloaded");
  };
}

export async function startDownloadServer(deps: DownloadDeps, host: string, port: number): Promise<DownloadServer> {
  const handle = downloadHandler(deps);
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.log.error({ err }, "download failed");
      if (!res.headersSent) plain(res, 500, "internal error");
      else res.destroy();
    });
  });
  // Slow-loris bounds; a download itself may take as long as the client needs.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
