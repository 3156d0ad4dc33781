import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

describe("logger", () => {
  it("redacts secrets at any of the first levels of a logged object", () => {
    let out = "";
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const log = createLogger({ service: "vault", destination });
    log.info(
      {
        password: "pw-top",
        request: { pfx: "pfx-bytes", senha: "pw-pt", ibge: "3550308" },
        call: { headers: { authorization: "Bearer tok-123" } },
        credentials: { privateKeyPem: "-----BEGIN PRIVATE KEY-----" },
      },
      "import",
    );
    const line = JSON.parse(out.trim());
    expect(out).not.toMatch(/pw-top|pfx-bytes|pw-pt|tok-123|BEGIN PRIVATE KEY/);
    expect(line.password).toBe("[redacted]");
    expect(line.request.ibge).toBe("3550308");
    expect(line.service).toBe("vault");
    expect(line.level).toBe("info");
  });
});
