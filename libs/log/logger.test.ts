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

describe("logger redaction beyond the plain object", () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    let raw = "";
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        raw += chunk.toString();
        for (const l of chunk.toString().trim().split("\n")) lines.push(JSON.parse(l));
        cb();
      },
    });
    return { destination, lines, raw: () => raw };
  }

  it("censors an error's own secret fields and keeps its type, message and stack", () => {
    const { destination, lines, raw } = capture();
    const log = createLogger({ service: "vault", destination });
    const err = Object.assign(new TypeError("vault refused"), { token: "tok-err", detail: { senha: "pw-err", ibge: "3550308" } });
    log.error({ err, feed: "3550308" }, "failed");
    log.error(err);
    expect(raw()).not.toMatch(/tok-err|pw-err/);
    for (const line of lines) {
      const e = line.err as Record<string, unknown>;
      expect(e.type).toBe("TypeError");
      expect(e.message).toBe("vault refused");
      expect(String(e.stack)).toContain("vault refused");
      expect(e.token).toBe("[redacted]");
      expect((e.detail as Record<string, unknown>).ibge).toBe("3550308");
    }
    expect(lines[0]!.feed).toBe("3550308");
  });

  it("censors inside arrays and in a child logger's bindings, and leaves the caller's objects as they were", () => {
    const { destination, lines, raw } = capture();
    const log = createLogger({ service: "coordinator", destination });
    const request = { items: [{ apiKey: "key-in-array", nsu: 7 }], ibge: "3550308" };
    log.child({ call: { authorization: "Bearer child-secret" }, feed: "f1" }).info(request, "call");
    expect(raw()).not.toMatch(/key-in-array|child-secret/);
    expect(lines[0]!.feed).toBe("f1");
    expect((lines[0]!.call as Record<string, unknown>).authorization).toBe("[redacted]");
    expect((lines[0]!.items as Record<string, unknown>[])[0]!.nsu).toBe(7);
    expect(request.items[0]!.apiKey).toBe("key-in-array");
  });
});
