// A real local HTTP server playing a tenant's webhook consumer in tests: records every request and
// answers what the test scripts (a status per request, or a hang).
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides the answer to the n-th request (0-based): a status, or "hang" to never answer. */
  respond: (n: number) => number | "hang";
  close(): Promise<void>;
}

export async function startReceiver(respond: Receiver["respond"] = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: (() => void)[] = [];
  const r: Receiver = { url: "", received, respond, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = r.respond(n);
      if (answer === "hang") {
        hanging.push(() => res.destroy());
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  r.url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/hooks/billing`;
  r.close = async () => {
    for (const h of hanging) h();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return r;
}
