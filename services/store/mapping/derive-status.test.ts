import { describe, expect, it } from "vitest";
import { deriveStatus } from "./derive-status.js";

const ev = (codigo: string, chaveSubstituta: string | null = null) => ({ codigo, chaveSubstituta });

describe("deriveStatus", () => {
  it("follows adn.md §5.3", () => {
    expect(deriveStatus([])).toEqual({ situacao: "ATIVA", chaveSubstituta: null });
    expect(deriveStatus([ev("202201")]).situacao).toBe("ATIVA");
    for (const c of ["101101", "105104", "305101"]) expect(deriveStatus([ev(c)]).situacao).toBe("CANCELADA");
    expect(deriveStatus([ev("105102", "9".repeat(50))])).toEqual({ situacao: "SUBSTITUIDA", chaveSubstituta: "9".repeat(50) });
    expect(deriveStatus([ev("101103")]).situacao).toBe("ANALISE_PENDENTE");
    expect(deriveStatus([ev("105105"), ev("101103")]).situacao).toBe("ATIVA");
    expect(deriveStatus([ev("101103"), ev("105105"), ev("101103")]).situacao).toBe("ANALISE_PENDENTE");
    expect(deriveStatus([ev("101103"), ev("105104")]).situacao).toBe("CANCELADA");
  });

  it("does not depend on the order the events arrived in", () => {
    const events = [ev("101103"), ev("202201"), ev("105102", "1".repeat(50)), ev("101101")];
    expect(deriveStatus([...events].reverse())).toEqual(deriveStatus(events));
  });
});
