// The simulator's admin endpoint: plain HTTP on loopback, JSON in and out, for tests, the quickstart and
// benchmarks to flip switches and read call counters of a running simulator.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { sendJson } from "./responses.js";
import type { AdnSimulator } from "./server.js";
import type { SimSwitches } from "./switches.js";

/**
 * GET  /admin/counters            call counters
 * GET  /admin/switches            current switches
 * POST /admin/switches            merge a JSON object into the switches
 * POST /admin/reset               switches to their start values, counters to zero
 * POST /admin/append              {"ibge","tipoNSU","count"}: documents reach the ADN now
 * GET  /admin/feeds/{ibge}/{tipo} size, last NSU, holes and hidden NSUs of a feed
 */
export function createAdminServer(sim: AdnSimulator): Server {
  return createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const send = (status: number, body: unknown) =>
      sendJson(res, status, JSON.parse(JSON.stringify(body, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))) as object);
    readBody(req).then(
      (text) => {
        let input: Record<string, unknown> = {};
        try {
          input = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          return send(400, { error: "body is not JSON" });
        }
        if (req.method === "GET" && path === "/admin/counters") return send(200, sim.counters());
        if (req.method === "GET" && path === "/admin/switches") return send(200, sim.switches);
        if (req.method === "POST" && path === "/admin/switches") return send(200, sim.configure(input as Partial<SimSwitches>));
        if (req.method === "POST" && path === "/admin/reset") return (sim.reset(), send(200, { ok: true }));
        if (req.method === "POST" && path === "/admin/append") {
          const feed = sim.feed(String(input.ibge), String(input.tipoNSU ?? "DISTRIBUICAO"));
          const added = feed.append(Number(input.count ?? 1));
          return send(200, { added: added.length, lastNsu: feed.lastNsu() });
        }
        const f = /^\/admin\/feeds\/(\d{7})\/([A-Z]+)$/.exec(path);
        if (req.method === "GET" && f) {
          const feed = sim.feed(f[1]!, f[2]!);
          return send(200, {
            size: feed.entries.length,
            lastNsu: feed.lastNsu(),
            holes: [...feed.holes],
            hidden: feed.entries.filter((e) => e.hidden).map((e) => e.nsu),
          });
        }
        return send(404, { error: "unknown admin route" });
      },
      () => send(400, { error: "unreadable body" }),
    );
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
