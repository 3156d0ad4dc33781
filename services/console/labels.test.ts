import { describe, expect, it } from "vitest";
import type { DecisionView, FeedView } from "./api-types.js";
import { describeDecision, describeState, formatInstant, summarizeSync } from "./labels.js";

const TZ = "America/Sao_Paulo";
const now = new Date("2026-12-01T16:00:00Z"); // 13:00 in São Paulo
const decision = (over: Partial<DecisionView>): DecisionView => ({
  ibge: "3550308",
  ambiente: "producao_restrita",
  tipoNsu: "distribuicao",
  accepted: false,
  ...over,
});

describe("console labels", () => {
  it("names the one-hour rule with the local time it lifts", () => {
    expect(describeDecision(decision({ reason: "not_eligible", notBefore: "2026-12-01T17:05:00Z" }), now, TZ)).toBe(
      "aguardando até 14:05 — regra de 1 hora do ADN",
    );
  });

  it("adds the date when the instant is on another day", () => {
    expect(formatInstant("2026-12-02T17:05:00Z", now, TZ)).toBe("02/12 14:05");
  });

  it("explains a cool-down and a lease held elsewhere", () => {
    expect(describeDecision(decision({ reason: "cooling_down", notBefore: "2026-12-01T16:30:00Z" }), now, TZ)).toMatch(
      /^em resfriamento até 13:30 — .*429/,
    );
    expect(describeDecision(decision({ reason: "lease_held", leaseHolder: "coord-2" }), now, TZ)).toBe("já em execução por coord-2");
  });

  it("says nothing for an accepted feed", () => {
    expect(describeDecision(decision({ accepted: true }), now, TZ)).toBe("");
  });

  it("shows until when a waiting feed becomes eligible", () => {
    const feed = { state: "waiting", nextEligibleAt: "2026-12-01T17:05:00Z" } as FeedView;
    expect(describeState(feed, now, TZ)).toBe("aguardando até 14:05");
    expect(describeState({ ...feed, state: "running" }, now, TZ)).toBe("em execução");
  });

  it("counts in Portuguese", () => {
    expect(summarizeSync(1, 0)).toBe("1 feed na fila, 0 feeds recusados");
    expect(summarizeSync(2, 1)).toBe("2 feeds na fila, 1 feed recusado");
  });
});
