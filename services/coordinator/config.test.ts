import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../libs/config/env.js";
import { readCoordinatorConfig } from "./config.js";

describe("coordinator config", () => {
  it("uses seed 000's names, and defaults sized for a fleet", () => {
    const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222" }));
    expect(config).toMatchObject({
      workerConcurrency: 512,
      bootstrapConcurrency: 16,
      syncIntervalMs: 300_000,
      emptyResultBackoffMs: 3_600_000,
      progressEvery: 100,
      staleLockMs: 120 * 60_000,
      adnPageSize: 50,
      shortPageEndRuns: 3,
    });
  });

  it("reads overrides and refuses bad values with one line naming the variable", () => {
    const config = readCoordinatorConfig(
      new EnvReader({ NATS_URL: "nats://n:4222", NFSE_WORKER_CONCURRENCY: "8", NFSE_EMPTY_RESULT_BACKOFF_SECONDS: "3700" }),
    );
    expect(config.workerConcurrency).toBe(8);
    expect(config.emptyResultBackoffMs).toBe(3_700_000);
    expect(() => readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://n:4222", NFSE_WORKER_CONCURRENCY: "0" }))).toThrow(
      new ConfigError("NFSE_WORKER_CONCURRENCY", "must be an integer between 1 and 1024, got 0"),
    );
    expect(() => readCoordinatorConfig(new EnvReader({}))).toThrow(ConfigError);
    expect(readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://n:4222", NFSE_SHORT_PAGE_END_RUNS: "0" })).shortPageEndRuns).toBe(0);
    expect(() => readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://n:4222", NFSE_ADN_PAGE_SIZE: "1001" }))).toThrow(
      new ConfigError("NFSE_ADN_PAGE_SIZE", "must be an integer between 1 and 1000, got 1001"),
    );
  });
});
