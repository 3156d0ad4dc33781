// Who may call the store: every method is open to the mesh, whose network is the boundary (the
// coordinator, the gateway, danfse and the console reach it). A new method is refused at start until it
// is added here. docs/decisions/0022-authentication-interceptor.md.
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { AccessTable } from "../../libs/rpc/auth/access.js";

export const storeAccess: AccessTable<typeof StoreService> = {
  registerMunicipality: "public",
  listMunicipalities: "public",
  getMunicipality: "public",
  updateMunicipality: "public",
  beginRun: "public",
  beginRuns: "public",
  applyBatch: "public",
  applyBatches: "public",
  finishRun: "public",
  finishRuns: "public",
  requestRunCancellation: "public",
  getSyncState: "public",
  listSyncStates: "public",
  resetCursor: "public",
  listCursorResets: "public",
  findNsuGaps: "public",
  recordConfirmedHoles: "public",
  listQuarantine: "public",
  expireStaleRuns: "public",
  purgeRunLogs: "public",
  listRuns: "public",
  getRun: "public",
  getDocument: "public",
  batchGetDocuments: "public",
  listDocuments: "public",
  listEvents: "public",
};
