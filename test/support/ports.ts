import { createServer } from "node:net";
import { MESH } from "../../libs/rpc/mesh.js";

// The mesh's documented ports lie in Linux's ephemeral range; handing one to a test server while the
// quickstart test runs the mesh on its defaults would make that test fail for no reason of its own.
const MESH_PORTS = new Set<number>(Object.values(MESH).flatMap((s) => [s.port, s.metricsPort]));

/** A TCP port free on loopback right now (for servers whose CLI needs a port number up front). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (!MESH_PORTS.has(port)) return port;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
