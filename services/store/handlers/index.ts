import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { StoreMetrics } from "../metrics.js";
import type { PageDecoder } from "../page-decoder.js";
import type { StoreDb } from "../repo/context.js";
import { municipalityHandlers } from "./municipalities.js";
import { queryHandlers } from "./queries.js";
import { runHandlers } from "./runs.js";
import { stateHandlers } from "./states.js";

export function createStoreHandlers(
  db: StoreDb,
  log: Logger,
  decoder: PageDecoder,
  metrics?: StoreMetrics,
): Partial<ServiceImpl<typeof StoreService>> {
  return { ...municipalityHandlers(db, log), ...runHandlers(db, decoder, metrics), ...stateHandlers(db), ...queryHandlers(db) };
}
