// `node docker/healthcheck.js [port] [service]`: exit 0 when grpc.health.v1 Check answers SERVING.
// For compose and systemd (Kubernetes probes gRPC natively). No dependencies: one HTTP/2 request with a
// hand-encoded HealthCheckRequest, because grpc_health_probe is not in the image.
import { connect } from "node:http2";
import { fileURLToPath } from "node:url";

const TIMEOUT_MS = 3000;
const SERVING = 1;

function encodeRequest(service) {
  const name = Buffer.from(service, "utf8");
  // Field 1 (string): tag 0x0a, length as a varint; names stay far below 128 bytes in this mesh.
  const message = name.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, name.length]), name]);
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** The `status` field (1, varint) of a HealthCheckResponse; 0 (UNKNOWN) when absent. */
export function decodeStatus(body) {
  if (body.length < 5) return undefined;
  const message = body.subarray(5, 5 + body.readUInt32BE(1));
  for (let i = 0; i < message.length; ) {
    const tag = message[i++];
    let value = 0;
    for (let shift = 0; i < message.length; shift += 7) {
      const byte = message[i++];
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
    }
    if (tag === 0x08) return value;
  }
  return 0;
}

export function check({ host = "127.0.0.1", port, service = "", tls = false }) {
  return new Promise((resolve) => {
    const session = connect(`${tls ? "https" : "http"}://${host}:${port}`, { rejectUnauthorized: false });
    const done = (status) => {
      clearTimeout(timer);
      session.close();
      resolve(status);
    };
    const timer = setTimeout(() => {
      session.destroy();
      resolve(undefined);
    }, TIMEOUT_MS);
    session.on("error", () => done(undefined));
    const req = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("error", () => done(undefined));
    req.on("end", () => done(decodeStatus(Buffer.concat(chunks))));
    req.end(encodeRequest(service));
  });
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const port = Number(process.argv[2] ?? process.env.GRPC_PORT);
  if (!Number.isInteger(port) || port <= 0) {
    process.stderr.write("healthcheck: give the port as an argument or in GRPC_PORT\n");
    process.exit(2);
  }
  const status = await check({ port, service: process.argv[3] ?? "", tls: Boolean(process.env.TLS_CERT_FILE) });
  process.stdout.write(`${status === SERVING ? "SERVING" : `not serving (${status ?? "no answer"})`}\n`);
  process.exit(status === SERVING ? 0 : 1);
}
