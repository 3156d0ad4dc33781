import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { StoreDb } from "../repo/context.js";
import { municipalityHandlers } from "./municipalities.js";
import { queryHandlers } from "./queries.js";
import type { PageDecodeLimits } from "./batch-items.js";
import { runHandlers } from "./runs.js";
import { stateHandlers } from "./states.js";

export function createStoreHandlers(db: StoreDb, log: Logger, limits: PageDecodeLimits): Partial<ServiceImpl<typeof StoreService>> {
  return { ...municipalityHandlers(db, log), ...runHandlers(db, limits), ...stateHandlers(db), ...queryHandlers(db) };
}
