import { describe, expect, it } from "vitest";
import { CENSOR, censorSecrets } from "./redact.js";

const SECRETS = new Set(["token", "senha"]);

describe("censorSecrets", () => {
  it("returns an object with nothing to censor as it is, not a copy", () => {
    const line = { feed: "3550308/DISTRIBUICAO", run: { items: 50, cursor: "1234" }, list: [1, 2] };
    expect(censorSecrets(line, SECRETS)).toBe(line);
  });

  it("censors the first three levels, copying only the objects on the way", () => {
    const untouched = { ibge: "3550308" };
    const line = { token: "t1", a: { senha: "s2", keep: untouched }, b: { c: { token: "t3" } }, d: { e: { f: { token: "deep" } } } };
    const out = censorSecrets(line, SECRETS);
    expect(out.token).toBe(CENSOR);
    expect(out.a.senha).toBe(CENSOR);
    expect(out.b.c.token).toBe(CENSOR);
    // The fourth level is beyond what is walked (the same depth pino's paths `*.*.key` reached).
    expect(out.d.e.f.token).toBe("deep");
    expect(out.a.keep).toBe(untouched);
    expect(out.d).toBe(line.d);
    expect(line.token).toBe("t1");
    expect(line.a.senha).toBe("s2");
  });

  it("walks arrays and leaves values written through toJSON, and absent secrets, alone", () => {
    const when = new Date(0);
    const out = censorSecrets({ list: [{ token: "x" }, { ok: 1 }], when, token: undefined }, SECRETS);
    expect(out.list[0]).toEqual({ token: CENSOR });
    expect(Array.isArray(out.list)).toBe(true);
    expect(out.when).toBe(when);
    expect(out.token).toBeUndefined();
  });
});
