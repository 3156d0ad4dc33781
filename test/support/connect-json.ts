// A raw Connect-protocol JSON call over h2c: the body is sent exactly as written, so tests can send what a
// typed client never would (misspelt fields, out-of-range enum numbers) and read the error as JSON.
import { connect } from "node:http2";

export interface ConnectJsonResult {
  status: number;
  body: { code?: string; message?: string } & Record<string, unknown>;
}

export function connectJson(baseUrl: string, path: string, body: string): Promise<ConnectJsonResult> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.once("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json", "connect-protocol-version": "1" });
    let status = 0;
    const chunks: Buffer[] = [];
    req.on("response", (h) => (status = Number(h[":status"])));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", reject);
    req.on("end", () => {
      session.close();
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve({ status, body: JSON.parse(text) as ConnectJsonResult["body"] });
      } catch {
        reject(new Error(`not JSON (HTTP ${status}): ${text.slice(0, 200)}`));
      }
    });
    req.end(body);
  });
}
