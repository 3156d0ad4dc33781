import * as http from "node:http";
import * as http2 from "node:http2";
import type { connectNodeAdapter } from "@connectrpc/connect-node";

type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  /** When set, clients must present a certificate signed by this CA (mTLS). */
  clientCa?: Buffer;
}

export interface Listener {
  readonly server: http2.Http2Server | http2.Http2SecureServer;
  readonly sessions: Set<http2.ServerHttp2Session>;
}

/**
 * One port for every protocol. With TLS, ALPN picks HTTP/2 (gRPC, gRPC-Web, Connect) or HTTP/1.1
 * (gRPC-Web, Connect/JSON for plain HTTP clients). Without TLS it is h2c with prior knowledge: Node's
 * HTTP/2 session reads the socket natively, so a plaintext port cannot also sniff for HTTP/1.1
 * without pushing every byte through a JavaScript stream.
 */
export function createListener(handler: NodeHandlerFn, tls: TlsFiles | undefined): Listener {
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = tls
    ? http2.createSecureServer(
        {
          cert: tls.cert,
          key: tls.key,
          allowHTTP1: true,
          minVersion: "TLSv1.2",
          ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
        },
        handler,
      )
    : http2.createServer({}, handler);
  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return { server, sessions };
}

/**
 * The plaintext HTTP/1.1 listener (HTTP1_PORT): Connect/JSON and gRPC-Web for curl and browsers, which
 * cannot speak h2c with prior knowledge. A port of its own instead of sniffing the h2c port, so the
 * HTTP/2 port keeps Node's native session reading. gRPC itself needs HTTP/2 and is refused here.
 */
export function createHttp1Listener(handler: NodeHandlerFn): http.Server {
  // Requests are bounded by the handler (readMaxBytes, deadlines); keep-alive lets a browser reuse it.
  return http.createServer({ keepAlive: true }, handler);
}
